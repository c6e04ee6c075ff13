"""`bddgen demo`: the whole pipeline offline on a shipped corpus, with a report comparing two assistants."""

from __future__ import annotations

from pathlib import Path

import click

from bddgen.corpus import demo_corpus_names
from bddgen.demo import DEMO_CORPUS, Demo, DemoSizes

DEFAULT_SIZES = DemoSizes()


@click.command()
@click.option("--out", "out", type=click.Path(file_okay=False, path_type=Path), default=Path("bddgen-demo"), show_default=True,
              help="Project folder the demo creates (or continues in).")
@click.option("--corpus", type=click.Choice(demo_corpus_names() or [DEMO_CORPUS]), default=DEMO_CORPUS, show_default=True,
              help="Shipped demo corpus.")
@click.option("--m", "m", type=click.IntRange(min=1), default=DEFAULT_SIZES.m, show_default=True, help="Candidate specs to generate.")
@click.option("--k", "k", type=click.IntRange(min=1), default=DEFAULT_SIZES.k, show_default=True, help="Specs in the suite, the kept example spec included.")
@click.option("--n", "n", type=click.IntRange(min=1), default=DEFAULT_SIZES.n, show_default=True, help="Conversations per spec.")
@click.option("--turns", type=click.IntRange(min=3), default=DEFAULT_SIZES.turns, show_default=True, help="Turns per conversation (L).")
@click.option("--model", default=DEFAULT_SIZES.model, show_default=True,
              help="bddgen's embedded model (writes specs and conversations, judges): qwen2.5-coder-1.5b or qwen2.5-coder-0.5b.")
@click.option("--assistant-model", default=DEFAULT_SIZES.assistant_model, show_default=True,
              help="The embedded model the reference assistants run on.")
def demo(out: Path, corpus: str, m: int, k: int, n: int, turns: int, model: str, assistant_model: str) -> None:
    """Run generate → select → implement → run (dense-rag and self-rag; react-rag is configured for
    `bddgen run --assistant react-rag`) → report on a shipped corpus, offline with the embedded models,
    and print where the HTML report is.

    The default sizes take about 10 minutes on 2 idle CPU cores (9.5 measured). Running it
    again in the same folder reuses what is done (candidates, features, finished conversations, LM
    cache); sizes apply when the folder is created (edit its bddgen.toml afterwards).
    """
    sizes = DemoSizes(m=m, k=k, n=n, turns=turns, model=model, assistant_model=assistant_model)
    Demo(out, corpus=corpus, sizes=sizes).run()
