"""The generated suite's failure rate beside that of human questions, on the same assistant and judge.

In a TAT-QA project that `bench_validity.py --keep DIR` built (its `.feature` files hold the generated
conversations), this writes `features/human-baseline.feature`: `--n` of the development set's human
questions (a seeded sample), each a one-turn hand-written, `@locked` conversation whose reference is the
human answer with its scale. Each question says which report it is about ("In report 01, …"), as the
human asker had that report in front of them. Then `bddgen run -a ASSISTANT` runs the generated suite and
the human one, and the failure rates of their answerable turns (the spec-level check left out) are printed
side by side, per query type, with 95% Wilson intervals.

    python benchmarks/bench_human_baseline.py DIR/tatqa [--devsets ../shared/devsets] [--n 20] [--assistant dense-rag] [--json]
"""

from __future__ import annotations

import argparse
import json
import math
import random
import sys
from collections import Counter
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_validity import bddgen  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
HUMAN_FEATURE = "human-baseline.feature"


def reference(record: dict[str, Any]) -> str:
    """The human answer as a sentence's worth of text: spans joined, the scale after a number."""
    answer = record["answer"]
    text = "; ".join(str(a) for a in answer) if isinstance(answer, list) else str(answer)
    scale = str(record.get("scale") or "")
    return f"{text} {scale}".strip() if scale and scale != "percent" else (f"{text}%" if scale == "percent" else text)


def write_human_feature(project: Path, devsets: Path, n: int, seed: int) -> int:
    """The human questions' feature file; how many questions it holds."""
    from bddgen.features.document import FeatureDocument
    from bddgen.features.writer import write_feature
    from bddgen.specs import Conversation, QueryType, Spec, Turn

    records = [json.loads(line) for line in (devsets / "tatqa" / "human_questions.jsonl").read_text(encoding="utf-8").splitlines() if line.strip()]
    chosen = sorted(random.Random(seed).sample(range(len(records)), min(n, len(records))))
    spec = Spec.create(
        "Human questions on report excerpts", ["an analyst reading an annual report excerpt"],
        ["the analyst asks a question of the kind analysts ask"], ["the assistant should answer from the report excerpt"],
        source="hand-written",
    )
    conversations = []
    for number in chosen:
        record = records[number]
        report = record["context"].split("-")[-1]
        question = f"In report {report}, {record['question'][:1].lower()}{record['question'][1:]}"
        turn = Turn(question=question, answer=reference(record), query_type=QueryType.SINGLE_DOC, doc_ids=[f"tables/{record['context']}"])
        conversations.append(Conversation(id=f"human-{number:03d}", title=f"Human question {number} ({record['answer_type']}, {record['answer_from']})",
                                          turns=[turn], locked=True, hand_written=True))
    path = project / "features" / HUMAN_FEATURE
    write_feature(path, FeatureDocument(spec=spec, conversations=conversations, path=str(path)), allow_edited=True)
    return len(conversations)


def failure_rates(run_folder: Path) -> dict[str, Any]:
    """Failed share of the answerable turns of one run (the spec-level turn 0 left out), overall and per type."""
    records = [json.loads(line) for line in (run_folder / "results.jsonl").read_text(encoding="utf-8").splitlines() if line.strip()]
    turns = [r for r in records if r.get("turn", 0) > 0 and r.get("query_type") != "UNANSWERABLE"]
    failed = Counter(r.get("query_type") for r in turns if r.get("verdict") != "PASS")
    total = Counter(r.get("query_type") for r in turns)
    share = sum(failed.values()) / len(turns) if turns else 0.0
    return {"turns": len(turns), "failed": sum(failed.values()), "failure_rate": round(share, 3), "interval": wilson(sum(failed.values()), len(turns)),
            "per_type": {kind: f"{failed[kind]}/{count}" for kind, count in sorted(total.items())}}


def wilson(successes: int, total: int, z: float = 1.96) -> list[float]:
    if not total:
        return [0.0, 1.0]
    p = successes / total
    centre = (p + z * z / (2 * total)) / (1 + z * z / total)
    half = z * math.sqrt(p * (1 - p) / total + z * z / (4 * total * total)) / (1 + z * z / total)
    return [round(max(0.0, centre - half), 3), round(min(1.0, centre + half), 3)]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("project", type=Path, help="a TAT-QA project built by bench_validity.py --keep")
    parser.add_argument("--devsets", type=Path, default=ROOT.parent / "shared" / "devsets")
    parser.add_argument("--n", type=int, default=20, help="human questions sampled")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--assistant", default="dense-rag")
    parser.add_argument("--json", action="store_true")
    options = parser.parse_args()
    project = options.project.resolve()
    asked = write_human_feature(project, options.devsets, options.n, options.seed)
    generated = [str(p) for p in sorted((project / "features").glob("*.feature")) if p.name != HUMAN_FEATURE]
    results: dict[str, Any] = {}
    for label, paths in (("generated", generated), ("human", [str(project / "features" / HUMAN_FEATURE)])):
        run_id = f"baseline-{label}-{options.assistant}"
        bddgen(["run", *paths, "-a", options.assistant, "--run-id", run_id], project, {})
        results[label] = failure_rates(project / "runs" / run_id)
    results["human"]["questions"] = asked
    if options.json:
        print(json.dumps(results, indent=1))
        return
    print(f"{'':12}{'turns':>8}{'failed':>8}{'rate':>8}  95% interval   per type")
    for label, figures in results.items():
        print(f"{label:12}{figures['turns']:>8}{figures['failed']:>8}{figures['failure_rate']:>8}  {figures['interval']}   {figures['per_type']}")


if __name__ == "__main__":
    main()
