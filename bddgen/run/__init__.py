"""Run stage: assistant adapters, reference assistants, the judge, per-turn results and the behave glue.

Import the submodules you need; this package imports nothing heavy (no behave, no models) on its own.
"""
