"""Which LM call wrote each conversation: the prompt hashes of implement's provenance sidecars,
resolved to their prompt and reply in the project's call log."""

from __future__ import annotations

from pathlib import Path

from bddgen.errors import InputError
from bddgen.features.reader import feature_files
from bddgen.implement.provenance import provenance_path, read_provenance
from bddgen.lm.store import CallStore
from bddgen.report.model import ConversationCall


def conversation_calls(features_path: Path) -> list[ConversationCall]:
    """Every conversation recorded in the sidecars under the folder, with its prompt hash (damaged sidecars skipped)."""
    found: list[ConversationCall] = []
    for path in feature_files([features_path]) if features_path.is_dir() else []:
        try:
            provenance = read_provenance(provenance_path(path))
        except InputError:
            continue
        if provenance is None:
            continue
        found += [
            ConversationCall(
                spec_id=provenance.spec_id,
                conversation_id=conversation.conversation_id,
                prompt_hash=conversation.prompt_hash,
                model=conversation.model,
            )
            for conversation in provenance.conversations
            if conversation.prompt_hash
        ]
    return found


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
