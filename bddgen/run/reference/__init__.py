"""Reference assistants shipped as baselines: dense-rag (chunk retrieval + LM) and react-rag (LM-driven search)."""
