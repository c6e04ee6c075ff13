"""Output formats of a Report: terminal, Markdown, JSON, CSV and a self-contained HTML page."""
