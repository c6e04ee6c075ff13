"""The one LM boundary: every LLM call of every stage goes through `LanguageModel`."""

from bddgen.lm.base import LMBackend, LMRequest, LMResponse, Message, TokenUsage
from bddgen.lm.client import LanguageModel
from bddgen.lm.tasks import PromptTask

__all__ = ["LMBackend", "LMRequest", "LMResponse", "Message", "TokenUsage", "LanguageModel", "PromptTask"]
