"""airline-agent's tools on a copy of the airline tables: results, policy rules, isolation, the manifest."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest
import yaml

from bddgen.reference.airline.database import build_template, fresh_copy
from bddgen.reference.airline.tools import TOOLS, apply
from bddgen.reference.tools import ToolArgumentError
from bddgen.reference.airline.workflow import airline_manifest
from bddgen.manifest.workflow import read_manifest
from bddgen.corpus import load_corpus

AIRLINE = Path(__file__).resolve().parents[1] / "corpora" / "airline"


@pytest.fixture(scope="module")
def template() -> sqlite3.Connection:
    return build_template(load_corpus(AIRLINE))


@pytest.fixture
def db(template: sqlite3.Connection) -> sqlite3.Connection:
    return fresh_copy(template)


def _status(connection: sqlite3.Connection, reference: str) -> str:
    return connection.execute("SELECT status FROM bookings WHERE booking_reference = ?", (reference,)).fetchone()[0]


def test_get_booking_needs_the_passengers_last_name(db: sqlite3.Connection) -> None:
    found = apply("get_booking", {"booking_reference": "nb8vtt", "last_name": "laurent"}, db)
    assert found["passenger_name"] == "Samir Laurent"
    assert found["fare_conditions"]["refundable"] == "yes"
    assert "error" in apply("get_booking", {"booking_reference": "NB8VTT", "last_name": "Laurentis"}, db)


def test_cancelling_a_flex_fare_refunds_the_whole_price(db: sqlite3.Connection) -> None:
    result = apply("cancel_booking", {"booking_reference": "NB8VTT", "last_name": "Laurent"}, db)
    assert result == {"booking_reference": "NB8VTT", "status": "refunded", "refund_eur": 445.2}
    assert _status(db, "NB8VTT") == "refunded"
    assert "error" in apply("cancel_booking", {"booking_reference": "NB8VTT", "last_name": "Laurent"}, db)


def test_cancelling_a_saver_fare_refunds_nothing(db: sqlite3.Connection) -> None:
    result = apply("cancel_booking", {"booking_reference": "2YD3ZS", "last_name": "Kelleher"}, db)
    assert result["refund_eur"] == 0.0 and result["status"] == "cancelled" and "non-refundable" in result["note"]


def test_a_flown_booking_cannot_be_cancelled(db: sqlite3.Connection) -> None:
    assert "error" in apply("cancel_booking", {"booking_reference": "3ULYBB", "last_name": "Duarte"}, db)
    assert _status(db, "3ULYBB") == "flown"


def test_change_flight_charges_the_fare_classes_fee_on_the_same_route(db: sqlite3.Connection) -> None:
    args = {"booking_reference": "HS56HK", "last_name": "Brenner"}
    assert "same route" in apply("change_flight", {**args, "new_flight_number": "XV401"}, db)["error"]
    result = apply("change_flight", {**args, "new_flight_number": "XV213"}, db)
    assert (result["new_flight"], result["change_fee_eur"]) == ("XV213", 120.0)
    row = db.execute("SELECT flight_number FROM bookings WHERE booking_reference = 'HS56HK'").fetchone()
    assert row[0] == "XV213"


def test_saver_tickets_cannot_be_changed(db: sqlite3.Connection) -> None:
    result = apply("change_flight", {"booking_reference": "B8F5GZ", "last_name": "Baumann", "new_flight_number": "XV101"}, db)
    assert "cannot be changed" in result["error"]


def test_extra_bag_fee_depends_on_time_to_departure_and_weight(db: sqlite3.Connection) -> None:
    late = apply("add_checked_bag", {"booking_reference": "NB8VTT", "last_name": "Laurent", "weight_kg": 20}, db)
    assert late["fee_eur"] == 60.0  # XV305 leaves within 24 hours of the data's moment
    early_heavy = apply("add_checked_bag", {"booking_reference": "HS56HK", "last_name": "Brenner", "weight_kg": 30}, db)
    assert early_heavy["fee_eur"] == 35.0  # business cabin: 32 kg included
    assert "cargo" in apply("add_checked_bag", {"booking_reference": "HS56HK", "last_name": "Brenner", "weight_kg": 33}, db)["error"]
    assert db.execute("SELECT count(*) FROM extra_bags").fetchone()[0] == 2


def test_baggage_allowance_adds_loyalty_bags(db: sqlite3.Connection) -> None:
    result = apply("check_baggage_allowance", {"fare_class": "Standard", "loyalty_tier": "Gold"}, db)
    assert (result["checked_bags"], result["checked_bag_max_kg"]) == (3, 23.0)


def test_arguments_outside_the_schema_are_refused(db: sqlite3.Connection) -> None:
    with pytest.raises(ToolArgumentError, match="last_name"):
        apply("get_booking", {"booking_reference": "NB8VTT"}, db)


def test_each_copy_is_private(template: sqlite3.Connection) -> None:
    first, second = fresh_copy(template), fresh_copy(template)
    apply("cancel_booking", {"booking_reference": "NB8VTT", "last_name": "Laurent"}, first)
    assert _status(first, "NB8VTT") == "refunded"
    assert _status(second, "NB8VTT") == "confirmed"
    assert template.execute("SELECT status FROM bookings WHERE booking_reference = 'NB8VTT'").fetchone()[0] == "confirmed"


def test_the_shipped_manifest_is_the_workflow_the_code_runs() -> None:
    shipped = read_manifest(AIRLINE / "agents.yaml")
    assert shipped == airline_manifest()
    assert {t.name for t in shipped.tools} == set(TOOLS)
    raw = yaml.safe_load((AIRLINE / "agents.yaml").read_text(encoding="utf-8"))
    assert raw["restricted"]  # the guard has something to refuse
