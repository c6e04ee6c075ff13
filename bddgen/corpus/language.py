"""The language a corpus is written in: given in system.yaml (`language: fr`), else detected.

Detection uses langdetect (a port of Google's language-detection, profiles shipped in the
package, no network) on a sample of the corpus's prose, seeded so it repeats.
"""

from __future__ import annotations

from typing import Sequence

from bddgen.models import PolicyDocument, TableDocument, TextDocument

SAMPLE_CHARACTERS = 20_000  # not a setting: bounds detection time, the answer is stable well below it
"""Prose read for detection: enough for a stable answer, little enough to stay fast on big corpora."""
DETECTION_SEED = 0  # not [seed]: a corpus's detected language must not change with the run's seed
UNKNOWN = ""


def _sample(documents: Sequence[TextDocument | TableDocument | PolicyDocument]) -> str:
    prose = [d.as_text() for d in documents if not isinstance(d, TableDocument)]
    if not prose:  # a corpus of tables only: titles, descriptions and a few rows
        prose = [d.as_text(max_rows=20) for d in documents if isinstance(d, TableDocument)]
    sample, size = [], 0
    for text in prose:
        sample.append(text[: SAMPLE_CHARACTERS - size])
        size += len(sample[-1])
        if size >= SAMPLE_CHARACTERS:
            break
    return "\n".join(sample)


def detect_language(documents: Sequence[TextDocument | TableDocument | PolicyDocument]) -> str:
    """ISO 639-1 code of the documents' language ('en', 'de', 'fr', ...); '' when it cannot tell."""
    text = _sample(documents)
    if not text.strip():
        return UNKNOWN
    try:
        from langdetect import DetectorFactory, detect
        from langdetect.lang_detect_exception import LangDetectException
    except ImportError:
        return UNKNOWN
    DetectorFactory.seed = DETECTION_SEED
    try:
        return detect(text).split("-")[0]
    except LangDetectException:
        return UNKNOWN
