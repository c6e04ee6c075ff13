"""The policy sentence cited for a task names what decided it, and an instruction that leaves out a fact is
rewritten with the fact named (scripted LM, no model)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from bddgen.manifest.workflow import read_manifest
from bddgen.config import TasksSettings
from bddgen.corpus import load_corpus
from bddgen.lm.base import LMRequest
from bddgen.lm.client import LanguageModel
from bddgen.lm.scripted import ScriptedLM
from bddgen.models import Corpus
from bddgen.lm.scripted import section
from bddgen.tasks.candidates import Call, Evaluated, Scratch, evaluate
from bddgen.tasks.evidence import PolicyIndex, choose_evidence
from bddgen.reference.airline.world import AIRLINE_WORLD
from bddgen.tasks.generate import generate_tasks
from bddgen.tasks.instruction import fact_sentence
from bddgen.tasks.model import Fact
from bddgen.reference.airline.rules import required_by
from bddgen.tasks.rules import Requirement, unmet
from bddgen.tasks.scripted import faithful_replies

AIRLINE = Path(__file__).resolve().parents[1] / "corpora" / "airline"
FARES = ["Saver", "Standard", "Standard Plus", "Flex", "Award", "Business Saver", "Business", "Business Flex"]
SAVER_RULE = "Saver tickets cannot be changed at all."
SCHEDULE_RULE = (
    "When Aurelian Skyways changes the schedule so that a flight departs or arrives more than 2 hours earlier or later than "
    "originally booked, every passenger, including Saver passengers, may move to another flight on the same route within 14 "
    "days of the original date without any fee, or may cancel for a full refund."
)


@pytest.fixture(scope="module")
def corpus() -> Corpus:
    return load_corpus(AIRLINE)


def _saver_change(corpus: Corpus) -> tuple[Evaluated, dict[str, str]]:
    scratch = Scratch(AIRLINE_WORLD, corpus)
    call = Call("change_flight", {"booking_reference": "6DG2NU", "last_name": "Marchetti", "new_flight_number": "XV233"}, 0, "move a Saver booking")
    return evaluate(scratch, call), {"fare_class": "Saver", "status": "confirmed"}


def test_a_refused_saver_change_needs_the_sentence_that_says_saver_tickets_cannot_be_changed(corpus: Corpus) -> None:
    saver, booking = _saver_change(corpus)
    assert saver.decision == "forbidden"
    requirements = required_by(saver, booking, FARES, "economy")
    assert unmet(SAVER_RULE, requirements) == []
    assert unmet(SCHEDULE_RULE, requirements) == ["that the ticket cannot be changed"]  # names Saver, states another rule
    assert "the fare class Saver" in unmet("Business Saver tickets cannot be changed for free.", requirements)


def test_a_fare_class_inside_a_longer_fare_name_is_not_named() -> None:
    flex = Requirement("the fare class Flex", ("Flex",), ("Business Flex",))
    assert not flex.met_by("Business Flex includes three.")
    assert flex.met_by("Flex and Business Flex tickets are fully refundable.")
    assert not flex.met_by("Flexible dates are offered.")


def test_an_allowed_change_needs_its_fare_class_and_the_fee_the_tool_charged() -> None:
    change = Evaluated(Call("change_flight", {"booking_reference": "X"}, 0, "move"), "allowed", {"change_fee_eur": 35.0}, [])
    requirements = required_by(change, {"fare_class": "Standard Plus", "status": "confirmed"}, FARES, "economy")
    fees = "The change fee is 70 EUR for Standard tickets, 35 EUR for Standard Plus tickets and 25 EUR for Award tickets."
    assert unmet(fees, requirements) == []
    assert unmet("Saver tickets cannot be changed at all.", requirements) == ["the fare class Standard Plus", "the change fee"]


def test_a_refusal_code_has_no_rule_for_is_an_error_not_a_guess() -> None:
    odd = Evaluated(Call("cancel_booking", {}, 0, "cancel"), "forbidden", {"error": "booking X is flown and can no longer be changed"}, [])
    with pytest.raises(ValueError, match="no rule is known"):
        required_by(odd, {"fare_class": "Flex", "status": "flown"}, FARES, "economy")


def test_a_verbatim_quote_of_the_wrong_rule_is_asked_again(corpus: Corpus) -> None:
    saver, booking = _saver_change(corpus)
    requirements = required_by(saver, booking, FARES, "economy")
    index = PolicyIndex(corpus.policies)
    query = "move a Saver booking change flight tickets cannot be changed"
    offered = index.candidates(query, 5, requirements)
    assert offered and all(not unmet(c.text, requirements) for c in offered)
    number = next(n for n, c in enumerate(offered, start=1) if c.text == SAVER_RULE)
    wrong_rule = {"candidate": number, "quote": SCHEDULE_RULE}  # verbatim in the same document, but not the rule
    lm = LanguageModel(ScriptedLM(by_task={"task-policy-evidence": [wrong_rule, {"candidate": number, "quote": SAVER_RULE}]}))
    evidence, rejected = choose_evidence(lm, index, saver, query, requirements, k=5, attempts=2)
    assert evidence is not None and evidence.sentence == SAVER_RULE
    assert rejected and "does not name that the ticket cannot be changed" in rejected[0]


def test_every_generated_task_cites_a_sentence_that_names_what_decided_it(corpus: Corpus) -> None:
    lm = LanguageModel(ScriptedLM(by_task=faithful_replies()))  # type: ignore[arg-type]
    tasks, _ = generate_tasks(corpus, read_manifest(AIRLINE / "agents.yaml"), "agents.yaml", lm, TasksSettings(), world=AIRLINE_WORLD, n=10, seed=0)
    cabins = {"Business Saver": "business", "Business": "business", "Business Flex": "business"}
    assert len(tasks) == 10
    for task in tasks:
        for action in task.actions:
            evaluated = Evaluated(Call(action.tool, action.arguments, 0, action.situation), action.decision, action.result, [])
            requirements = required_by(evaluated, task.target.row, FARES, cabins.get(task.target.row["fare_class"], "economy"))
            assert action.evidence is not None and unmet(action.evidence.sentence, requirements) == []


def test_an_instruction_that_leaves_out_a_fact_is_rewritten_from_itself_with_the_fact_named(corpus: Corpus) -> None:
    seen: list[LMRequest] = []
    faithful = faithful_replies()["task-user-instruction"]

    def forgetful_once(request: LMRequest) -> dict[str, Any]:
        seen.append(request)
        if len(seen) == 1:  # what the 1.5B wrote: the agent's voice, fact names instead of values
            return {"instruction": "Please provide your booking reference, last name and new flight number."}
        return faithful(request)

    lm = LanguageModel(ScriptedLM(by_task={**faithful_replies(), "task-user-instruction": forgetful_once}))  # type: ignore[dict-item]
    settings = TasksSettings(forbidden_share=0.0, compound_share=1.0)
    tasks, _ = generate_tasks(corpus, read_manifest(AIRLINE / "agents.yaml"), "agents.yaml", lm, settings, world=AIRLINE_WORLD, n=1, seed=0)
    [task] = tasks
    assert task.compound
    last_name = next(f for f in task.facts if f.name == "last_name")
    second = seen[1].messages[-1].content
    assert "Please provide your booking reference" in section(seen[1], "Earlier Instruction")
    assert f"add the sentence: {fact_sentence(last_name)}" in second
    phrases = read_manifest(AIRLINE / "agents.yaml").argument_phrases()
    assert all(f"- {fact_sentence(f, phrases)}" in second for f in task.facts)
    assert "- The extra bag you want to add weighs" in second  # worded as the manifest's effect says it
    assert any("does not state the last_name" in reason for reason in task.rewrites)


def test_an_instruction_that_never_states_every_fact_drops_the_task(corpus: Corpus) -> None:
    never = {"instruction": "You are someone who wants a change."}
    lm = LanguageModel(ScriptedLM(by_task={**faithful_replies(), "task-user-instruction": lambda request: never}))  # type: ignore[dict-item]
    settings = TasksSettings(forbidden_share=0.0, compound_share=1.0, attempts=2)
    tasks, dropped = generate_tasks(corpus, read_manifest(AIRLINE / "agents.yaml"), "agents.yaml", lm, settings, world=AIRLINE_WORLD, n=1, seed=0)
    assert tasks == [] and dropped
    assert all("does not state the booking_reference" in d.reason for d in dropped)


def test_a_fact_reads_as_the_user_would_say_it() -> None:
    assert fact_sentence(Fact(name="last_name", value="Aziz")) == "Your last name is Aziz."
    phrases = read_manifest(AIRLINE / "agents.yaml").argument_phrases()
    assert fact_sentence(Fact(name="weight_kg", value="20"), phrases) == "The extra bag you want to add weighs 20 kg."
    assert fact_sentence(Fact(name="weight_kg_2", value="28"), phrases) == "Also, the extra bag you want to add weighs 28 kg."
    assert fact_sentence(Fact(name="loyalty_tier", value="Gold")) == "Your loyalty tier is Gold."
