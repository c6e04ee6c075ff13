"""Outcome-verified agent tasks: chosen by code, expected end state computed on a scratch copy."""
