"""`bddgen review --export DIR`: the review page as one static, read-only HTML file (data and the LM
calls that wrote each turn inside), for attaching to a pull request."""

from __future__ import annotations

from pathlib import Path

from bddgen.files import atomic_write
from bddgen.review.actions import Reviewer
from bddgen.review.render import page_html
from bddgen.review.server import logged_calls

EXPORT_FILE = "index.html"


def export_page(reviewer: Reviewer, folder: Path) -> Path:
    suite = reviewer.view()
    hashes = {t.prompt_hash for s in suite.specs for c in s.conversations for t in c.turns if t.prompt_hash}
    calls = {h: logged_calls(reviewer, h)[:1] for h in sorted(hashes)}
    suite = suite.model_copy(update={"read_only": True, "calls": {h: c for h, c in calls.items() if c}})
    target = folder / EXPORT_FILE
    atomic_write(target, page_html(suite))
    return target
