"""`bddgen demo`: the whole pipeline offline on a shipped corpus, with a report comparing two assistants."""

from __future__ import annotations

from pathlib import Path

import click

from bddgen.config import CONFIG_FILE, ImplementSettings, load_settings
from bddgen.console import console
from bddgen.corpus import demo_corpus_names
from bddgen.demo import COMPARED_ASSISTANTS, DEMO_CORPUS, Demo, DemoSizes
from bddgen.lm.speed import PROBE_TOKENS, probe_speed
from bddgen.pipeline import Models
from bddgen.project import Project

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

    Before it starts, it times a short generation of bddgen's model and says how long the demo will
    take on this machine (about 9 minutes on 2 idle CPU cores). Running it again in the same folder
    reuses what is done (candidates, features, finished conversations, LM cache); sizes apply when
    the folder is created (edit its bddgen.toml afterwards).
    """
    sizes = DemoSizes(m=m, k=k, n=n, turns=turns, model=model, assistant_model=assistant_model)
    say_how_long(out, sizes)
    Demo(out, corpus=corpus, sizes=sizes).run()


def say_how_long(out: Path, sizes: DemoSizes) -> None:
    """Time a short generation of the demo's model (logged in the demo folder's call log) and print the demo's time
    it gives: its LM calls (`demo_calls`) x `demo_tokens_per_call` tokens each, at the tokens per second measured."""
    existing = (out / CONFIG_FILE).is_file()
    project = Project.discover(out) if existing else Project(root=out.resolve(), settings=load_settings(None, overrides=sizes.settings()))
    settings = project.settings
    console.print(f"Timing this machine: {PROBE_TOKENS} tokens from {settings.lm.model} ...", markup=False)
    speed = probe_speed(Models(project).lm, stage="demo")
    minutes = demo_calls(sizes, settings.implement) * settings.demo_tokens_per_call / speed.tokens_per_second / 60
    console.print(
        f"This demo will take about {max(1, round(minutes))} minutes on this machine (the engine generates {speed.tokens_per_second:.1f} "
        f"tokens/s){'; less, as this folder has work done already' if existing else ''}.",
        markup=False, soft_wrap=True,
    )


def demo_calls(sizes: DemoSizes, implement: ImplementSettings) -> int:
    """The LM calls the demo makes, about, from its sizes: one draft per candidate spec; for each turn of the
    generated specs' conversations, `turn_attempts` writes on each of `turn_evidence` pieces of evidence; for each
    turn of every spec's conversations, each compared assistant's calls per answer; one judgement per conversation."""
    answer_calls = {
        "dense-rag": 1,
        "react-rag": sizes.react_steps + 1,  # a tool step each, then the answer
        "self-rag": 1 + 3 * sizes.self_rag_attempts,  # whether to retrieve; per round, grade passages, answer, grade support
    }
    generated_turns = max(0, sizes.k - sizes.examples) * sizes.n * sizes.turns
    conversations = sizes.k * sizes.n
    return (
        sizes.m
        + generated_turns * implement.turn_attempts * implement.turn_evidence
        + sum(conversations * sizes.turns * answer_calls[name] + conversations for name in COMPARED_ASSISTANTS)
    )
