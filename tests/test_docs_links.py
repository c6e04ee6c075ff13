"""The README and the documentation site stay navigable: every relative link and anchor resolves,
every page is in the site's nav and reachable by links from the index, every schema is documented,
and the README's two commands are the ones CI runs."""

from __future__ import annotations

import re
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
DOCS = ROOT / "docs"
README = ROOT / "README.md"
MAX_README_LINES = 250

FENCE = re.compile(r"^\s*(```|~~~)")
INLINE_CODE = re.compile(r"`[^`]*`")
LINK = re.compile(r"(?<!!)\[(?:[^\[\]]|\[[^\]]*\])*\]\(([^)\s]+)(?:\s+\"[^\"]*\")?\)")
HEADING = re.compile(r"^(#{1,6})\s+(.*?)\s*#*\s*$")
NAV_PAGE = re.compile(r"^\s*-\s+(?:[^:]+:\s+)?([\w./-]+\.md)\s*$")


def prose_lines(text: str) -> list[tuple[int, str]]:
    """(line number, line) outside fenced code blocks."""
    lines, fenced = [], False
    for number, line in enumerate(text.splitlines(), start=1):
        if FENCE.match(line):
            fenced = not fenced
            continue
        if not fenced:
            lines.append((number, line))
    return lines


def links(text: str) -> list[tuple[int, str]]:
    """(line number, target) of every Markdown link outside code."""
    return [(number, m.group(1)) for number, line in prose_lines(text) for m in LINK.finditer(INLINE_CODE.sub("", line))]


def slug(heading: str) -> str:
    """GitHub's anchor for a heading (the site uses the same rule: pymdownx.slugs.slugify, lower case)."""
    text = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", heading)
    text = re.sub(r"<[^>]+>", "", text).replace("`", "").replace("*", "")
    text = re.sub(r"[^\w\- ]", "", text.strip().lower())
    return text.replace(" ", "-")


def anchors(path: Path) -> set[str]:
    """Every heading anchor of a Markdown file, with GitHub's -1, -2 suffixes for repeats."""
    seen: dict[str, int] = {}
    found = set()
    for _, line in prose_lines(path.read_text(encoding="utf-8")):
        match = HEADING.match(line)
        if not match:
            continue
        base = slug(match.group(2))
        count = seen.get(base, 0)
        seen[base] = count + 1
        found.add(base if count == 0 else f"{base}-{count}")
    return found


def broken_links(path: Path) -> list[str]:
    problems = []
    for number, target in links(path.read_text(encoding="utf-8")):
        if re.match(r"^[a-z][a-z0-9+.-]*:", target):  # http:, https:, mailto:
            continue
        file_part, _, anchor = target.partition("#")
        resolved = (path.parent / file_part).resolve() if file_part else path
        where = f"{path.relative_to(ROOT)}:{number}: {target}"
        if not resolved.exists():
            problems.append(f"{where}: {resolved.relative_to(ROOT) if resolved.is_relative_to(ROOT) else resolved} does not exist")
        elif anchor and resolved.suffix == ".md" and anchor not in anchors(resolved):
            problems.append(f"{where}: no heading with anchor #{anchor} in {resolved.relative_to(ROOT)}")
    return problems


def markdown_files() -> list[Path]:
    return [README, ROOT / "CONTRIBUTING.md", *sorted(DOCS.glob("*.md"))]


@pytest.mark.parametrize("path", markdown_files(), ids=lambda p: str(p.relative_to(ROOT)))
def test_every_relative_link_and_anchor_resolves(path: Path) -> None:
    assert broken_links(path) == []


def test_the_link_check_catches_a_missing_file_and_a_missing_anchor(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(sys.modules[__name__], "ROOT", tmp_path)
    (tmp_path / "a.md").write_text("# Title\n\n## Two words\n", encoding="utf-8")
    page = tmp_path / "b.md"
    page.write_text(
        "[ok](a.md#two-words) [gone](missing.md) [bad](a.md#three) `[code](missing.md)`\n"
        "```\n[fenced](missing.md)\n```\n[web](https://example.org/x)\n",
        encoding="utf-8",
    )
    problems = broken_links(page)
    assert len(problems) == 2
    assert "missing.md does not exist" in problems[0]
    assert "#three" in problems[1]


def test_headings_get_githubs_anchors() -> None:
    assert slug("From your assistant's description to a failure-rate report") == "from-your-assistants-description-to-a-failure-rate-report"
    assert slug("Settings of `[lm]` and `[judge]`") == "settings-of-lm-and-judge"
    assert slug("LLM task replies (`schemas/tasks/`)") == "llm-task-replies-schemastasks"


def test_readme_is_short() -> None:
    lines = README.read_text(encoding="utf-8").splitlines()
    assert len(lines) <= MAX_README_LINES, f"README.md has {len(lines)} lines; move detail into docs/"


def nav_pages() -> list[str]:
    text = (ROOT / "mkdocs.yml").read_text(encoding="utf-8")
    nav = text[text.index("\nnav:") :]
    return [m.group(1) for line in nav.splitlines() if (m := NAV_PAGE.match(line))]


def test_every_docs_page_is_in_the_site_nav_and_every_nav_page_exists() -> None:
    pages = nav_pages()
    on_disk = sorted(p.name for p in DOCS.glob("*.md"))
    assert sorted(set(on_disk) - set(pages)) == [], "add these pages to the nav in mkdocs.yml"
    assert sorted(set(pages) - set(on_disk)) == [], "the nav in mkdocs.yml names pages that do not exist"


def reachable_pages(start: Path) -> set[Path]:
    """The pages of docs/ that links lead to from `start`, page by page, `start` included."""
    found, todo = set(), [start.resolve()]
    while todo:
        page = todo.pop()
        if page in found:
            continue
        found.add(page)
        for _, target in links(page.read_text(encoding="utf-8")):
            file_part = target.partition("#")[0]
            if file_part and not re.match(r"^[a-z][a-z0-9+.-]*:", target):
                linked = (page.parent / file_part).resolve()
                if linked.suffix == ".md" and linked.parent == DOCS.resolve() and linked.is_file():
                    todo.append(linked)
    return found


def test_every_docs_page_is_reachable_from_the_index() -> None:
    reached = reachable_pages(DOCS / "index.md")
    unreached = sorted(p.name for p in DOCS.glob("*.md") if p.resolve() not in reached)
    assert unreached == [], "link these pages from docs/index.md or from a page it leads to"


def test_the_reach_check_follows_links_page_by_page(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(sys.modules[__name__], "DOCS", tmp_path)
    (tmp_path / "index.md").write_text("[a](a.md#top) [web](https://example.org/b.md)\n```\n[fenced](c.md)\n```\n", encoding="utf-8")
    (tmp_path / "a.md").write_text("[b](./b.md) [back](index.md)\n", encoding="utf-8")
    for name in ("b.md", "c.md"):
        (tmp_path / name).write_text("# Page\n", encoding="utf-8")
    assert sorted(p.name for p in reachable_pages(tmp_path / "index.md")) == ["a.md", "b.md", "index.md"]


def test_every_schema_file_is_documented() -> None:
    documented = "\n".join(p.read_text(encoding="utf-8") for p in DOCS.glob("*.md"))
    schemas = sorted(p.name for p in (ROOT / "schemas").rglob("*.schema.json"))
    missing = [name for name in schemas if name not in documented]
    assert missing == [], "describe these schemas in docs/formats.md"


def ci_commands() -> tuple[str, str]:
    """The extras CI installs and the test command it runs, read from .ci/run."""
    script = (ROOT / ".ci" / "run").read_text(encoding="utf-8")
    install = re.search(r'pip install -e "(\.\[[^\]]+\])"', script)
    test = re.search(r"^(python -m pytest[^|\n]*?)\s*(?:2>&1)?\s*\|", script, re.M)
    assert install and test, ".ci/run no longer has a `pip install -e` line and a `python -m pytest` line"
    return install.group(1), test.group(1).strip()


def test_readme_runs_the_tests_the_way_ci_does() -> None:
    extras, test_command = ci_commands()
    readme = README.read_text(encoding="utf-8")
    assert f'pip install -e "{extras}" && {test_command}' in readme
