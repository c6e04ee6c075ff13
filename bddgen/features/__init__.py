"""The .feature format: the step vocabulary, the reader and the writer."""
