"""A runnable bddgen project for robustness tests: behave glue, a fake assistant and a scripted judge."""

from __future__ import annotations

import contextlib
import io
import os
import subprocess
import sys
from pathlib import Path

import yaml

from bddgen.cli import main
from bddgen.features.document import FeatureDocument
from bddgen.features.writer import write_feature
from bddgen.specs import Conversation, QueryType, Spec, Turn

JUDGE_HOOK = '''
from bddgen.evaluation.scripted import scripted_judge


def backend():
    return scripted_judge(lambda response, expected: False)
'''
SETTINGS = """
[run]
assistant = "scripted"
timeout = 5
retries = 0

[assistants.scripted]
kind = "fake"
script = "fake.yaml"

[judge]
backend = "scripted"
model = "judge_hook:backend"
"""


def write_run_project(
    root: Path, conversations: int = 2, answer: str = "Lisbon", latency: float = 0.0, corpus: Path | None = None, title: str = "Bases"
) -> Path:
    """A project with one spec of `conversations` two-turn conversations; the fake assistant
    answers every question with `answer` (the scripted judge fails every turn)."""
    (root / "steps").mkdir(parents=True)
    (root / "steps" / "bddgen_steps.py").write_text("from bddgen.run.behave_steps import *  # noqa: F401,F403\n")
    (root / "environment.py").write_text("from bddgen.run.behave_environment import *  # noqa: F401,F403\n")
    (root / "behave.ini").write_text("[behave]\npaths = features\n")
    corpus_settings = f'corpus = "{corpus.as_posix()}"\n[embedder]\nbackend = "hashing"\n[ner]\nbackend = "regex"\n' if corpus else ""
    (root / "bddgen.toml").write_text(corpus_settings + SETTINGS)
    (root / "judge_hook.py").write_text(JUDGE_HOOK)
    (root / "fake.yaml").write_text(yaml.safe_dump({"latency": latency, "default": {"answer": answer}}, allow_unicode=True))
    spec = Spec.create(title, ["a passenger"], ["they ask about bases"], ["the assistant answers"], source="hand-written")
    turns = [
        Turn(question="Where is the second base?", answer="Lisbon", query_type=QueryType.SINGLE_DOC),
        Turn(question="And the main hub?", answer="Copenhagen", query_type=QueryType.SINGLE_DOC),
    ]
    convs = [Conversation(id=f"c{n}", title=f"{title} conversation {n}", turns=turns) for n in range(conversations)]
    write_feature(root / "features" / "bases.feature", FeatureDocument(spec=spec, conversations=convs))
    return root


def bddgen_process(root: Path, *arguments: str) -> subprocess.Popen[str]:
    """A real `bddgen` process in `root` (this checkout's code first on the path)."""
    env = {**os.environ, "COLUMNS": "200"}
    return subprocess.Popen(
        [sys.executable, "-c", "from bddgen.cli import main; main()", *arguments],
        cwd=root, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
    )


def run_bddgen(root: Path, *arguments: str, timeout: float = 300) -> tuple[int, str]:
    """Run `bddgen ARGUMENTS` in `root` to the end: (exit code, stdout and stderr)."""
    process = bddgen_process(root, *arguments)
    output, _ = process.communicate(timeout=timeout)
    return process.returncode, output


def invoke(root: Path, *arguments: str) -> tuple[int, str]:
    """`bddgen ARGUMENTS` in this process, as the console script runs it: (exit code, output).
    An exception bddgen does not turn into a message propagates (a test then fails on it)."""
    output = io.StringIO()
    previous = Path.cwd()
    os.chdir(root)
    try:
        with contextlib.redirect_stdout(output), contextlib.redirect_stderr(output):
            try:
                main(list(arguments))
                code = 0
            except SystemExit as exc:
                code = exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 2)
    finally:
        os.chdir(previous)
    return code, output.getvalue()
