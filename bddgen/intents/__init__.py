"""Intent integrity: partition each tool parameter into VALID / INVALID / UNDERSPEC classes, write a
seed task per class, mutate it while keeping its intent, and find where an agent misreads users."""
