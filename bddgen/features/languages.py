"""The step phrases bddgen writes, in each Gherkin language it writes them in (`# language: xx`).

Gherkin keywords (Feature, Rule, Scenario, Given/When/Then/And) come from the gherkin-official
dialects, the step phrases from the table below; behave's step library registers every language's
phrases, so a German suite runs with the same steps as an English one.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from gherkin.dialect import Dialect

DEFAULT_LANGUAGE = "en"


@dataclass(frozen=True)
class StepPhrases:
    """behave `parse` patterns of the five steps, in one language."""

    ask: str
    agree: str
    abstain: str
    contains: str
    satisfy: str


STEP_PHRASES: dict[str, StepPhrases] = {
    "en": StepPhrases(
        ask='the user asks "{question}"',
        agree='the answer should agree with "{answer}"',
        abstain="the assistant should say it cannot answer",
        contains='the answer should contain "{value}"',
        satisfy="the conversation should satisfy the spec",
    ),
    "de": StepPhrases(
        ask='der Benutzer fragt "{question}"',
        agree='die Antwort sollte mit "{answer}" übereinstimmen',
        abstain="der Assistent sollte sagen, dass er nicht antworten kann",
        contains='die Antwort sollte "{value}" enthalten',
        satisfy="das Gespräch sollte die Spezifikation erfüllen",
    ),
    "fr": StepPhrases(
        ask="l'utilisateur demande \"{question}\"",
        agree='la réponse devrait concorder avec "{answer}"',
        abstain="l'assistant devrait dire qu'il ne peut pas répondre",
        contains='la réponse devrait contenir "{value}"',
        satisfy="la conversation devrait respecter la spécification",
    ),
    "es": StepPhrases(
        ask='el usuario pregunta "{question}"',
        agree='la respuesta debería coincidir con "{answer}"',
        abstain="el asistente debería decir que no puede responder",
        contains='la respuesta debería contener "{value}"',
        satisfy="la conversación debería cumplir la especificación",
    ),
}
"""Languages with localized step phrases; any other corpus language is written in English."""


def writing_language(language: str) -> str:
    """The language a suite is written in: the corpus language when bddgen has its phrases, else English."""
    return language if language in STEP_PHRASES else DEFAULT_LANGUAGE


def any_language(field: str) -> re.Pattern[str]:
    """One anchored regex matching the step `field` (ask, agree, ...) in every language.

    Phrases are `prefix"{name}"suffix` or fixed text; the prefixes and suffixes of all languages
    are alternatives around one named group, so `match.group(name)` reads any language.
    """
    patterns = [getattr(phrases, field) for phrases in STEP_PHRASES.values()]
    split = [re.split(r'"\{(\w+)\}"', pattern) for pattern in patterns]
    if all(len(parts) == 1 for parts in split):
        return re.compile("^(?:" + "|".join(re.escape(p) for p in patterns) + ")$")
    name = split[0][1]
    prefixes = "|".join(dict.fromkeys(re.escape(parts[0]) for parts in split))
    suffixes = "|".join(dict.fromkeys(re.escape(parts[2]) for parts in split))
    return re.compile(f'^(?:{prefixes})"(?P<{name}>.*)"(?:{suffixes})$')


@dataclass(frozen=True)
class Keywords:
    """The Gherkin keywords a writer uses in one language (trailing spaces trimmed)."""

    feature: str
    rule: str
    scenario: str
    given: str
    when: str
    then: str
    and_: str


def keywords(language: str) -> Keywords:
    """The first (most usual) keyword of each kind in `language`'s Gherkin dialect."""
    dialect = Dialect.for_name(language) or Dialect.for_name(DEFAULT_LANGUAGE)

    def first(words: list[str]) -> str:
        return next(w.strip() for w in words if w.strip() != "*")

    return Keywords(
        feature=first(dialect.feature_keywords),
        rule=first(dialect.rule_keywords),
        scenario=first(dialect.scenario_keywords),
        given=first(dialect.given_keywords),
        when=first(dialect.when_keywords),
        then=first(dialect.then_keywords),
        and_=first(dialect.and_keywords),
    )
