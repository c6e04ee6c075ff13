"""The workflow manifest: reading, the closed-world checks, and `bddgen manifest validate`."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml
from click.testing import CliRunner
from hypothesis import given
from hypothesis import strategies as st

from bddgen.manifest.workflow import WorkflowManifest, read_manifest, reachable_agents, unreachable_agents
from bddgen.cli import cli
from bddgen.errors import InputError
from tests.agents_manifests import AIRLINE_MANIFEST
from tests.fuzz_strategies import hostile_text


def write(tmp_path: Path, text: str, name: str = "agents.yaml") -> Path:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return path


def edited(change) -> str:
    data = yaml.safe_load(AIRLINE_MANIFEST)
    change(data)
    return yaml.safe_dump(data, sort_keys=False)


def problems_of(tmp_path: Path, text: str) -> list[str]:
    with pytest.raises(InputError) as caught:
        read_manifest(write(tmp_path, text))
    return [str(problem) for problem in caught.value.problems]


def test_the_airline_manifest_reads_with_its_closed_world(tmp_path: Path) -> None:
    manifest = read_manifest(write(tmp_path, AIRLINE_MANIFEST))
    assert manifest.entry == "triage"
    assert manifest.allowed_tools("booking") == ["lookup_booking", "cancel_booking"]
    assert manifest.allowed_tools("triage") == ["lookup_booking"]
    assert [(d.source, d.target) for d in manifest.delegations] == [("triage", "booking"), ("triage", "baggage")]
    assert reachable_agents(manifest) == ["triage", "booking", "baggage"]
    assert unreachable_agents(manifest) == []


def test_an_unknown_agent_in_an_edge_is_named_with_its_yaml_path(tmp_path: Path) -> None:
    text = edited(lambda d: d["allowed"].append({"agent": "refunds", "tool": "cancel_booking"}))
    problems = problems_of(tmp_path, text)
    assert len(problems) == 1
    assert problems[0].startswith(f"{tmp_path / 'agents.yaml'}: /allowed/4/agent: unknown agent 'refunds'")


def test_unknown_names_in_delegations_tools_and_entry_each_get_one_error(tmp_path: Path) -> None:
    def change(data: dict) -> None:
        data["entry"] = "concierge"
        data["delegations"].append({"from": "booking", "to": "refunds"})
        data["restricted"].append({"agent": "baggage", "tool": "refund"})

    problems = problems_of(tmp_path, edited(change))
    pointers = sorted(p.split(": ")[1] for p in problems)
    assert pointers == ["/delegations/2/to", "/entry", "/restricted/1/tool"]


def test_a_pair_both_allowed_and_restricted_is_one_error(tmp_path: Path) -> None:
    text = edited(lambda d: d["restricted"].append({"agent": "booking", "tool": "cancel_booking"}))
    problems = problems_of(tmp_path, text)
    assert len(problems) == 1
    assert "/restricted/1: agent 'booking' and tool 'cancel_booking' are both allowed and restricted" in problems[0]


def test_an_invalid_tool_parameter_schema_is_one_error(tmp_path: Path) -> None:
    text = edited(lambda d: d["tools"][0]["parameters"]["properties"].update({"reference": {"type": "text"}}))
    problems = problems_of(tmp_path, text)
    assert len(problems) == 1
    assert "/tools/0/parameters/properties/reference/type: not a valid JSON Schema" in problems[0]


def test_duplicate_names_and_shape_errors_are_reported(tmp_path: Path) -> None:
    assert any("/tools/1/name: tool 'lookup_booking' is defined twice" in p for p in problems_of(
        tmp_path, edited(lambda d: d["tools"][1].update({"name": "lookup_booking"}))
    ))
    shape = problems_of(tmp_path, edited(lambda d: d["delegations"].append({"from": "triage", "too": "booking"})))
    assert any("/delegations/2/too: unknown key" in p for p in shape)
    assert any("/delegations/2/to: required" in p for p in shape)


def test_cli_validate_exits_0_with_a_summary_and_warns_about_unreachable_agents(tmp_path: Path) -> None:
    text = edited(lambda d: d["agents"].append({"name": "lounge", "purpose": "Lounge access."}))
    result = CliRunner().invoke(cli, ["manifest", "validate", str(write(tmp_path, text))])
    assert result.exit_code == 0, result.output
    assert "agent 'lounge' is not reachable from the entry agent 'triage'" in result.output
    assert "ok:" in result.output and "4 agents, 3 tools, 4 allowed and 1 restricted tool edges, 2 delegations" in result.output


def test_cli_validate_exits_2_listing_every_problem(tmp_path: Path) -> None:
    from bddgen.cli import main

    def change(data: dict) -> None:
        data["allowed"].append({"agent": "refunds", "tool": "cancel_booking"})
        data["restricted"].append({"agent": "booking", "tool": "cancel_booking"})

    path = write(tmp_path, edited(change))
    with pytest.raises(SystemExit) as exited:
        main(["manifest", "validate", str(path)])
    assert exited.value.code == 2


def test_a_missing_file_and_bad_yaml_are_input_errors(tmp_path: Path) -> None:
    with pytest.raises(InputError, match="no such file"):
        read_manifest(tmp_path / "missing.yaml")
    assert any(":3: invalid YAML" in p for p in problems_of(tmp_path, "entry: triage\nagents: [\n"))


yaml_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=True) | hostile_text,
    lambda children: st.lists(children, max_size=4) | st.dictionaries(hostile_text | st.integers(), children, max_size=4),
    max_leaves=20,
)



@st.composite
def manifest_texts(draw: st.DrawFn) -> str:
    """Any YAML text: raw, a random document, or the airline manifest with one value replaced."""
    choice = draw(st.integers(0, 2))
    if choice == 0:
        return draw(hostile_text)
    if choice == 1:
        return yaml.safe_dump(draw(yaml_values), allow_unicode=True)
    data = yaml.safe_load(AIRLINE_MANIFEST)
    section = draw(st.sampled_from(sorted(data)))
    value = data[section]
    if isinstance(value, list) and value and draw(st.booleans()):
        index = draw(st.integers(0, len(value) - 1))
        if isinstance(value[index], dict):
            key = draw(st.sampled_from(sorted(value[index])))
            value[index][key] = draw(yaml_values)
        else:
            value[index] = draw(yaml_values)
    else:
        data[section] = draw(yaml_values)
    return yaml.safe_dump(data, allow_unicode=True)


@given(manifest_texts())
def test_any_yaml_text_ends_in_a_manifest_or_an_input_error(tmp_path_factory: pytest.TempPathFactory, text: str) -> None:
    path = tmp_path_factory.mktemp("fuzz") / "agents.yaml"
    path.write_text(text, encoding="utf-8", errors="replace")
    try:
        assert isinstance(read_manifest(path), WorkflowManifest)
    except InputError as exc:
        assert exc.problems


def test_a_value_yaml_types_but_the_model_refuses_is_an_input_error(tmp_path: Path) -> None:
    text = edited(lambda d: d["tools"][2].update({"parameters": {1: {"type": "string"}}}))
    problems = problems_of(tmp_path, text)
    assert problems and all("/tools/2/parameters" in p for p in problems)
