"""Questions worded by code from an evidence sentence: the sentence's own clause with its answer taken out
and asked for with a wh-word.

Used when every LM wording of a text turn failed its checks, and shown to the LM as the plain form of
the question it should phrase. The question keeps the clause's other words (its subject, verb and
modifiers), so it asks exactly the relation the sentence states, about the things the sentence names:

    "Luca Fenwright was voted Player of the Year for the second time, and Vey was named Coach of the Year."
        answer "Luca Fenwright"      -> "Who was voted Player of the Year for the second time?"
    "The 2023 final was played on 19 November 2023 at Crownfield Stadium."
        answer "Crownfield Stadium"  -> "Where was the 2023 final played on 19 November 2023?"
        answer "19 November 2023"    -> "When was the 2023 final played at Crownfield Stadium?"
    "Eastquay Olympic conceded only 20 goals."
        answer "20"                  -> "How many goals did Eastquay Olympic concede?"

The sentence is parsed with a dependency parser (spaCy's); a sentence whose answer sits where no rule
applies gets no question (None), never a guess. Coordinated clauses and appositions are left out.
"""

from __future__ import annotations

import re
from typing import Any, Protocol, runtime_checkable

from bddgen.normalise import POSSESSIVES, PRONOUNS

_SUBJECTS = frozenset({"nsubj", "nsubjpass"})
_OBJECTS = frozenset({"dobj", "attr", "oprd"})
_PEOPLE = frozenset({"PERSON", "ORG", "NORP", "GPE"})  # GPE: a named side ("Veloria reached the quarter-finals")
_TIMES = frozenset({"DATE", "TIME"})
_PLACES = frozenset({"GPE", "LOC", "FAC"})
_DO = {"VBD": "did", "VBZ": "does", "VBP": "do"}
_WH_TAGS = frozenset({"WDT", "WP", "WP$", "WRB"})


@runtime_checkable
class SentenceParser(Protocol):
    """Anything that parses an English sentence into spaCy's Doc shape (tokens with dep_, head, pos_, tag_,
    lemma_, ent_type_), or gives None when it cannot."""

    def parse(self, text: str) -> Any | None: ...


def question_for(
    sentence: str, answer: str, parser: SentenceParser, *, replace: tuple[str, str] = ("", ""), lean: bool = False
) -> str | None:
    """The question `sentence` answers with `answer`, worded from the sentence itself; None when no rule fits.

    `replace` = (name, phrase) writes `phrase` where the question would name `name` (a FILLER turn says
    "that club" for the club an earlier answer named); None when the question does not name it.
    `lean` keeps only the clause's core: its subject, verb, objects and one prepositional phrase, leaving out
    adverbial clauses and further modifiers, so the question does not repeat the sentence at length."""
    parsed = _answer_in(sentence, answer, parser)
    if parsed is None:
        return None
    doc, root, inside = parsed
    if not _whole_fact(root, inside):
        return None
    question = _question(root, inside, lean)
    if question is None:
        return None
    name, phrase = replace
    if name:
        if name not in question:
            return None
        question = _refer(question, doc, name, phrase)
    return question


def one_of_several(sentence: str, answer: str, parser: SentenceParser) -> bool:
    """Whether `answer` is one item of several coordinated ones ("Elias Marwood … and Idris Calloway both
    scored"): an answer naming it alone is incomplete, whatever the question."""
    parsed = _answer_in(sentence, answer, parser)
    return parsed is not None and _coordinated(parsed[1])


_NOUNS = frozenset({"NOUN", "PROPN"})
_NAMING = frozenset({"name", "title"})


def asks_for_its_governor(question: str, sentence: str, answer: str, parser: SentenceParser) -> str | None:
    """The noun and preposition whose object `answer` is in `sentence` ("cup of"), when `question` asks
    for that noun itself: of "The Crown Shield is the league cup of Veloria", "What is the name of the league cup that
    Crown Shield is?" asks for a league cup, so "Veloria" does not answer it ("Which country is the Crown
    Shield the league cup of?" does). None when the question asks for something else or nothing parses."""
    parsed = _answer_in(sentence, answer, parser)
    if parsed is None:
        return None
    root = parsed[1]
    if root.dep_ != "pobj" or root.head.dep_ != "prep" or root.head.head.pos_ not in _NOUNS:
        return None
    governor = root.head.head
    asked = _asked_noun(question, parser)
    return f"{governor.text} {root.head.text}" if asked is not None and asked.lemma_.lower() == governor.lemma_.lower() else None


def _asked_noun(question: str, parser: SentenceParser) -> Any | None:
    """The noun a wh-question asks for: "which country" -> country; "What is the league cup …" -> cup;
    "What is the name of the league cup …" -> cup. None for "where", "when", "who" and the like."""
    doc = parser.parse(question)
    wh = next((t for t in doc if t.tag_ in _WH_TAGS), None) if doc is not None else None
    if wh is None:
        return None
    if wh.dep_ == "det" and wh.head.pos_ in _NOUNS:
        noun = wh.head
    elif wh.head.lemma_ == "be":
        noun = next((c for c in wh.head.children if c.dep_ in {"nsubj", "attr"} and c.i != wh.i and c.pos_ in _NOUNS), None)
    else:
        return None
    while noun is not None and noun.lemma_.lower() in _NAMING:
        of = next((c for c in noun.children if c.dep_ == "prep" and c.lower_ == "of"), None)
        named = next((c for c in of.children if c.dep_ == "pobj" and c.pos_ in _NOUNS), None) if of is not None else None
        if named is None:
            break
        noun = named
    return noun


def _answer_in(sentence: str, answer: str, parser: SentenceParser) -> tuple[Any, Any, set[int]] | None:
    """The parsed sentence, the token heading `answer` in it, and the indices of the answer's tokens."""
    start = sentence.find(answer)
    if not answer or start < 0:
        return None
    doc = parser.parse(sentence)
    if doc is None:
        return None
    span = [t for t in doc if t.idx >= start and t.idx + len(t.text) <= start + len(answer)]
    if not span:
        return None
    inside = {t.i for t in span}
    root = next((t for t in span if t.head.i not in inside or t.head.i == t.i), span[0])
    return doc, root, inside


_TOGETHER = frozenset({"both", "all", "each"})


def _coordinated(root: Any) -> bool:
    """One name of a list: a conjunct, the first name of "A and B" ("Harbour City FC and Calderford United have
    often fielded …"; "between A and B" is one match, not a list), a phrase whose "of" object has a conjunct (a
    parse hangs "and Idris Calloway" on the club of "Elias Marwood of Korrin Sporting"), or a subject marked
    "both"/"all"/"each"."""
    listed = any(
        t.dep_ == "conj" and t.pos_ in {"PROPN", "NOUN"} and t.head.dep_ == "pobj" and t.head.head.lower_ == "of"
        for t in root.subtree
    )
    together = any(c.lower_ in _TOGETHER and c.dep_ in {"appos", "det", "predet", "quantmod"} for c in root.children)
    first = any(c.dep_ == "conj" and c.pos_ in {"PROPN", "NOUN"} for c in root.children) and (_alternatives(root) or not _between(root))
    # a name that qualifies a listed noun ("APAC" of "the EMEA and APAC regions") is listed with it
    qualifies = root.dep_ == "compound" and root.head.pos_ in {"PROPN", "NOUN"} and _coordinated(root.head)
    return (root.dep_ == "conj" and (_alternatives(root.head) or not _between(root.head))) or listed or together or first or qualifies


def _alternatives(first: Any) -> bool:
    """'A or B': two things listed, never one pair ('from Reykjavik or Dubai' is no route)."""
    return any(c.dep_ == "cc" and c.lower_ == "or" for c in first.children)


def _between(root: Any) -> bool:
    """'between A and B' (and 'from A to B'): the pair names one thing, a match or a route."""
    return root.dep_ == "pobj" and root.head.lower_ in {"between", "from"}


def _refer(question: str, doc: Any, name: str, phrase: str) -> str:
    """`question` saying `phrase` for `name` together with what introduces it ("the Eastquay goalkeeper Oskar
    Thale" -> "that person")."""
    start = doc.text.find(name)
    inside = [t for t in doc if start <= t.idx < start + len(name)]
    root = next((t for t in inside if t.head not in inside or t.head.i == t.i), None) if inside else None
    while root is not None and root.dep_ in {"appos", "compound"} and root.head.i < inside[0].i:
        root = root.head  # "the Eastquay goalkeeper" + apposed "Oskar Thale": one phrase
    if root is not None:
        lead = [t for t in root.subtree if t.i < inside[0].i]
        if lead and all(t.i == inside[0].i - len(lead) + n for n, t in enumerate(lead)):  # a phrase right before the name
            introduced = doc.text[lead[0].idx:start + len(name)]
            replaced = re.sub(re.escape(introduced), phrase, question, count=1, flags=re.IGNORECASE)
            if replaced != question:
                return replaced
    return re.sub(rf"\b(?:the\s+)?{re.escape(name)}", phrase, question, count=1, flags=re.IGNORECASE)


def _whole_fact(root: Any, answer: set[int]) -> bool:
    """The answer is the whole phrase it heads, not part of one ("EUR" of "55 EUR", "Player" of "Player of the
    Year", one name of a list); only a determiner or a title before it ("goalkeeper Oskar Thale") may stay out,
    and, behind a preposition, what follows it (the whole prepositional phrase leaves the question)."""
    if _coordinated(root):
        return False
    first, last = min(answer), max(answer)
    behind_preposition = root.dep_ == "pobj"
    for token in root.subtree:
        if token.i in answer or token.dep_ == "det" or (behind_preposition and token.i > last):
            continue
        title = token.dep_ in {"compound", "amod"} and token.pos_ in {"NOUN", "ADJ"} and token.i < first and token.text.islower()
        if not title:
            return False
    return True


def _question(root: Any, answer: set[int], lean: bool = False) -> str | None:
    verb, attachment = _clause_verb(root)
    if verb is None or not _main_clause(verb) or _said_again(verb) or not _self_contained(verb, answer, lean):
        return None
    if attachment in _SUBJECTS:  # a named subject does something: a person, a club, a company
        wh = "Who" if root.ent_type_ in _PEOPLE or (root.pos_ == "PROPN" and not root.ent_type_) else "What"
        return _asked_for_subject(verb, wh, root, lean)
    if attachment in _OBJECTS:
        if root.ent_type_ in _TIMES or root.pos_ == "NUM":
            return None
        wh = "Who" if root.ent_type_ in _PEOPLE else "What"
        return _inverted(verb, wh, skip=_subtree(root), lean=lean)
    if attachment == "prep":
        preposition = root.head
        if root.ent_type_ in _TIMES:
            return _inverted(verb, "When", skip=_subtree(preposition), lean=lean, answer_preposition=preposition.i)
        if root.ent_type_ in _PLACES and preposition.lower_ in {"at", "in"}:
            return _inverted(verb, "Where", skip=_subtree(preposition), lean=lean, answer_preposition=preposition.i)
        return None
    if attachment == "count":
        counted = root.head
        if counted.dep_ not in _OBJECTS | _SUBJECTS or not all(t.i in answer or t.dep_ in {"advmod", "quantmod"} for t in root.subtree):
            return None
        noun = _join([t for t in counted.subtree if t.i > root.i and t.i not in _subtree(root)])
        if counted.dep_ in _SUBJECTS:
            return _asked_for_subject(verb, f"How many {noun}", counted, lean)
        return _inverted(verb, f"How many {noun}", skip=_subtree(counted), lean=lean)
    return None


def _clause_verb(root: Any) -> tuple[Any | None, str]:
    """The verb whose clause holds the answer, and how the answer attaches to it."""
    if root.dep_ in _SUBJECTS | _OBJECTS and root.head.pos_ in {"VERB", "AUX"}:
        return root.head, root.dep_
    if root.dep_ == "pobj" and root.head.dep_ == "prep" and root.head.head.pos_ in {"VERB", "AUX"}:
        return root.head.head, "prep"
    if root.dep_ == "nummod" and root.head.head.pos_ in {"VERB", "AUX"}:
        return root.head.head, "count"
    return None, ""


def _main_clause(verb: Any) -> bool:
    """The sentence's main verb or one coordinated with it: a subordinate clause ("when it …") is no question's frame."""
    return verb.dep_ == "ROOT" or (verb.dep_ == "conj" and verb.head.dep_ == "ROOT")


def _said_again(verb: Any) -> bool:
    """The clause's relation is stated again for another value by a conjunct without a verb of its own
    ("named Player of the Year in 1996, and again in 2003"): the question would have both answers."""
    return any(c.dep_ == "conj" and c.pos_ not in {"VERB", "AUX"} for c in verb.children)


def _self_contained(verb: Any, answer: set[int], lean: bool = False) -> bool:
    """The clause's other words need nothing said before: no pronoun or 'there' pointing elsewhere, no
    relative or question word left behind, no parenthesis."""
    for token in _clause(verb, lean):
        if token.i in answer:
            continue
        if token.lower_ in PRONOUNS or token.tag_ in _WH_TAGS or token.text in {"(", ")"}:
            return False
    return True


def _subtree(token: Any) -> set[int]:
    return {t.i for t in token.subtree}


_MODIFIERS = frozenset({"advcl", "npadvmod", "acl", "relcl", "appos"})


def _clause(verb: Any, lean: bool = False, answer_preposition: int = -1) -> list[Any]:
    """The verb's own clause: its subtree without what is coordinated with the verb (and the conjunction and
    punctuation joining it), and without asides set off by a comma (an apposition, a relative clause);
    coordinated names inside a phrase stay ("between A and B"). `lean`: also without adverbial clauses and
    modifiers of the verb, and with one prepositional phrase of the verb only: the first one other than the
    answer's own (`answer_preposition`, which the question leaves out anyway)."""
    left_out: set[int] = set()
    prepositions = [c for c in verb.children if c.dep_ in {"prep", "agent"} and c.i != answer_preposition]
    keep_preposition = prepositions[0].i if prepositions else -1
    for token in verb.subtree:
        if token.i == verb.i or token.i in left_out:
            continue
        joined = token.head.i == verb.i and token.dep_ in {"conj", "cc", "punct", "parataxis", "preconj"}
        aside = token.dep_ in {"appos", "relcl"} and token.left_edge.i > 0 and token.doc[token.left_edge.i - 1].text == ","
        trimmed = lean and token.head.i == verb.i and (
            token.dep_ in _MODIFIERS or (token.dep_ == "advmod" and token.lower_ not in {"not", "never"})
            or (token.dep_ in {"prep", "agent"} and token.i != keep_preposition)
        )
        if joined or aside or trimmed:
            left_out |= _subtree(token)
    return [t for t in verb.subtree if t.i not in left_out]


def _subject(verb: Any) -> Any | None:
    """The verb's one nominal subject (a noun, name or pronoun) before it; None when the parse gives it
    none or several (then the parse is likely wrong)."""
    subjects = [c for c in verb.children if c.dep_ in _SUBJECTS]
    if len(subjects) != 1 or subjects[0].pos_ not in {"NOUN", "PROPN", "PRON"} or subjects[0].i > verb.i:
        return None
    return subjects[0]


def _asked_for_subject(verb: Any, wh: str, asked: Any, lean: bool = False) -> str | None:
    """`wh` + the clause after the subject, then what came before it ("In 2019, X won the cup" -> "Who won the cup in 2019")."""
    if _subject(verb) is None or _subject(verb).i != asked.i:
        return None
    taken = _subtree(asked)
    clause = _clause(verb, lean)
    after = [t for t in clause if t.i > max(taken)]
    before = [t for t in clause if t.i < min(taken)]
    if not after:
        return None
    return _finish(f"{wh} {_join(after)} {_join(before, lower_first=True)}")


def _words(verb: Any, *, skip: set[int], swap: dict[int, str] | None = None) -> str:
    """The clause's words without `skip`, with `swap`'s replacements."""
    return _join([t for t in _clause(verb) if t.i not in skip], swap or {})


def _join(tokens: list[Any], swap: dict[int, str] | None = None, lower_first: bool = False) -> str:
    """Tokens as the sentence spaces them ("non-refundable", "club's"); a space wherever words were taken out
    between them; `swap` replaces a token's text ("" drops it); `lower_first` lowers a first word that is no name."""
    swap = swap or {}
    words: list[str] = []
    previous: Any = None
    for token in tokens:
        text = swap.get(token.i, token.text)
        if lower_first and not words and token.pos_ not in {"PROPN", "PRON"}:
            text = text.lower()
        glued = previous is not None and previous.i == token.i - 1 and not previous.whitespace_
        if text:
            words.append(text if glued or not words else " " + text)
        previous = token
    return "".join(words)


def _inverted(verb: Any, wh: str, *, skip: set[int], lean: bool = False, answer_preposition: int = -1) -> str | None:
    """`wh` + auxiliary + subject + the rest of the clause ("Where was the final played …", "How many goals did X concede")."""
    subject = _subject(verb)
    if subject is None or subject.i in skip:
        return None
    auxiliary = next((c for c in verb.children if c.dep_ in {"aux", "auxpass"}), None)
    swap: dict[int, str] = {}
    if auxiliary is not None:
        lead = auxiliary.text
        swap[auxiliary.i] = ""
    elif verb.lemma_ == "be":
        lead = verb.text
        swap[verb.i] = ""
    elif verb.tag_ in _DO:
        lead = _DO[verb.tag_]
        swap[verb.i] = verb.lemma_
    else:
        return None
    taken = _subtree(subject)
    if any(t.lower_ in POSSESSIVES for t in subject.subtree):
        return None  # "his side": whose, the question cannot say
    said = _join(list(subject.subtree), lower_first=True)
    clause = [t for t in _clause(verb, lean, answer_preposition) if t.i not in skip | taken]
    after = [t for t in clause if t.i > subject.i]
    before = [t for t in clause if t.i < subject.i and t.i not in swap]
    return _finish(f"{wh} {lead.lower()} {said} {_join(after, swap)} {_join(before, lower_first=True)}")


def _finish(text: str) -> str:
    """One space between words, no dangling comma or conjunction, a capital first letter and one question mark."""
    words = re.sub(r"\s*,(\s*,)+", ",", " ".join(text.split()))
    words = re.sub(r"(?:[\s,;:.!?]|\b(?:and|or|but)\b)+$", "", words)
    return words[:1].upper() + words[1:] + "?"
