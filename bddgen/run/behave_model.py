"""behave's model of a .feature file built from the gherkin-official AST bddgen parses anyway, so a run parses each
file once: behave runs the same features, rules, scenarios and steps (names, keywords, lines, tags, doc strings and
tables) its own parser would give, and bddgen reads the comments behave's parser drops from the same parse."""

from __future__ import annotations

from typing import Any, Iterator

from behave import model
from behave.parser import Parser

_STEP_TYPES = {"Context": "given", "Action": "when", "Outcome": "then"}


def behave_feature(ast: dict[str, Any], filename: str) -> model.Feature | None:
    """The behave Feature of a parsed file (None for a file without a Feature, as behave's parser gives)."""
    node = ast.get("feature")
    if not node:
        return None
    line = node["location"]["line"]
    feature = model.Feature(
        filename, line, node["keyword"], node["name"], tags=_tags(node), description=_description(node), language=node["language"]
    )
    feature.parser = Parser(node["language"])  # behave's `context.execute_steps` parses steps with it
    _add_children(feature, node, filename)
    return feature


def _add_children(container: model.Feature | model.Rule, node: dict[str, Any], filename: str) -> None:
    for child in node.get("children", []):
        if "background" in child:
            background = child["background"]
            container.add_background(model.Background(
                filename, background["location"]["line"], background["keyword"], background["name"],
                steps=list(_steps(background["steps"], filename)), description=_description(background),
            ))
        elif "rule" in child:
            rule_node = child["rule"]
            rule = model.Rule(
                filename, rule_node["location"]["line"], rule_node["keyword"], rule_node["name"], tags=_tags(rule_node),
                description=_description(rule_node),
            )
            assert isinstance(container, model.Feature)
            container.add_rule(rule)
            _add_children(rule, rule_node, filename)
        elif "scenario" in child:
            container.add_scenario(_scenario(child["scenario"], filename))


def _scenario(node: dict[str, Any], filename: str) -> model.Scenario:
    line, steps = node["location"]["line"], list(_steps(node["steps"], filename))
    if not node.get("examples"):
        return model.Scenario(filename, line, node["keyword"], node["name"], tags=_tags(node), steps=steps, description=_description(node))
    outline = model.ScenarioOutline(filename, line, node["keyword"], node["name"], tags=_tags(node), steps=steps, description=_description(node))
    for examples in node["examples"]:
        outline.examples.append(model.Examples(
            filename, examples["location"]["line"], examples["keyword"], examples["name"], tags=_tags(examples),
            table=_table(examples.get("tableHeader"), examples.get("tableBody", [])),
        ))
    return outline


def _steps(nodes: list[dict[str, Any]], filename: str) -> Iterator[model.Step]:
    step_type = "given"  # behave's for a first step written with And, But or *
    for node in nodes:
        step_type = _STEP_TYPES.get(node.get("keywordType", ""), step_type)
        text = None
        if node.get("docString"):
            doc = node["docString"]
            text = model.Text(doc["content"], "text/plain", doc["location"]["line"])  # behave's parser says text/plain of every doc string
        table = None
        if node.get("dataTable"):
            rows = node["dataTable"]["rows"]
            table = _table(rows[0], rows[1:])
        yield model.Step(filename, node["location"]["line"], node["keyword"].rstrip(), step_type, node["text"], text=text, table=table)


def _table(header: dict[str, Any] | None, body: list[dict[str, Any]]) -> model.Table | None:
    if header is None:
        return None
    table = model.Table([cell["value"] for cell in header["cells"]], line=header["location"]["line"])
    for row in body:
        table.add_row([cell["value"] for cell in row["cells"]], row["location"]["line"])
    return table


def _tags(node: dict[str, Any]) -> list[model.Tag]:
    return [model.Tag(tag["name"][1:], tag["location"]["line"]) for tag in node.get("tags", [])]


def _description(node: dict[str, Any]) -> list[str]:
    """Description lines as behave keeps them: stripped, blank ones left out."""
    return [line.strip() for line in (node.get("description") or "").splitlines() if line.strip()]
