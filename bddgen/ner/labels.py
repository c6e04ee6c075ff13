"""The one entity-label vocabulary every recogniser returns (spaCy's OntoNotes names, shortened)."""

from __future__ import annotations

PERSON = "PERSON"
ORG = "ORG"
GPE = "GPE"
LOC = "LOC"
FAC = "FAC"
NORP = "NORP"
DATE = "DATE"
TIME = "TIME"
EVENT = "EVENT"
WORK = "WORK"
PRODUCT = "PRODUCT"
LAW = "LAW"
LANGUAGE = "LANGUAGE"
MONEY = "MONEY"
QUANTITY = "QUANTITY"
PERCENT = "PERCENT"
CARDINAL = "CARDINAL"
ORDINAL = "ORDINAL"
ID = "ID"  # codes and identifiers: flight numbers, booking references, row ids

LABELS: frozenset[str] = frozenset(
    {PERSON, ORG, GPE, LOC, FAC, NORP, DATE, TIME, EVENT, WORK, PRODUCT, LAW, LANGUAGE,
     MONEY, QUANTITY, PERCENT, CARDINAL, ORDINAL, ID}
)

_ALIASES = {
    "WORK_OF_ART": WORK,
    "PER": PERSON,
    "PEOPLE": PERSON,
    "ORGANISATION": ORG,
    "ORGANIZATION": ORG,
    "PLACE": GPE,
    "LOCATION": LOC,
    "FACILITY": FAC,
    "TIME_INTERVAL": DATE,
    "INTERVAL": DATE,
    "PERIOD": DATE,
    "IDENTIFIER": ID,
    "CODE": ID,
}


def normalise_label(raw: str) -> str | None:
    """The vocabulary label for a recogniser's own label, or None when it has no counterpart."""
    key = raw.strip().upper().replace(" ", "_").replace("-", "_")
    if key in LABELS:
        return key
    return _ALIASES.get(key)
