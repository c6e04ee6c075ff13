"""A small assistant package for the static scan's tests (never imported by them)."""
