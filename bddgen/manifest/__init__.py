"""The workflow manifest (agents.yaml): the agents of an assistant, their tools, what each may never call and
whom each may hand over to (`workflow.py`), and where a project keeps it (`project.py`)."""
