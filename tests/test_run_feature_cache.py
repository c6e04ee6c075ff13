"""A run parses each .feature file once (bddgen's gherkin-official parse, from which behave's features are built too),
and what the lint, the planning, behave and the Cucumber Messages read from that one parse is what each read from its
own parse before."""

from __future__ import annotations

import json
from collections import Counter
from importlib.resources import files
from pathlib import Path
from typing import Any

import behave.parser
import gherkin.parser
import pytest
from click.testing import CliRunner
from gherkin.ast_builder import AstBuilder
from gherkin.parser import Parser
from gherkin.stream.id_generator import IdGenerator
from gherkin.token_scanner import TokenScanner

from bddgen.cli import cli
from bddgen.errors import InputError
from bddgen.features.reader import parse_gherkin, read_feature, read_feature_text
from bddgen.results import RunMetadata, TurnResult, Verdict
from bddgen.run.cucumber import CUCUMBER_JSON, MESSAGES_FILE, _with_ids, write_cucumber
from bddgen.run.feature_cache import FeatureCache


EVERY_NODE = '''# language: en
@outer @team:core
Feature: Every kind of node
  A description line.

  Background:
    Given a passenger with a table
      | name | class |
      | Ada  | Plus  |

  @conversation @conv:first
  Scenario: A conversation
    # turn 1 | SINGLE-DOC | docs: text/fees
    When the user asks "What is the fee?"
    Then the answer should agree with "70 EUR"

  Rule: A rule
    Given a rule's context
    When something happens
    Then something follows

    Background:
      Given a docstring
        """text/plain
        Some text
        """

    @outline
    Scenario Outline: An outline
      When the user asks "<question>"
      Then the answer should agree with "<answer>"

      @first-examples
      Examples: First
        | question | answer |
        | Why?     | So.    |
        | How?     | Thus.  |

      Examples:
        | question | answer |
        | When?    | Now.   |
'''

SPEC = '''@spec
Feature: {title}

  Rule: {title}
    Given a passenger
    When they ask about {title}
    Then the assistant answers from the fee table

    @conversation @conv:{conv}
    Scenario: The {title} conversation
      # turn 1 | SINGLE-DOC | docs: text/fees
      When the user asks "What is the {title} fee?"
      Then the answer should agree with "70 EUR"
      When the user asks "Who founded the airline?"
      Then the assistant should say it cannot answer
      Then the conversation should satisfy the spec
'''


def _example_texts() -> list[str]:
    shipped = files("bddgen") / "data" / "examples"
    texts = [p.read_text(encoding="utf-8") for folder in shipped.iterdir() if folder.is_dir() for p in folder.iterdir() if p.name.endswith(".feature")]
    return [EVERY_NODE, SPEC.format(title="Fees", conv="fees"), *texts]


@pytest.mark.parametrize("before", [0, 7])
def test_a_parse_given_a_runs_ids_is_the_parse_with_them(before: int) -> None:
    """The Cucumber Messages need a document whose ids come from the run's one id generator: the cached parse with
    its ids drawn from that generator is the document a parse with it gives, and leaves the generator where that
    parse leaves it."""
    texts = _example_texts()
    assert len(texts) >= 5
    mine, theirs = IdGenerator(), IdGenerator()
    for generator in (mine, theirs):
        for _ in range(before):
            generator.get_next_id()
    for text in texts:
        ast = parse_gherkin(text, "example.feature")
        kept = json.dumps(ast)
        assert _with_ids(ast, mine) == Parser(AstBuilder(theirs)).parse(TokenScanner(text))
        assert mine.get_next_id() == theirs.get_next_id()
        assert json.dumps(ast) == kept  # the cached AST is copied, never changed


def test_read_feature_text_reads_an_ast_given_to_it_as_its_own_parse() -> None:
    text = SPEC.format(title="Fees", conv="fees")
    ast = parse_gherkin(text, "fees.feature")
    assert read_feature_text(text, "fees.feature", ast=ast) == read_feature_text(text, "fees.feature")


@pytest.fixture
def parses(monkeypatch: pytest.MonkeyPatch) -> Counter[str]:
    """Counts gherkin-official parses (bddgen's) and behave's own parses, by kind."""
    counted: Counter[str] = Counter()
    gherkin_parse, behave_parse = gherkin.parser.Parser.parse, behave.parser.Parser.parse

    def counting_gherkin(self: Any, *args: Any, **kwargs: Any) -> Any:
        counted["gherkin"] += 1
        return gherkin_parse(self, *args, **kwargs)

    def counting_behave(self: Any, *args: Any, **kwargs: Any) -> Any:
        counted["behave"] += 1
        return behave_parse(self, *args, **kwargs)

    monkeypatch.setattr(gherkin.parser.Parser, "parse", counting_gherkin)
    monkeypatch.setattr(behave.parser.Parser, "parse", counting_behave)
    return counted


def test_the_cache_reads_each_file_as_read_feature_does_parsing_it_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, parses: Counter[str]
) -> None:
    path = tmp_path / "fees.feature"
    path.write_text(SPEC.format(title="Fees", conv="fees"))
    cache = FeatureCache()
    document = cache.document(path)
    assert cache.document(path) == document and cache.gherkin(path)[0] == path.read_text()
    monkeypatch.chdir(tmp_path)
    relative = cache.document(Path("fees.feature"))  # another name of the same file: its path is that name
    assert parses["gherkin"] == 1
    assert relative.path == "fees.feature" and relative.model_copy(update={"path": str(path)}) == document
    parses.clear()
    assert document == read_feature(path) and parses["gherkin"] == 1

    path.write_text(SPEC.format(title="Bags", conv="bags"))  # a file changed since: read as it is now
    parses.clear()
    assert cache.document(path).spec.title == "Bags" and cache.document(path) == read_feature(path)
    assert parses["gherkin"] == 2  # once into the cache, once by read_feature


def test_the_cache_raises_the_problems_read_feature_raises_once_per_file(tmp_path: Path, parses: Counter[str]) -> None:
    broken, no_spec = tmp_path / "broken.feature", tmp_path / "no-spec.feature"
    broken.write_text("Feature: broken\n  Scenario: x\n    Given y\n  Feature: a second one\n")  # invalid Gherkin
    no_spec.write_text("Feature: Nothing\n")
    cache = FeatureCache()
    for path in (broken, no_spec):
        with pytest.raises(InputError) as expected:
            read_feature(path)
        for _ in range(2):
            with pytest.raises(InputError) as cached:
                cache.document(path)
            assert (cached.value.problems, cached.value.title) == (expected.value.problems, expected.value.title)
    assert parses["gherkin"] == 2 + 2  # read_feature's two, the cache's two
    with pytest.raises(InputError):
        cache.gherkin(broken)
    assert cache.gherkin(no_spec)[1]["feature"]["name"] == "Nothing" and parses["gherkin"] == 4


def _record(feature: str, conversation: str, turn: int, verdict: Verdict) -> TurnResult:
    return TurnResult(
        run_id="r1", feature=feature, spec_id="s", scenario="s", conversation_id=conversation, turn=turn, verdict=verdict,
        answer="70 EUR", expected="70 EUR", feedback=f"feedback {turn}",
    )


def test_the_cucumber_messages_are_the_same_whichever_files_the_run_parsed_before(tmp_path: Path, parses: Counter[str]) -> None:
    """Files the lint and the planning parsed (in any order) give the messages a fresh parse gives, ids included."""
    (tmp_path / "features").mkdir()
    names = ["bags", "fees", "pets"]
    for name in names:
        (tmp_path / "features" / f"{name}.feature").write_text(SPEC.format(title=name.capitalize(), conv=name))
    records = [_record(f"features/{n}.feature", n, turn, Verdict.PASS if n != "pets" else Verdict.FAIL) for n in names for turn in (1, 2, 0)]
    metadata = RunMetadata(run_id="r1", assistant="fake", assistant_kind="fake", started="2026-01-02T03:04:05+00:00")
    written = []
    for order in ([], ["pets", "bags"], names[::-1]):
        cache = FeatureCache()
        for name in order:
            cache.document(tmp_path / "features" / f"{name}.feature")
        run_dir = tmp_path / f"run-{len(written)}"
        run_dir.mkdir()
        parses.clear()
        write_cucumber(run_dir, tmp_path, metadata, records, cache)
        assert parses["gherkin"] == len(names) - len(order)  # only the files not parsed yet
        written.append(((run_dir / MESSAGES_FILE).read_text(), (run_dir / CUCUMBER_JSON).read_text()))
    assert written[0] == written[1] == written[2]
    messages = [json.loads(line) for line in written[0][0].splitlines()]
    ids = [node["id"] for m in messages if "gherkinDocument" in m or "pickle" in m for node in _nodes(m) if "id" in node]
    assert len(ids) > 3 * 10 and len(set(ids)) == len(ids)  # one sequence of ids over the run's files


def _nodes(node: Any) -> list[dict[str, Any]]:
    if isinstance(node, dict):
        return [node, *(n for value in node.values() for n in _nodes(value))]
    if isinstance(node, list):
        return [n for value in node for n in _nodes(value)]
    return []


def test_a_run_parses_each_feature_file_once(judged_sports_project: Path, parses: Counter[str]) -> None:
    """`bddgen run` over a project: each .feature file is parsed once (the lint before the run and inside the run
    stage, behave's features, the planning and the Cucumber Messages share that parse); behave's parser never runs."""
    runner = CliRunner()
    project = judged_sports_project
    feature_count = len(list((project / "features").rglob("*.feature")))
    assert feature_count >= 2
    for arguments in (["run", "-a", "fake", "--run-id", "r1"], ["run", "-a", "fake", "--run-id", "r2", "--jobs", "2", "--repeat", "2"]):
        parses.clear()
        result = runner.invoke(cli, arguments, catch_exceptions=False)
        assert result.exit_code in (0, 1) and "messages.ndjson" in result.output, result.output
        assert parses == Counter(gherkin=feature_count), arguments
    messages = [json.loads(line) for line in (project / "runs" / "r2" / MESSAGES_FILE).read_text().splitlines()]
    assert sum(1 for m in messages if "gherkinDocument" in m) == feature_count
    assert sum(1 for m in messages if "testCaseStarted" in m) == 2 * sum(1 for m in messages if "testCase" in m) > 0
    parses.clear()
    assert runner.invoke(cli, ["run", "--resume", "r2"], catch_exceptions=False).exit_code in (0, 1)
    assert parses == Counter(gherkin=feature_count)


def _behave_signature(feature: Any) -> Any:
    """What behave runs of a feature: its statements' keywords, names, lines, tags, descriptions, steps and tables."""
    def step(s: Any) -> Any:
        table = (list(s.table.headings), [list(r.cells) for r in s.table.rows], s.table.line) if s.table is not None else None
        text = (str(s.text), s.text.content_type, s.text.line) if s.text is not None else None
        return (s.keyword, s.step_type, s.name, s.line, text, table)

    def background(b: Any) -> Any:
        return None if b is None else (b.keyword, b.name, b.line, [step(s) for s in b.steps])

    def scenario(sc: Any) -> Any:
        examples = [(e.keyword, e.name, e.line, list(e.tags), list(e.table.headings), [list(r.cells) for r in e.table.rows])
                    for e in getattr(sc, "examples", [])]
        return (type(sc).__name__, sc.keyword, sc.name, sc.line, list(sc.tags), list(sc.description), [step(s) for s in sc.steps], examples)

    if feature is None:
        return None
    rules = [(r.keyword, r.name, r.line, list(r.tags), list(r.description), background(r.background), [scenario(s) for s in r.scenarios])
             for r in feature.rules]
    return (feature.keyword, feature.name, feature.line, list(feature.tags), list(feature.description), feature.language,
            background(feature.background), [scenario(s) for s in feature.scenarios], rules,
            [(type(i).__name__, i.name) for i in feature.run_items], [(type(s).__name__, s.name) for s in feature.walk_scenarios()])


FRENCH = """# language: fr
Fonctionnalité: Essai
  Scénario: un
    Soit une chose
    Et une autre
    Quand on demande
    Alors ça marche
"""


def test_behave_runs_from_the_one_parse_the_features_its_own_parser_gives(judged_sports_project: Path, tmp_path: Path) -> None:
    """Every node kind (rules, backgrounds, outlines, tags, doc strings, tables, And/But/* steps), another language,
    a file of comments only, and every file of a generated project: built from the gherkin-official parse, behave's
    features are the ones behave's own parser makes."""
    from bddgen.run.behave_model import behave_feature

    (tmp_path / "every.feature").write_text(EVERY_NODE)
    (tmp_path / "french.feature").write_text(FRENCH)
    (tmp_path / "comments.feature").write_text("# only a comment\n")
    files = [*sorted(tmp_path.glob("*.feature")), *sorted((judged_sports_project / "features").rglob("*.feature"))]
    for path in files:
        built = behave_feature(parse_gherkin(path.read_text(), str(path)), str(path))
        assert _behave_signature(built) == _behave_signature(behave.parser.parse_file(str(path))), path


def test_the_runner_selects_scenarios_by_file_and_line_and_reports_invalid_gherkin_as_behave_does(
    tmp_path: Path, parses: Counter[str]
) -> None:
    from behave.runner_util import FileLocationParser
    from behave.runner_util import parse_features as behave_parse_features

    from bddgen.run.behave_runner import parse_features

    path = tmp_path / "every.feature"
    path.write_text(EVERY_NODE)
    line = EVERY_NODE.splitlines().index("  Scenario: A conversation") + 1
    for locations in ([str(path)], [FileLocationParser.parse(f"{path}:{line}")]):  # as behave's command line gives them
        cache = FeatureCache()
        ours = parse_features(locations, cache)
        assert parses == Counter(gherkin=1) and cache.gherkin(path)[0] == EVERY_NODE  # read once, into the run's parse
        theirs = behave_parse_features(locations)
        assert [[s.name for s in f.walk_scenarios() if not getattr(s, "should_skip", False)] for f in ours] == [
            [s.name for s in f.walk_scenarios() if not getattr(s, "should_skip", False)] for f in theirs
        ]
        parses.clear()
    (tmp_path / "broken.feature").write_text("Feature: broken\n  Scenario: x\n    Given y\n  Feature: a second one\n")
    with pytest.raises(behave.parser.ParserError, match="broken.feature"):
        parse_features([str(tmp_path / "broken.feature")], FeatureCache())
