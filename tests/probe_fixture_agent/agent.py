"""The assistant: a prompt, conversation memory, tool calls and a broad exception handler."""

from .tools import TOOLS, shipping_status

SYSTEM_PROMPT = "You are the shop's support assistant. Answer from the order records only and never invent an order."


class SupportAgent:
    def __init__(self, llm):
        self.llm = llm
        self.history = []

    def respond(self, messages):
        self.last_question = messages[-1]
        try:
            plan = self.llm(SYSTEM_PROMPT, messages)
        except (TimeoutError, ConnectionError):
            return "Sorry, try again later."
        except Exception:
            return "Something went wrong."
        if plan["tool"] == "status":
            return shipping_status(plan["tracking"])
        result = TOOLS[plan["tool"]]({}, plan["args"])
        self.history.append(result)
        return str(result)
