"""The actions a manifest's tool effects allow, read against an agent's database: the user's own values from the
target row (or the row it names by key), the values they may want from other rows, the schema's examples; and the
problems of an effect the manifest or the database cannot answer."""

from __future__ import annotations

from pathlib import Path

import pytest

from bddgen.config import TasksSettings
from bddgen.corpus import load_corpus
from bddgen.errors import InputError
from bddgen.manifest.workflow import parse_manifest, read_manifest
from bddgen.reference.airline.world import AIRLINE_WORLD
from bddgen.reference.order_desk.workflow import order_desk_manifest
from bddgen.reference.order_desk.world import ORDER_DESK_WORLD
from bddgen.tasks.actions import ActionSpace
from bddgen.tasks.candidates import Scratch
from bddgen.tasks.world import AgentWorld

ROOT = Path(__file__).resolve().parents[1]
AIRLINE = ROOT / "bddgen" / "data" / "corpora" / "airline"
STORE = ROOT / "bddgen" / "reference" / "order_desk" / "corpus"


def _space(world: AgentWorld, corpus: Path, manifest_data: dict | None = None) -> ActionSpace:
    scratch = Scratch(world, load_corpus(corpus))
    manifest = read_manifest(corpus / "agents.yaml") if manifest_data is None else parse_manifest(manifest_data, "agents.yaml")
    return ActionSpace(manifest, "agents.yaml", scratch.template, scratch.keys, TasksSettings().choices)


def test_the_shipped_order_desk_manifest_is_the_workflow_its_code_runs() -> None:
    assert read_manifest(STORE / "agents.yaml") == order_desk_manifest()


def test_a_chosen_value_is_never_the_targets_own_and_the_first_are_of_every_degree_of_likeness() -> None:
    space = _space(AIRLINE_WORLD, AIRLINE)
    flights = {row["flight_number"]: row for row in space.rows("flights")[1]}
    with_route_mates = on_route = 0
    for row in range(len(space.views["bookings"].rows)):
        booking = space.target("change_flight", row)
        current = flights[booking["flight_number"]]
        route = (current["origin"], current["destination"])
        chosen = [call.arguments["new_flight_number"] for call in space.calls("change_flight", row)]
        assert len(chosen) == TasksSettings().choices and booking["flight_number"] not in chosen
        same = [(flights[f]["origin"], flights[f]["destination"]) == route for f in chosen]
        assert not all(same)  # always a flight on another route
        if any((f["origin"], f["destination"]) == route and n != current["flight_number"] for n, f in flights.items()):
            with_route_mates += 1
            on_route += any(same)
    assert with_route_mates > 10 and on_route >= 0.9 * with_route_mates  # and one on its own route where there is one


def test_an_argument_with_no_column_takes_its_schemas_examples() -> None:
    space = _space(AIRLINE_WORLD, AIRLINE)
    assert sorted(call.arguments["weight_kg"] for call in space.calls("add_checked_bag", 0)) == [20.0, 28.0, 35.0]
    assert {call.arguments["last_name"] for call in space.calls("add_checked_bag", 0)} == {space.target("add_checked_bag", 0)["passenger_name"].split()[-1]}


def test_an_invoices_customer_is_read_through_the_key_it_names() -> None:
    space = _space(ORDER_DESK_WORLD, STORE)
    view = space.views["Invoice"]
    row = next(n for n, cells in enumerate(view.rows) if cells[0] == "7")
    [call] = space.calls("refund_invoice", row)
    assert call.arguments == {"email": "ilse.marwood@mailfern.test", "last_name": "Marwood", "invoice_id": 7}
    assert space.persona("refund_invoice", row) == "Ilse Marwood"
    assert view.key == "InvoiceId"


def test_an_effect_the_manifest_or_the_database_cannot_answer_is_one_clear_error() -> None:
    data = order_desk_manifest().model_dump(by_alias=True, mode="json")
    refund = next(t for t in data["tools"] if t["name"] == "refund_invoice")
    refund["effect"]["arguments"]["invoice"] = {"column": "InvoiceId", "choose": "Invoice.InvoiceId"}
    with pytest.raises(InputError) as raised:
        parse_manifest(data, "agents.yaml")
    text = str(raised.value)
    assert "'invoice' is no parameter of refund_invoice" in text and "not both" in text

    refund["effect"]["arguments"].pop("invoice")
    refund["effect"]["acts_on"] = "Receipt"
    with pytest.raises(InputError, match="no table 'Receipt'"):
        _space(ORDER_DESK_WORLD, STORE, data)
