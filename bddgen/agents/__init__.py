"""Tool-using agents: the workflow manifest and the structural coverage of a suite over it."""
