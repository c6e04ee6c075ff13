"""The trajectory step phrases the regression scenarios are written with (one place to change them)."""

from __future__ import annotations

CALLS_WITH = 'the agent should call "{tool}" with "{argument}" equal to "{value}"'
DOES_NOT_CALL = 'the agent should not call "{tool}"'
