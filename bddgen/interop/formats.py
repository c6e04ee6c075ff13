"""Conversations in each evaluation tool's own dataset format.

- ragas: an EvaluationDataset of MultiTurnSample (JSONL, `EvaluationDataset.from_jsonl`): the
  reference conversation as human and AI messages, the reference answers as `reference`, the cited
  documents' titles as `reference_topics`. MultiTurnSample has no field for contexts, so
- ragas-single: one SingleTurnSample per answerable turn, with `reference_contexts` and
  `reference_context_ids`;
- deepeval: ConversationalGolden objects (JSON list, `EvaluationDataset.add_goldens_from_json_file`);
- promptfoo: a YAML list of test cases (`tests: file://promptfoo-tests.yaml` in a promptfoo config), one
  test per turn, grouped by `metadata.conversationId`;
- jsonl: bddgen's own format, one ExportedConversation per line.
"""

from __future__ import annotations

import json
from typing import Any, Callable

import yaml

from bddgen.interop.model import ExportedConversation, ExportedTurn

CANNOT_ANSWER_REFERENCE = "The assistant says it cannot answer this from its documents."
"""How a tool that compares answers reads bddgen's CANNOTANSWER."""


def reference_text(turn: ExportedTurn) -> str:
    return turn.reference_answer if turn.answerable else CANNOT_ANSWER_REFERENCE


def _numbered_references(conversation: ExportedConversation) -> str:
    return "\n".join(f"Turn {n}: {reference_text(turn)}" for n, turn in enumerate(conversation.turns, 1))


def _metadata(conversation: ExportedConversation) -> dict[str, Any]:
    return {
        "bddgen_conversation": conversation.id,
        "bddgen_spec": conversation.spec_id,
        "feature": conversation.feature,
        "chain": conversation.chain,
        "query_types": [turn.query_type.value for turn in conversation.turns],
    }


def ragas_multi_turn(conversations: list[ExportedConversation]) -> list[dict[str, Any]]:
    samples = []
    for conversation in conversations:
        messages: list[dict[str, str]] = []
        for turn in conversation.turns:
            messages.append({"content": turn.question, "type": "human"})
            messages.append({"content": reference_text(turn), "type": "ai"})
        topics = list(dict.fromkeys(doc for turn in conversation.turns for doc in turn.reference_context_ids))
        samples.append({"user_input": messages, "reference": _numbered_references(conversation), "reference_topics": topics})
    return samples


def ragas_single_turn(conversations: list[ExportedConversation]) -> list[dict[str, Any]]:
    return [
        {
            "user_input": turn.question,
            "reference": turn.reference_answer,
            "reference_contexts": turn.reference_contexts,
            "reference_context_ids": turn.reference_context_ids,
        }
        for conversation in conversations
        for turn in conversation.turns
        if turn.answerable
    ]


def deepeval_goldens(conversations: list[ExportedConversation]) -> list[dict[str, Any]]:
    goldens = []
    for conversation in conversations:
        turns: list[dict[str, Any]] = []
        for turn in conversation.turns:
            turns.append({"role": "user", "content": turn.question})
            assistant: dict[str, Any] = {"role": "assistant", "content": reference_text(turn)}
            if turn.reference_contexts:
                assistant["retrieval_context"] = turn.reference_contexts
            turns.append(assistant)
        context = list(dict.fromkeys(text for turn in conversation.turns for text in turn.reference_contexts))
        goldens.append(
            {
                "scenario": conversation.scenario,
                "expected_outcome": f"{conversation.expected_outcome}. Reference answers:\n{_numbered_references(conversation)}",
                "turns": turns,
                "context": context or None,
                "name": conversation.title,
                "additional_metadata": _metadata(conversation),
            }
        )
    return goldens


def _promptfoo_asserts(turn: ExportedTurn) -> list[dict[str, Any]]:
    if not turn.answerable:
        return [{"type": "llm-rubric", "value": "The answer says it cannot answer the question from the available information."}]
    asserts: list[dict[str, Any]] = [{"type": "factuality", "value": turn.reference_answer}]
    if turn.exact is not None:
        asserts.insert(0, {"type": "icontains", "value": turn.exact.value})
    return asserts


def promptfoo_tests(conversations: list[ExportedConversation]) -> list[dict[str, Any]]:
    return [
        {
            "description": f"{conversation.title} — turn {number} ({turn.query_type.value})",
            "vars": {"question": turn.question, "context": "\n\n".join(turn.reference_contexts)},
            "assert": _promptfoo_asserts(turn),
            "metadata": {"conversationId": conversation.id, "turn": number, "spec": conversation.spec_id},
        }
        for conversation in conversations
        for number, turn in enumerate(conversation.turns, 1)
    ]


def _jsonl(rows: list[dict[str, Any]]) -> str:
    return "".join(json.dumps(row, ensure_ascii=False) + "\n" for row in rows)


Renderer = Callable[[list[ExportedConversation]], tuple[str, int]]


def _render_promptfoo(conversations: list[ExportedConversation]) -> tuple[str, int]:
    tests = promptfoo_tests(conversations)
    header = "# bddgen conversations, one promptfoo test per turn (turns of one conversation share metadata.conversationId).\n"
    header += "# Use from your promptfooconfig.yaml, next to your prompts and providers:  tests: file://promptfoo-tests.yaml\n"
    return header + yaml.safe_dump(tests, allow_unicode=True, sort_keys=False, width=100), len(tests)


def _rows(build: Callable[[list[ExportedConversation]], list[dict[str, Any]]], as_json: bool = False) -> Renderer:
    def render(conversations: list[ExportedConversation]) -> tuple[str, int]:
        rows = build(conversations)
        text = json.dumps(rows, ensure_ascii=False, indent=2) + "\n" if as_json else _jsonl(rows)
        return text, len(rows)

    return render


FORMATS: dict[str, tuple[Renderer, str]] = {
    "ragas": (_rows(ragas_multi_turn), "ragas.jsonl"),
    "ragas-single": (_rows(ragas_single_turn), "ragas-single.jsonl"),
    "deepeval": (_rows(deepeval_goldens, as_json=True), "deepeval.json"),
    "promptfoo": (_render_promptfoo, "promptfoo-tests.yaml"),
    "jsonl": (_rows(lambda cs: [c.model_dump(mode="json", exclude_none=True) for c in cs]), "conversations.jsonl"),
}
"""Format name -> (renderer giving the text and its sample count, default file name)."""
