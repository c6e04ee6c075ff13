"""Qualifying the judge on the project's own verified turns (`bddgen judge check`)."""

from bddgen.judging.qualify import JudgeCheck, false_fail_warning, read_check

__all__ = ["JudgeCheck", "false_fail_warning", "read_check"]
