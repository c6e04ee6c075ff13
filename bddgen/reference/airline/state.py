"""The state of an airline-agent conversation: its database copy, each table under its key column."""

from __future__ import annotations

from bddgen.reference.airline.database import TABLES
from bddgen.state_diff import ROWID
from bddgen.table_keys import table_key
from bddgen.errors import ConfigError
from bddgen.models import Corpus, TableDocument

EXTRA_BAGS_KEY = ROWID
"""extra_bags holds one row per bag and two bags of one booking may be alike: keyed by row id."""


def state_keys(corpus: Corpus) -> dict[str, str]:
    """table -> key spec for every table of the airline database (see `bddgen.table_keys`)."""
    tables = {d.id: d for d in corpus.documents if isinstance(d, TableDocument)}
    missing = [name for name in TABLES if f"tables/{name}" not in tables]
    if missing:
        raise ConfigError(
            f"airline-agent needs the tables {', '.join(missing)} of the airline corpus; point the project's corpus at "
            "the airline demo corpus (`bddgen init --corpus airline`)"
        )
    keys = {name: table_key(tables[f"tables/{name}"]) for name in TABLES}
    keys["extra_bags"] = EXTRA_BAGS_KEY
    return keys

