"""One module per CLI command group; cli.py only finds and dispatches them."""
