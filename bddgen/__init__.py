"""bddgen: behaviour-driven test suites for information-seeking AI assistants."""

__version__ = "0.1.0"
