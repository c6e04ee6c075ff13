"""A `write_spec` reply that follows the prompt's focus and material: the scripted LM's spec writer.

Tests and offline runs with `bddgen.lm.scripted.ScriptedLM` use it so their drafts pass the
checks for the right reason: they name the Subject and the columns, policy or rows the Material
gives, as a capable model would.
"""

from __future__ import annotations

import itertools
import re
from typing import Callable

from bddgen.lm.base import LMRequest
from bddgen.text import words


def prompt_section(request: LMRequest, name: str) -> str:
    """One "## Name" section of the prompt, or "" when it has none."""
    found = re.search(rf"^## {name}\n(.*?)(?=\n\n## |\Z)", request.messages[-1].content, re.DOTALL | re.MULTILINE)
    return found.group(1) if found else ""


def draft_following_prompt(request: LMRequest, number: int) -> dict[str, object]:
    """The `number`-th draft, about the prompt's Subject and Material (a different column each time)."""
    subject, material = prompt_section(request, "Subject"), prompt_section(request, "Material")
    fields = dict(line.split(": ", 1) for line in material.splitlines() if ": " in line)
    if "The assistant must refuse" in fields:
        return {
            "title": f"Declined request {number} about {subject}", "given": [f"the user is curious about {subject}"],
            "when": [f"the user asks for something off limits about {subject}"], "then": ["the assistant should decline the request"],
        }
    if "Policy" in fields:
        return {
            "title": subject, "given": ["the user is travelling next week"], "when": [f"the user asks how the {subject} rules apply"],
            "then": [f"the assistant should explain the {subject} policy"],
        }
    row = fields.get("Row 1") or fields.get("Row") or fields.get("Sample row")
    if row is not None:
        cells = [cell.split(": ", 1) for cell in row.split("; ") if ": " in cell]
        compared = re.search(r" on (\w+)\.$", material)
        column = (compared.group(1) if compared else cells[number % len(cells)][0]).replace("_", " ")
        name = cells[0][1] if "Sample row" in fields else subject
        return {
            "title": f"{column} of {name}", "given": [f"the user is looking at {name}"], "when": [f"the user asks for the {column} of {name}"],
            "then": [f"the assistant should give the {column} of {subject}"],
        }
    opening = fields.get("It begins", "")
    found = [w for w in words(opening, digits=False) if len(w) >= 5] or ["record"]
    word = found[number % len(found)]
    return {
        "title": f"{subject} and its {word}", "given": [f"the user is reading about {subject}"],
        "when": [f"the user asks what the documents say of the {word} of {subject}"],
        "then": [f"the assistant should describe the {word} of {subject}"],
    }


def drafts_following_prompts() -> Callable[[LMRequest], dict[str, object]]:
    """A reply function for the `write_spec` task that numbers its drafts 0, 1, 2, ..."""
    counter = itertools.count()
    return lambda request: draft_following_prompt(request, next(counter))


def draft_by_prompt(request: LMRequest) -> dict[str, object]:
    """The draft for the prompt, numbered by its hash: the same reply to the same prompt in whatever order calls come
    (drafts written by concurrent jobs)."""
    return draft_following_prompt(request, int(request.prompt_hash(), 16) % 1000)
