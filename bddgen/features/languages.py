"""The step phrases bddgen writes, in each Gherkin language it writes them in (`# language: xx`).

Gherkin keywords (Feature, Rule, Scenario, Given/When/Then/And) are taken from the gherkin
dialects, the step phrases are bddgen's; behave's step library registers every language's phrases,
so a German suite runs with the same steps as an English one.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

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


def quoted_start(fields: tuple[str, ...] = ("ask", "agree", "contains")) -> re.Pattern[str]:
    """The start of a step with a quoted argument (`the user asks "`, ...) in every language, to
    recognise such a step whose quotes do not close where the step ends."""
    patterns = [getattr(phrases, field) for phrases in STEP_PHRASES.values() for field in fields]
    prefixes = dict.fromkeys(re.escape(pattern.split('"', 1)[0]) for pattern in patterns)
    return re.compile('^(?:' + "|".join(prefixes) + ')"')


@dataclass(frozen=True)
class Keywords:
    """The Gherkin keywords bddgen writes in one language (each is in gherkin's and behave's dialect)."""

    feature: str
    rule: str
    scenario: str
    given: str
    when: str
    then: str
    and_: str


KEYWORDS: dict[str, Keywords] = {
    "en": Keywords("Feature", "Rule", "Scenario", "Given", "When", "Then", "And"),
    "de": Keywords("Funktionalität", "Regel", "Szenario", "Angenommen", "Wenn", "Dann", "Und"),
    "fr": Keywords("Fonctionnalité", "Règle", "Scénario", "Soit", "Quand", "Alors", "Et"),
    "es": Keywords("Característica", "Regla", "Escenario", "Dado", "Cuando", "Entonces", "Y"),
}


def keywords(language: str) -> Keywords:
    return KEYWORDS[writing_language(language)]


def phrases(language: str) -> StepPhrases:
    return STEP_PHRASES[writing_language(language)]
