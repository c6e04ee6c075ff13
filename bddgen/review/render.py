"""The review page's HTML: one file with its stylesheet and script inlined (shipped in the package,
nothing fetched from the network). A static export carries the suite's data in the page itself."""

from __future__ import annotations

import json
from importlib import resources

from bddgen.review.page import SuiteView


def _asset(name: str) -> str:
    return resources.files("bddgen.review").joinpath("assets", name).read_text(encoding="utf-8")


def page_html(suite: SuiteView | None) -> str:
    """The page; with `suite` it is a read-only export that needs no server."""
    data = ""
    if suite is not None:
        payload = json.dumps(suite.model_dump(mode="json"), ensure_ascii=False).replace("<", "\\u003c")
        data = f'<script id="suite-data" type="application/json">{payload}</script>'
    return (
        _asset("review.html")
        .replace("/*STYLE*/", _asset("review.css"))
        .replace("<!--DATA-->", data)
        .replace("/*SCRIPT*/", _asset("review.js"))
    )
