"""Deterministic checks of one written turn, each against the turn's own evidence. Every problem is
worded as an instruction, because it goes back to the LM when the turn is rewritten."""

from __future__ import annotations

import re
from typing import Sequence

from bddgen.config import TurnCheckSettings, default_of
from bddgen.evaluation.quantities import UNITS, quantities
from bddgen.implement.grounding import Facts, answer_facts, mentions, missing_facts
from bddgen.normalise import FUNCTION_WORDS, POSSESSIVES, PRONOUNS, contains_phrase, content_stems, content_words, normalise
from bddgen.features.wellformed import text_problems
from bddgen.numbers import read_quantity, states_quantity
from bddgen.specs import CANNOT_ANSWER
from bddgen.ner.base import CAPITALISED_RUN, EntityRecognizer
from bddgen.text import spoken_name, spoken_value, stem, stems, words

MAX_COPIED_WORDS: int = default_of(TurnCheckSettings, "max_copied_words")  # 6 may be names and a verb
COPIED_WORDS = MAX_COPIED_WORDS + 1  # a question sharing this many words in a row with its evidence copies the document
REPEATED_SHARE: float = default_of(TurnCheckSettings, "repeated_share")  # a question sharing this share of its words with an earlier one repeats it
PASTED_WORDS = 3  # a reply can paste a sentence only when the sentence says this many words beyond the question and answer
_PAIR = re.compile(r"\b[A-Za-z_][\w]*(?: [A-Za-z_][\w]*)?:\s")
_REQUEST = re.compile(
    r"^(what|which|who|whom|whose|when|where|why|how|is|are|was|were|do|does|did|can|could|has|have|had|will|would|should|"
    r"tell|give|list|name|show|find|please)\b",
    re.IGNORECASE,
)
_REFERENCES = (PRONOUNS - {"then"}) | POSSESSIVES | {"that", "same"}  # words a question refers back with


def well_formed(kind: str, text: str) -> list[str]:
    return [f"the {kind} is not well-formed: {p}" for p in text_problems(text)]


def _longest_shared_run(a: str, b: str) -> int:
    left, right = normalise(a).split(), normalise(b).split()
    best = 0
    previous = [0] * (len(right) + 1)
    for word in left:
        current = [0] * (len(right) + 1)
        for j, other in enumerate(right, start=1):
            if word == other:
                current[j] = previous[j - 1] + 1
                best = max(best, current[j])
        previous = current
    return best


COPIED = "the question copies the document"


def longest_copied_run(question: str, evidence: str) -> int:
    """The longest run of words `question` shares, in order, with its evidence."""
    return _longest_shared_run(question, evidence)


def glued_questions(question: str) -> bool:
    """Two questions in one: two question marks with words between them, or clauses joined with a semicolon."""
    asked = [part for part in question.split("?")[:-1] if part.strip(" ;,.")]
    return len(asked) > 1 or ";" in question


def question_problems(question: str, evidence: str) -> list[str]:
    """A question is a natural-language request: not a pasted table row, not a copied document fragment."""
    return form_problems(question) + copied_problems(question, evidence)


# "that club' points": a possessive of a word that does not end in s, written with its apostrophe alone
_CUT_POSSESSIVE = re.compile(r"\b([A-Za-z]*[A-RT-Za-rt-z])['’]\s")


def form_problems(question: str) -> list[str]:
    """A question is well-formed, one question a user would ask, and not a pasted table row."""
    problems = well_formed("question", question)
    # two different keys: a title with a colon said twice ("Pets on board: Cabin … Pets on board: Hold") is no row
    if len({pair.lower() for pair in _PAIR.findall(question)}) >= 2 or (";" in question and ":" in question):
        problems.append("the question pastes a table row (column: value; ...); ask in plain words")
    elif not question.rstrip().endswith("?") and not _REQUEST.match(question.strip()):
        problems.append("write a question a user would ask, ending with '?'")
    elif glued_questions(question):
        problems.append("ask one question: no second question after a '?' or a ';'")
    if (cut := _CUT_POSSESSIVE.search(question)) and sum(question.count(q) for q in "'’") == 1:  # one apostrophe: no quotation
        problems.append(f'"{cut.group(0).strip()}" is a possessive cut short: write "{cut.group(1)}\'s"')
    return problems


def copied_problems(question: str, evidence: str, most: int = MAX_COPIED_WORDS) -> list[str]:
    """A question sharing more than `most` words in a row with its evidence copies it, which no person asking does."""
    return [f"{COPIED}; ask in your own words"] if _longest_shared_run(question, evidence) > most else []


def left_out_problems(question: str, clause_question: str | None, sentence: str, answer: str, recognizer: EntityRecognizer) -> list[str]:
    """The names and numbers of the sentence's own clause (those its question worded by code keeps) that
    `question` leaves out: without them the question can have other answers ("Who won the Hallam Medal
    twice?" when the sentence says "twice with Calderford United" and others won it twice elsewhere)."""
    if not clause_question:
        return []
    kept = [f for f in answer_facts(sentence, recognizer).all() if mentions(clause_question, f) and not mentions(answer, f) and not mentions(f, answer)]
    return [f'the question leaves out "{f}", which its sentence says, so other answers may fit; name "{f}"' for f in kept if not mentions(question, f)]


def repeats_problems(question: str, earlier: Sequence[str], share: float = REPEATED_SHARE) -> list[str]:
    """A question asks something new: it is not an earlier question of the conversation again. One that names
    something the earlier did not ("… EMEA net sales …" after "… APAC net sales …") asks something new."""
    words = set(normalise(question).split())
    for previous in earlier:
        other = set(normalise(previous).split())
        new_names = _specifics(question) - _specifics(previous)
        if words and len(words & other) >= share * len(words | other) and not new_names:
            return [f'the question repeats an earlier one ("{previous}"); ask what the evidence says instead']
    return []


def _specifics(question: str) -> set[str]:
    """The names and numbers a question says: its capitalised words after the first, and words with digits."""
    tokens = words(question, keep="_'’-", fold=False)
    return {t.lower() for n, t in enumerate(tokens) if (n and t[:1].isupper()) or any(ch.isdigit() for ch in t)}


def names_problems(question: str, named: dict[str, str], *, refers_to: str = "", proxy: str = "") -> list[str]:
    """The question names every value that selects its answer, and refers to `refers_to` (an entity an
    earlier answer named) without writing it, through `proxy` or a pronoun."""
    text = normalise(question)
    problems = [
        f'the question must name {column.replace("_", " ")} "{value}" so that it has one answer'
        for column, value in named.items()
        if not mentions(question, value) and not mentions(question, spoken_value(value))  # a day, not its midnight
    ]
    if refers_to:
        if contains_phrase(text, refers_to):
            problems.append(f'do not write "{refers_to}"; refer to it as "{proxy}"')
        elif not (set(text.split()) & _REFERENCES or (proxy and contains_phrase(text, proxy))):
            problems.append(f'refer to "{refers_to}" (named in the previous answer) as "{proxy}"')
    return problems


# capitalised words that are no name of a thing the evidence must state: the speaker, dates said in words
_NOT_NAMES = frozenset(
    "I I'm I'd I've January February March April May June July August September October November December "
    "Monday Tuesday Wednesday Thursday Friday Saturday Sunday".split()
)


def unstated_names(question: str, evidence: str) -> list[str]:
    """Problems of a question that names something its evidence (a row with its table's title and columns,
    or a sentence with its document's title) does not: asked about a row of the Golden Boot table, "… win
    the Velorian Player of the Year in 2004?" states an award the row never mentions, so its answer may
    hold only by chance. A name is a run of capitalised words; the question's first word is capitalised
    anyway and is not read as a name."""
    names = []
    for match in CAPITALISED_RUN.finditer(question):
        words = match.group(0).split()[1:] if match.start() == 0 else match.group(0).split()
        words = [w for w in words if w.strip(" '’-?,.") not in _NOT_NAMES] if len(words) == 1 else words
        name = " ".join(words).strip(" '’-")
        if name and not mentions(evidence, name):
            names.append(name)
    if not names:
        return []
    return [f"the question names {', '.join(dict.fromkeys(names))}, which its evidence does not say; ask only about what the evidence says"]


def leak_problems(question: str, value: str, named: Sequence[str]) -> list[str]:
    """The question must not contain its own answer."""
    if value and mentions(question, value) and not any(normalise(value) == normalise(n) for n in named):
        return [f'the question gives away its answer "{value}"; ask for it instead']
    return []


def grounding_problems(answer: str, evidence: str, recognizer: EntityRecognizer) -> tuple[Facts, list[str]]:
    """(the answer's facts, problems): every entity and whole-token number of the answer holds in the evidence."""
    facts = answer_facts(answer, recognizer)
    if not facts:
        return facts, ["the answer states no name or number of the evidence; answer with the fact the evidence gives"]
    missing = missing_facts(facts, evidence)
    if missing:
        return facts, [f"the evidence does not say {', '.join(missing)}; answer only with what the evidence says"]
    return facts, []


# words a question may use that no evidence needs to contain: what is asked for, not what is claimed
_ASKING_WORDS = frozenset(
    "name named called team club person player people year date time number many much long kind type happen happened "
    "tell know known mean means role according document documents say says fact held located situated place "
    # words that frame a question on a text without asking a relation of it ("What is the amount mentioned for …?")
    "mention mentions mentioned regarding stated specified described report reported text passage figure figures amount amounts".split()
)


def shared_relation(question: str, sentence: str, recognizer: EntityRecognizer) -> set[str]:
    """The words of `question`, stemmed, that state a relation its sentence also states: content words
    other than the asking words ("where", "located", "name") and the words of the names it contains.
    "When was Orlanmouth Wanderers founded?" shares "found" with "…, founded in 1899, …"; "Where is
    Orlanmouth Wanderers located?" shares nothing with "Seagate Park hosts the Coast Derby between
    Orlanmouth Wanderers and …"."""
    names = set(stems(" ".join(answer_facts(question, recognizer).all())))
    relation = set(stems(" ".join(content_words(question) - _ASKING_WORDS))) - names
    return relation & set(stems(sentence))


def dropped_relations(question: str, parts: Sequence[tuple[str, str, str]]) -> list[str]:
    """Problems of a SYNTHESIS question that does not ask what one of its combined turns asked. Each part is
    (its question, what it asks for — a table column, or "" for a text turn —, the names it is about): a
    table part's column words that the part itself used must all be asked ("league meetings", not "league
    titles" again), a text part's question must keep at least half of its words other than names ("voted …
    Player of the Year")."""
    asked = set(stems(question))
    problems = []
    for part_question, column, names in parts:
        if column:
            wanted = set(stems(spoken_name(column)))  # "MediaTypeId" is asked as "media type id"
            wanted = (wanted & set(stems(part_question))) or wanted  # in the part's own words ("fee in euros" for change_fee_eur)
            if not wanted <= asked:
                problems.append(f'the question must ask for the {spoken_name(column)} again, as "{part_question}" did')
            continue
        relation = set(stems(" ".join(content_words(part_question) - _ASKING_WORDS))) - set(stems(names))
        if relation and 2 * len(relation & asked) < len(relation):
            problems.append(f'the question must ask again what "{part_question}" asked')
    return problems


_JOINED = re.compile(r",\s+and\s+")
_ASKS = re.compile(r"\b(?:what|which|who|whom|whose|when|where|why|how|is|are|was|were|do|does|did|can|could|will|would|has|have|had)\b",
                   re.IGNORECASE)


def parts_asking_nothing(question: str) -> list[str]:
    """The parts of a SYNTHESIS question after ", and " that ask nothing: "…, and According to Report 19 notes?" (the LM
    kept the tail of a question it combined, not the question). A part asks nothing when it says no question word,
    opens with a capital and has words of its own in lower case: a name closing a list ("…, and Blue Tarn") is no part."""
    parts = _JOINED.split(question.strip().rstrip("?"))
    return [p.strip() for p in parts[1:] if p.strip()[:1].isupper() and not _ASKS.search(p)
            and any(w.islower() and len(w) > 2 and w not in FUNCTION_WORDS for w in p.split())]


def unsupported_words(answer: str, evidence: str, question: str) -> list[str]:
    """Content words of a text answer that neither its evidence sentence nor the question contains
    (a month, a verb, a place the sentence never says), allowing another form of a word ("fees" of "fee")."""
    known = content_stems(f"{evidence} {question}")
    return sorted(w for w in content_words(answer) if stem(w) not in known)


def agrees(reference: Facts, exact: str, reply: str) -> bool:
    """A round-trip reply agrees with the reference: it states the exact value (table turns), or every
    entity and whole-token number of the reference answer (text turns). A negative value is stated negative
    or as a fall ("fell by 94" for -94), never as its bare size."""
    if exact:
        negative = (quantity := read_quantity(exact)) is not None and not quantity.nil and quantity.value < 0
        return mentions(reply, exact) and (not negative or states_quantity(reply, exact) is True)
    return bool(reference) and not missing_facts(reference, reply)


COPIED_SHARE: float = default_of(TurnCheckSettings, "copied_reply_share")  # a round-trip reply holding this share of its sentence's other words copies it


def copies_sentence(reply: str, sentence: str, question: str, answer: str, share: float = COPIED_SHARE) -> bool:
    """Whether a round-trip reply pastes its evidence sentence instead of answering: it holds most of the
    sentence's words that neither the question nor the answer says. Such a reply states every fact of the
    sentence, so it "agrees" with any of them, whatever the question asked."""
    others = content_words(sentence) - content_words(question) - content_words(answer)
    return len(others) >= PASTED_WORDS and len(others & content_words(reply)) >= share * len(others)


_ASKS_FOR_A_NAME = re.compile(r"^\W*(?:where|who|whom)\b", re.IGNORECASE)


_HOW_MANY = re.compile(r"\bhow\s+(?:many|much)\s+([a-z]+)", re.IGNORECASE)
# "how long" of a delay, a wait or a stay asks for a duration ("How long was my flight delayed?" is no "1,500 km")
_HOW_LONG_IN_TIME = re.compile(
    r"\bhow\s+long\b.*\b(?:delay(?:s|ed)?|late|wait(?:s|ed|ing)?|take[sn]?|took|last(?:s|ed)?|stay(?:s|ed)?|ago|before|after|period|duration)\b",
    re.IGNORECASE,
)
# the fee word in lower case: "the Fixed Price" of a report names a line item, not a price asked for
_ASKS_FOR_AN_AMOUNT = re.compile(r"^\W*(?:[Ww]hat|[Hh]ow much)\b.*\b(?:fees?|prices?|costs?|charges?)\b(?!\s+(?:policy|policies|rules?|conditions?))")
# "What does the document state about …?", "What do the notes say about …?": a statement is asked, not a name
_ASKS_FOR_A_STATEMENT = re.compile(
    r"^\W*what\s+(?:do|does|did)\b.*\b(?:state|say|explain|describe|mention|note)s?\b|\bwhat\s+is\s+(?:said|stated)\b", re.IGNORECASE
)
STATEMENT_MIN_WORDS = 3  # an answer shorter than this is a name or a figure, no statement
_ASKS_FOR_A_YEAR = re.compile(r"^\W*(?:in\s+)?(?:what|which)\s+years?\b", re.IGNORECASE)  # "What years did … change?"


def answer_kind_problems(question: str, answer: str, sentence: str = "") -> list[str]:
    """A "where" or "who" question answered by a bare number or year ("Where did he coach the club?" -> "1995")
    asks for something its answer is not; so does a "what are the fees" question answered without an amount ("Pet
    fees are refunded only if …"), a "what does the document state" question answered by a bare name ("Group"), a "what years" question
    answered without a year ("15.8 million USD"), a "how long" question of a delay or a wait answered by a distance or another
    quantity that is no duration ("How long was my flight delayed?" -> "Up to 1,500 km"), and a "how many days" question
    whose number the sentence (or the answer) gives in another unit ("within 24 hours of purchase": 24 is no number of
    days)."""
    span = answer.strip()
    if _ASKS_FOR_A_NAME.match(question) and span and not any(ch.isalpha() for ch in span):
        return [f'the question asks "{question.split()[0].strip()}", but its answer is "{span}"; ask for "{span}"']
    if (_ASKS_FOR_AN_AMOUNT.search(question) and span and span != CANNOT_ANSWER and not any(ch.isdigit() for ch in span)
            and "free" not in span.lower()):
        return [f'the question asks what a fee or price is, but its answer "{span[:80]}" states no amount; ask what the answer says']
    if _ASKS_FOR_A_YEAR.match(question) and span != CANNOT_ANSWER and not re.search(r"(?<!\d)(?:1[5-9]|20|21)\d\d(?!\d)", span):
        return [f'the question asks for a year, but its answer "{span[:80]}" states none; ask what the answer says']
    if _ASKS_FOR_A_STATEMENT.search(question) and span != CANNOT_ANSWER and len(span.split()) < STATEMENT_MIN_WORDS:
        return [f'the question asks what is stated, but its answer "{span}" is no statement; ask for "{span}" itself']
    if _HOW_LONG_IN_TIME.search(question) and span != CANNOT_ANSWER:
        dimensions = {q.dimension for q in quantities(span)}
        if "time" not in dimensions and dimensions - {""}:
            return [f'the question asks how long in time, but its answer "{span[:80]}" states no duration; ask what the answer says']
    asked = _HOW_MANY.search(question)
    unit = UNITS.get(asked.group(1).lower()) if asked else None
    if unit is None or not span:
        return []
    for text, number in ((span, r"[\d.,]+"), (sentence, r"(?<![\d.,])" + re.escape(span))):
        given = re.search(number + r"\s*([a-z%]+)", text, re.IGNORECASE)
        said = UNITS.get(given.group(1).lower()) if given else None
        if said is not None and said != unit:
            return [f'the question asks how many {asked.group(1)}, but the evidence says "{given.group(0)}"; ask in its unit']
    return []


_LEADING_NAME = re.compile(r"^[A-Z][\w'’-]*(?:\s+(?:[A-Z][\w'’-]*|\d[\w.-]*))+")  # "Report 25" of "Report 25 notes"


def title_names(title: str) -> list[str]:
    """A document title and the shorter names a question may call it by: "Report 25 notes: 16. Restructuring costs"
    is also "Report 25 notes" and "Report 25" (its source); not "Restructuring costs" alone, a heading other
    documents of the corpus may have too."""
    names = [title]
    head, colon, _ = (part.strip() for part in title.partition(":"))
    if colon:
        names.append(head)
    leading = _LEADING_NAME.match(head)
    if leading:
        names.append(leading.group(0))
    return [n for n in dict.fromkeys(names) if n]


def unnamed_subject(question: str, subjects: Sequence[str]) -> list[str]:
    """A question that names none of `subjects` (a text document's title, the other names of its sentence)
    leans on the conversation for what "the club" or "it" is, and an earlier turn may be about something else."""
    if not subjects or any(mentions(question, s) for s in subjects):
        return []
    return [f'the question must name "{subjects[0]}" (or another name its sentence says): an earlier turn may be about something else']
