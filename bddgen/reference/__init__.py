"""Reference assistants shipped as baselines: dense-rag (chunk retrieval + LM), react-rag (LM-driven search),
self-rag, and airline-agent (a tool-using agent over the airline corpus, `airline/`)."""
