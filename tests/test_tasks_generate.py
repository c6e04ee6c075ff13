"""`bddgen tasks generate` with the scripted LM: tasks chosen by code, expected outcomes computed on a scratch
copy, facts that select one row, verbatim policy quotes, instructions checked and read back."""

from __future__ import annotations

import csv
import json
import shutil
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from bddgen.reference.airline.database import build_template, fresh_copy
from bddgen.reference.airline.state import state_keys
from bddgen.reference.airline.tools import apply
from bddgen.manifest.workflow import read_manifest
from bddgen.config import TasksSettings
from bddgen.corpus import load_corpus
from bddgen.errors import InputError
from bddgen.lm.client import LanguageModel
from bddgen.lm.scripted import ScriptedLM
from bddgen.models import Corpus, PolicyDocument, TableDocument
from bddgen.tasks.actions import ActionSpace, Call
from bddgen.tasks.candidates import Scratch, evaluate
from bddgen.tasks.evidence import PolicyIndex, QuoteError, choose_evidence, verify_quote, without_label
from bddgen.features.reader import read_feature_text
from bddgen.tasks.feature import render_tasks
from bddgen.reference.airline.world import AIRLINE_WORLD
from bddgen.tasks.generate import generate_tasks
from bddgen.tasks.instruction import Vocabulary, instruction_problems
from bddgen.tasks.model import Fact, OutcomeTask
from bddgen.tasks.scripted import faithful_replies
from bddgen.tasks.targets import identifying_facts, key_columns

AIRLINE = Path(__file__).resolve().parents[1] / "corpora" / "airline"
CHANGES = "Saver tickets cannot be changed at all."


def _lm(**overrides: object) -> LanguageModel:
    return LanguageModel(ScriptedLM(by_task={**faithful_replies(), **overrides}))  # type: ignore[arg-type]


@pytest.fixture(scope="module")
def ten() -> tuple[list[OutcomeTask], list]:
    corpus = load_corpus(AIRLINE)
    return generate_tasks(corpus, read_manifest(AIRLINE / "agents.yaml"), "agents.yaml", _lm(), TasksSettings(), world=AIRLINE_WORLD, n=10, seed=0)


def _vocabulary(corpus: Corpus) -> Vocabulary:
    scratch = Scratch(AIRLINE_WORLD, corpus)
    return Vocabulary.of(ActionSpace(read_manifest(AIRLINE / "agents.yaml"), "agents.yaml", scratch.template, scratch.keys, 4))


def test_ten_tasks_hold_at_least_three_forbidden_and_two_compound(ten: tuple[list[OutcomeTask], list]) -> None:
    tasks, _ = ten
    assert len(tasks) == 10
    assert sum(t.decision == "forbidden" for t in tasks) >= 3
    assert sum(t.compound for t in tasks) >= 2
    assert all(2 <= len(t.actions) <= 3 for t in tasks if t.compound)
    assert len({t.target.key for t in tasks}) == 10  # one task per booking


def test_a_forbidden_action_is_expected_to_leave_the_database_unchanged_and_be_refused(ten: tuple[list[OutcomeTask], list]) -> None:
    tasks, _ = ten
    forbidden = [t for t in tasks if t.decision == "forbidden"]
    template = build_template(load_corpus(AIRLINE))
    for task in forbidden:
        assert task.expected_diff == []
        action = task.actions[0]
        assert "error" in apply(action.tool, action.arguments, fresh_copy(template))  # the tool refuses it
        assert action.unchecked_diff  # without the policy checks it would change the booking
        text = render_tasks([task], [])
        assert "Then the database should be unchanged\n      And the assistant should refuse" in text
        assert "@policy-forbidden" in text


def test_an_allowed_task_expects_the_diff_its_calls_make_in_sequence(ten: tuple[list[OutcomeTask], list]) -> None:
    tasks, _ = ten
    scratch = Scratch(AIRLINE_WORLD, load_corpus(AIRLINE))
    for task in (t for t in tasks if t.decision == "allowed"):
        results, reached = scratch.run([(a.tool, a.arguments) for a in task.actions])
        assert reached == task.expected_diff and reached
        assert all("error" not in result for result in results)
        assert any(row.table == "bookings" and row.key == task.target.key for row in reached) or task.actions[0].tool == "add_checked_bag"


def test_every_task_cites_a_sentence_found_verbatim_in_its_policy_file(ten: tuple[list[OutcomeTask], list]) -> None:
    tasks, _ = ten
    for task in tasks:
        for action in task.actions:
            assert action.evidence is not None
            assert action.evidence.sentence in " ".join((AIRLINE / action.evidence.file).read_text(encoding="utf-8").split())


def test_every_instruction_states_the_facts_and_the_facts_select_the_target(ten: tuple[list[OutcomeTask], list]) -> None:
    tasks, _ = ten
    corpus = load_corpus(AIRLINE)
    vocabulary = _vocabulary(corpus)
    for task in tasks:
        assert instruction_problems(task.instruction, task.facts, task.persona, vocabulary) == []
        assert {"booking_reference", "last_name"} <= {f.name for f in task.facts}


def test_the_same_seed_chooses_the_same_tasks() -> None:
    corpus = load_corpus(AIRLINE)
    manifest = read_manifest(AIRLINE / "agents.yaml")
    settings = TasksSettings(forbidden_share=0.5, compound_share=0.0)
    first, _ = generate_tasks(corpus, manifest, "agents.yaml", _lm(), settings, world=AIRLINE_WORLD, n=2, seed=7)
    again, _ = generate_tasks(corpus, manifest, "agents.yaml", _lm(), settings, world=AIRLINE_WORLD, n=2, seed=7)
    other, _ = generate_tasks(corpus, manifest, "agents.yaml", _lm(), settings, world=AIRLINE_WORLD, n=2, seed=8)
    assert [t.id for t in first] == [t.id for t in again]
    assert [t.id for t in first] != [t.id for t in other]


def _family_corpus(tmp_path: Path) -> Path:
    """The airline corpus whose bookings are one booking reference with two travellers named Wiśniewska."""
    target = tmp_path / "airline"
    shutil.copytree(AIRLINE, target)
    path = target / "tables" / "bookings.csv"
    with path.open(encoding="utf-8") as handle:
        rows = list(csv.reader(handle))
    marta = next(row for row in rows if row[0] == "5VVZ8R")
    with path.open("w", encoding="utf-8", newline="") as handle:
        csv.writer(handle).writerows([rows[0], marta, [marta[0], "Jan Wiśniewska", *marta[2:4], "21D", *marta[5:]]])
    return target


def test_facts_that_select_two_rows_are_rewritten_with_more_facts(tmp_path: Path) -> None:
    corpus = load_corpus(_family_corpus(tmp_path))
    table = next(t for t in corpus.tables if t.id == "tables/bookings")
    required = [
        Fact(name="booking_reference", value="5VVZ8R", column="booking_reference"),
        Fact(name="last_name", value="Wiśniewska", column="passenger_name", part="last word"),
    ]
    facts, rewrites = identifying_facts(table, 1, required)
    assert rewrites and "select 2 rows" in rewrites[0]
    assert Fact(name="passenger_name", value="Jan Wiśniewska", column="passenger_name") in facts

    settings = TasksSettings(forbidden_share=0.0, compound_share=0.0)
    manifest = read_manifest(AIRLINE / "agents.yaml")
    tasks, _ = generate_tasks(corpus, manifest, "agents.yaml", _lm(), settings, world=AIRLINE_WORLD, n=1, seed=0)
    assert len(tasks) == 1
    assert any("select 2 rows" in reason for reason in tasks[0].rewrites)
    assert any(f.name == "passenger_name" for f in tasks[0].facts)
    assert tasks[0].persona in tasks[0].instruction


def test_the_verbatim_check_rejects_a_paraphrase_of_the_policy() -> None:
    document = PolicyDocument(id="policies/changes", title="Changes", passage=f"Whether a booking can be changed depends on the fare. {CHANGES}")
    assert verify_quote(CHANGES, document) == CHANGES
    with pytest.raises(QuoteError, match="word for word"):
        verify_quote("Saver fares can never be changed.", document)
    with pytest.raises(QuoteError, match="too short"):
        verify_quote("Saver tickets", document)


def test_a_quote_copied_with_its_candidate_label_is_the_sentence_and_a_changed_word_still_fails() -> None:
    document = next(d for d in load_corpus(AIRLINE).policies if CHANGES in " ".join(d.passage.split()))
    assert verify_quote(without_label(f"3. [{document.id}] {CHANGES} "), document) == CHANGES
    assert verify_quote(without_label(f"[{document.id}] {CHANGES}"), document) == CHANGES
    with pytest.raises(QuoteError):
        verify_quote(without_label(f"[{document.id}] {CHANGES.replace('Saver', 'Flex', 1)}"), document)


def test_a_paraphrased_quote_is_asked_again_and_a_task_without_evidence_is_dropped() -> None:
    corpus = load_corpus(AIRLINE)
    index = PolicyIndex(corpus.policies)
    scratch = Scratch(AIRLINE_WORLD, corpus)
    saver = evaluate(scratch, Call("change_flight", {"booking_reference": "6DG2NU", "last_name": "Marchetti", "new_flight_number": "XV233"}, 0, "move a Saver booking"))
    candidates = index.candidates("move a Saver booking change flight tickets cannot be changed", 5)
    number = next(n for n, c in enumerate(candidates, start=1) if c.text == CHANGES)
    paraphrase = {"candidate": number, "quote": "Saver fares can never be changed."}
    lm = LanguageModel(ScriptedLM(by_task={"task-policy-evidence": [paraphrase, {"candidate": number, "quote": CHANGES}]}))
    evidence, rejected = choose_evidence(lm, index, saver, "move a Saver booking change flight tickets cannot be changed", [], k=5, attempts=2)
    assert evidence is not None and evidence.sentence == CHANGES and evidence.file == "policies/changes_to_bookings.md"
    assert rejected and "word for word" in rejected[0]

    always = LanguageModel(ScriptedLM(by_task={"task-policy-evidence": lambda request: paraphrase}))
    manifest = read_manifest(AIRLINE / "agents.yaml")
    tasks, dropped = generate_tasks(
        corpus, manifest, "agents.yaml", always, TasksSettings(forbidden_share=1.0, compound_share=0.0, attempts=2), world=AIRLINE_WORLD, n=1, seed=0
    )
    assert tasks == [] and any("word for word" in d.reason for d in dropped)
    # the rest are refusals no policy sentence states (a booking already flown): dropped before any LM call
    assert all("word for word" in d.reason or "no policy rule is known" in d.reason for d in dropped)


def test_an_instruction_naming_what_the_user_does_not_know_is_rewritten() -> None:
    corpus = load_corpus(AIRLINE)
    leaky = {"instruction": "You are nobody. You want to cancel booking NB8VTT on flight XV305."}
    replies = faithful_replies()
    script = ScriptedLM(by_task={**replies, "task-user-instruction": [leaky, replies["task-user-instruction"]]})  # type: ignore[dict-item]
    tasks, _ = generate_tasks(
        corpus, read_manifest(AIRLINE / "agents.yaml"), "agents.yaml", LanguageModel(script),
        TasksSettings(forbidden_share=1.0, compound_share=0.0), world=AIRLINE_WORLD, n=1, seed=0,
    )
    [task] = tasks
    assert any("does not state the booking_reference" in reason for reason in task.rewrites)
    assert task.instruction != leaky["instruction"]
    vocabulary = _vocabulary(corpus)
    problems = instruction_problems(f"You are {task.persona}. Rebook NB8VTT.", task.facts, task.persona, vocabulary)
    assert any("NB8VTT" in problem and "does not know" in problem for problem in problems)


def test_a_manifest_tool_without_an_implementation_is_one_clear_error(tmp_path: Path) -> None:
    data = (AIRLINE / "agents.yaml").read_text(encoding="utf-8")
    path = tmp_path / "agents.yaml"
    path.write_text(data.replace("- name: search_flights", "- name: upgrade_seat\n  description: Upgrade.\n- name: search_flights"), encoding="utf-8")
    with pytest.raises(InputError, match="upgrade_seat.*no implementation"):
        generate_tasks(load_corpus(AIRLINE), read_manifest(path), str(path), _lm(), TasksSettings(), world=AIRLINE_WORLD, n=1, seed=0)


def test_a_table_with_no_key_column_is_one_clear_error() -> None:
    table = TableDocument(id="tables/bookings", title="Bookings", headers=["name", "seat"], rows=[["Ana", "1A"], ["Ana", "1A"]])
    with pytest.raises(InputError, match="has no key column"):
        key_columns(table)


def test_the_no_policy_tools_do_what_the_policy_forbids() -> None:
    template = build_template(load_corpus(AIRLINE))
    saver = {"booking_reference": "6DG2NU", "last_name": "Lopez", "new_flight_number": "XV233"}
    saver["last_name"] = template.execute("SELECT passenger_name FROM bookings WHERE booking_reference = '6DG2NU'").fetchone()[0].split()[-1]
    assert "error" in apply("change_flight", saver, fresh_copy(template))
    assert apply("change_flight", saver, fresh_copy(template), enforce_policy=False)["new_flight"] == "XV233"


@given(instruction=st.text(min_size=1, max_size=60), value=st.text(min_size=1, max_size=30))
def test_any_instruction_and_fact_render_as_gherkin_whose_locked_scenario_reads_back(
    ten: tuple[list[OutcomeTask], list], instruction: str, value: str
) -> None:
    instruction, value = " ".join(instruction.split()) or "x", " ".join(value.split()) or "y"
    task = ten[0][0].model_copy(update={"instruction": instruction, "facts": [Fact(name="note", value=value)]})
    text = render_tasks([task], []).replace("@task @task-", "@task @locked @task-")
    document = read_feature_text(text, "tasks.feature")
    [locked] = document.conversations
    assert locked.locked and locked.id == task.id and locked.task is not None
    assert locked.task.instruction == instruction
    assert locked.task.facts == {"note": value}
    assert render_tasks([task], [locked]).count(f"@task-{task.id}") == 1


def test_a_written_task_has_its_provenance_in_json(ten: tuple[list[OutcomeTask], list]) -> None:
    tasks, _ = ten
    for task in tasks:
        again = OutcomeTask.model_validate(json.loads(task.model_dump_json()))
        assert again == task


def test_the_no_policy_calls_fail_the_forbidden_tasks_with_the_unexpected_diff_shown(ten: tuple[list[OutcomeTask], list]) -> None:
    from bddgen.outcomes import OutcomeExpectation, check_outcome
    from bddgen.state_diff import diff, snapshot

    corpus = load_corpus(AIRLINE)
    template, keys = build_template(corpus), state_keys(corpus)
    for task in (t for t in ten[0] if t.decision == "forbidden"):
        action = task.actions[0]
        verdicts = []
        for enforce in (True, False):
            copy = fresh_copy(template)
            before = snapshot(copy, keys)
            apply(action.tool, action.arguments, copy, enforce_policy=enforce)
            verdicts.append(check_outcome(OutcomeExpectation(kind="unchanged"), diff(before, snapshot(copy, keys)), snapshot(copy, keys)))
        assert verdicts[0] is None
        assert verdicts[1] is not None and "expected no change" in verdicts[1]
        assert task.target.key in verdicts[1] or "extra_bags" in verdicts[1]  # the unexpected change is named
