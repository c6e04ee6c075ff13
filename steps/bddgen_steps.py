"""bddgen's step library (the logic lives in the bddgen package)."""

from bddgen.run.behave_steps import *  # noqa: F401,F403
