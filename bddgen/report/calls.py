"""Which LM call wrote each conversation: the prompt hashes of implement's provenance sidecars,
resolved to their prompt and reply in the project's call log."""

from __future__ import annotations

from pathlib import Path

from bddgen.errors import InputError
from bddgen.features.reader import feature_files
from bddgen.implement.provenance import ConversationProvenance, provenance_path, read_provenance
from bddgen.lm.store import CallStore
from bddgen.report.model import ConversationCall


def conversation_calls(features_path: Path) -> list[ConversationCall]:
    """The calls the sidecars under the folder record: one per written turn (numbered as in the
    .feature file), or one for the whole conversation when its turns carry no hash of their own.
    Damaged sidecars are skipped."""
    found: list[ConversationCall] = []
    for path in feature_files([features_path]) if features_path.is_dir() else []:
        try:
            provenance = read_provenance(provenance_path(path))
        except InputError:
            continue
        if provenance is None:
            continue
        for conversation in provenance.conversations:
            found += _calls_of(provenance.spec_id, conversation)
    return found


def _calls_of(spec_id: str, conversation: ConversationProvenance) -> list[ConversationCall]:
    kept = [turn for turn in conversation.turns if turn.outcome == "kept"]
    if any(turn.prompt_hash for turn in kept):
        return [
            ConversationCall(spec_id=spec_id, conversation_id=conversation.conversation_id, turn=number,
                             prompt_hash=turn.prompt_hash, model=conversation.model)
            for number, turn in enumerate(kept, start=1)
            if turn.prompt_hash
        ]
    if not conversation.prompt_hash:
        return []
    return [ConversationCall(spec_id=spec_id, conversation_id=conversation.conversation_id,
                             prompt_hash=conversation.prompt_hash, model=conversation.model)]


def with_prompts_and_replies(calls: list[ConversationCall], lm_db: Path) -> list[ConversationCall]:
    """The calls with the prompt and reply of their latest successful logged call, where the log has one."""
    if not calls or not lm_db.is_file():
        return calls
    store = CallStore(lm_db)
    try:
        resolved = []
        for call in calls:
            logged = [c for c in store.prompt_calls(call.prompt_hash) if not c.failed and c.messages is not None]
            if logged:
                latest = logged[0]
                call = call.model_copy(update={"messages": latest.messages, "reply": latest.reply or ""})
            resolved.append(call)
        return resolved
    finally:
        store.close()
