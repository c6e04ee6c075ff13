"""behave hooks of bddgen (the logic lives in the bddgen package)."""

from bddgen.run.behave_environment import *  # noqa: F401,F403
