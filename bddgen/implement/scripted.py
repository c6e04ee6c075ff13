"""Replies for the implement stage's tasks that follow each prompt faithfully, for ScriptedLM: tests and
smoke runs of the whole stage without a model. They show what a well-behaved LM writes; they are no
measure of a real model."""

from __future__ import annotations

import re
from typing import Any, Callable

from bddgen.implement.context import sentences
from bddgen.implement.unanswerable import ATTRIBUTES
from bddgen.normalise import STOPWORDS, normalise
from bddgen.implement.tasks import FIGURES, QUESTION_CHARS
from bddgen.lm.base import LMRequest
from bddgen.lm.scripted import section
from bddgen.ner.base import CAPITALISED_RUN
from bddgen.text import spoken_name, stems, words
from bddgen.specs import CANNOT_ANSWER

Reply = Callable[[LMRequest], dict[str, Any]]


def write_turn(request: LMRequest) -> dict[str, Any]:
    """A question that does what the task says, and the answer the instruction or the evidence gives."""
    task, evidence = section(request, "What To Ask"), section(request, "Evidence")
    quoted = re.findall(r'"([^"]+)"', task)
    if task.startswith("Ask for the") and "No document says it" in task:
        subject = re.match(r"Ask for (.+?)\. No document", task)
        return {"question": f"What is {subject.group(1) if subject else 'it'}?", "answer": CANNOT_ANSWER}
    if task.startswith("The assistant must decline this:"):  # an OFF-LIMITS turn: a request for what the rule forbids
        rule = quoted[0] if quoted else "it"
        asked = [w for w in words(rule, keep="'", digits=False, fold=False) if len(w) > 3][:4]
        named = re.search(r'It may name "([^"]+)"', task)
        return {"question": f"Could you help me with {' '.join(asked).lower()} for {named.group(1) if named else 'someone'}?", "answer": CANNOT_ANSWER}
    if task.startswith("Ask one question"):  # a SYNTHESIS: the earlier questions again, with their answers
        asked = [q.rstrip(" ?") for q in quoted]
        answers = [line.strip().removeprefix("- ").strip() for line in evidence.splitlines() if line.strip()]
        question = "To sum up, " + ", and ".join(asked) + "?"
        if len(question) > QUESTION_CHARS:  # as a schema-bound model would: cut short (its checks then fail)
            question = question[: QUESTION_CHARS - 1].rstrip() + "?"
        return {"question": question, "answer": "; ".join(answers) or "summary"}
    case = re.search(r'The question names "([^"]+)" as the sentence does', task)
    fact = re.search(r'this sentence answers with "([^"]+)"', task)
    if case and fact:  # a rule asked for the case it names (code then asks it of a row of that case)
        rule = evidence.replace(case.group(1), "").replace(fact.group(1), "")
        rule_words = [w.strip(",.;:") for w in rule.split() if w.islower() and len(w.strip(",.;:")) >= 5][:3]
        return {"question": f"What is the rule on {' '.join(rule_words)} for {case.group(1)} tickets?", "answer": fact.group(1)}
    answer = re.search(r'The answer is "([^"]+)"', task)
    asked = re.match(r'Ask for (.+?), from "', task)
    if answer and asked:  # a wide table's cell or a value computed from its cells, named in words
        return {"question": f"What was {asked.group(1)}?", "answer": answer.group(1)}
    counted = re.match(r'(?:The previous answer named "[^"]+"\. )?Ask how many (.+?) there are (for|whose) (.+?)[,.] ', task)
    if answer and counted:  # a count of rows: for the value an earlier answer named, or whose column holds a value
        things, relation, which = counted.groups()
        proxy = re.search(r'say "([^"]+)"', task)
        subject = f"for {proxy.group(1)}" if proxy else f"{relation} {which.replace(chr(34), '')}"
        return {"question": f"How many {things} are there {subject}?", "answer": answer.group(1)}
    if answer:  # a table cell
        column = re.match(r"(?:The previous answer named \"[^\"]+\"\. )?Ask for the (.+?) (?:in|of) ", task)
        what = column.group(1) if column else "value"
        proxy = re.search(r'say "([^"]+)"', task)
        where = re.search(r" where (.+?)(?:; the question names|\. The answer|, without)", task)
        conditions = (where.group(1).replace('"', "") if where else "")
        row = re.match(r"Ask for the .+? of (.+?); the question names", task)  # a row named by what it is ("the genre with ID 1")
        subject = f" of {proxy.group(1)}" if proxy else (f" of {row.group(1)}" if row and not where else "")
        return {"question": f"What is the {what}{subject}{' where ' + conditions if conditions else ''}?", "answer": answer.group(1)}
    proxy = re.search(r'say "([^"]+)"', task)
    evidence_words = list(dict.fromkeys(w.strip(",.;:") for w in evidence.split() if w.islower() and len(w.strip(",.;:")) >= 5))[:4]
    if proxy:  # a FILLER about a sentence
        return {"question": f"What about {proxy.group(1)}: {' '.join(evidence_words) or 'this'}?", "answer": evidence}
    title = quoted[0] if quoted else "it"
    return {"question": f"What about {title} and {' '.join(evidence_words) or 'this'}?", "answer": evidence}


def answer_from_documents(request: LMRequest) -> dict[str, Any]:
    """CANNOTANSWER for an attribute the documents never mention; otherwise, of the table row or sentence
    shown that shares most of the question's codes, then most words with the question and the conversation so far, the row itself or the
    sentence's first name or number the question does not say (the sentence when there is none). A row whose case (a
    fare class the question does not say) a rule shown names is answered with that rule's first number (else name)."""
    asked = section(request, "Question")
    question, documents = normalise(asked), normalise(section(request, "Documents"))
    if any(normalise(a) in question and normalise(a) not in documents for a in ATTRIBUTES):
        return {"answer": CANNOT_ANSWER}
    if "sum up" in question:  # a SYNTHESIS question: the conversation's answers, from their documents
        return {"answer": " ".join(re.findall(r"^Assistant: (.*)$", section(request, "Conversation So Far"), re.M))[:580]}
    context = set(normalise(f"{asked} {section(request, 'Conversation So Far')[-200:]}").split())
    # a code the question gives ("CR001") decides before the conversation's words do (one about CR023 just before)
    codes = {w for w in question.split() if any(ch.isdigit() for ch in w) and any(ch.isalpha() for ch in w)}
    lines = section(request, "Documents").splitlines()
    headers = {n + 1 for n, line in enumerate(lines) if line.startswith("[")}  # a table's header follows its title line
    pieces = [p for n, line in enumerate(lines) if not line.startswith("[") and not (n in headers and " | " in line) for p in sentences(line)]
    best = max(pieces, key=lambda p: (len(set(normalise(p).split()) & codes), len(set(normalise(p).split()) & context)), default="")
    said = normalise(f"{asked} {section(request, 'Conversation So Far')[-200:]}")
    if _ROW.match(best):
        # a rule the row's values are the case of (its fare class): the rule's fact, as a reader of both answers
        cells = [c for part in best.split(";") if ":" in part and f" {normalise(c := part.split(':', 1)[1].strip())} " not in f" {question} "]
        ruled = [p for p in pieces if not _ROW.match(p) and any(c[:1].isupper() and re.search(rf"(?<!\w){re.escape(c)}(?!\w)", p) for c in cells)]
        rule = max(ruled, key=lambda p: len(set(normalise(p).split()) & context), default="")
        numbers = [n for m in re.finditer(r"\S*\d\S*", rule) if f" {normalise(n := m.group(0).strip(',.'))} " not in f" {said} "]
        return {"answer": (numbers[0] if numbers else _facts_not_asked(rule, f"{said} {normalise(best)}")) if rule else best[:280]}
    return {"answer": _facts_not_asked(best, said) or best[:280] or CANNOT_ANSWER}


def figures_from_documents(request: LMRequest) -> dict[str, Any]:
    """The figures a computed question needs, as a faithful model lists them: of each table row shown whose label
    the question names, the cells under the columns of the years it names (every number cell when it names none)."""
    question = normalise(section(request, "Question"))
    years = set(_YEAR.findall(question))
    figures = []
    for line in section(request, "Documents").splitlines():
        parts = [p.split(":", 1) for p in line.split("; ") if ":" in p] if _ROW.match(line) else []
        if not parts or f" {normalise(parts[0][1])} " not in f" {question} ":
            continue
        figures += [
            f"{key.strip()}: {value.strip()}" for key, value in parts[1:]
            if re.search(r"\d", value) and (not years or years & set(_YEAR.findall(key)))
        ]
    return {"figures": figures[:FIGURES] or [CANNOT_ANSWER]}


_YEAR = re.compile(r"\b(?:19|20)\d\d\b")
_ROW = re.compile(r"^[^\s:;][^:;]*:+ ")  # a table row as the round trip shows it: "club: Korrin Sporting; orders.id: 1" ("Segment:: Other")


def _facts_not_asked(sentence: str, said: str) -> str:
    """The first name (else number) of `sentence` that the question and the conversation (`said`, normalised)
    do not say, as a model answers: "Rasmus Kaldor" for "Who scored both goals as Brennick Town beat Korrin
    Sporting 2-1 …?"."""
    names = [m.group(0) for m in CAPITALISED_RUN.finditer(sentence)]
    names = [" ".join(n.split()[1:]) if n.split()[0].lower() in STOPWORDS else n for n in names]
    numbers = [m.group(0).strip(",.") for m in re.finditer(r"\S*\d\S*", sentence)]
    facts = [f for f in dict.fromkeys(names + numbers) if normalise(f) and f" {normalise(f)} " not in f" {said} "]
    return facts[0] if facts else ""


_ASKS = re.compile(r"\basks?\s+(for|about|what|which|who|how|when|where|whether)?\s*(.+)$", re.IGNORECASE)


def read_spec(request: LMRequest) -> dict[str, Any]:
    """The When line's request as the user's question, a lookup about the names the spec gives; the questions a When
    line quotes ("the user asks: Can I bring my cat?"), as they are."""
    spec = section(request, "Spec")
    quoted = [q.strip().strip('"') for line in spec.splitlines() if line.startswith("When ") and "?" in line for q in [line.split(":", 1)[-1]]]
    if quoted:
        return {"needs": [{"question": q, "kind": "lookup", "about": []} for q in quoted[:3]], "action": False}
    when = next((line[5:] for line in spec.splitlines() if line.startswith("When ")), spec.splitlines()[0])
    asked = _ASKS.search(when)
    opener, what = (asked.group(1) or "", asked.group(2)) if asked else ("", when)
    what = what.rstrip(". ")
    lines = [line.split(" ", 1)[-1] for line in spec.splitlines()]  # each line without its keyword
    names = list(dict.fromkeys(m.group(0) for line in lines for m in CAPITALISED_RUN.finditer(line) if m.start() > 0))[:3]
    unsaid = [n for n in names if n not in what]
    asking = f"{opener.capitalize()} {what}" if opener.lower() not in ("", "for", "about") else f"What about {what}"
    question = asking + (f", for {' and '.join(unsaid)}" if unsaid else "") + "?"
    return {"needs": [{"question": question, "kind": "lookup", "about": names}], "action": False}


def plan_query(request: LMRequest) -> dict[str, Any]:
    """The cell of a row the question names (a table's cell it says) under the column whose name it says; a table
    nobody has when the question names no row of the tables shown (code then refuses the plan)."""
    question = f" {normalise(section(request, 'Question'))} "
    table, columns = "", {}
    for line in section(request, "Tables").splitlines():
        if line.startswith("table "):
            table, columns = line.split()[1], {}
        elif line.startswith("  ") and ":" in line and table:
            header, values = line.strip().split(":", 1)
            columns[header] = [v.strip() for v in values.split("|")]
            named = [(h, v) for h, vs in columns.items() for v in vs if len(v) > 2 and f" {normalise(v)} " in question]
            asked = [h for h in columns if f" {normalise(h.replace('_', ' '))} " in question and h not in {n for n, _ in named}]
            if named and asked:
                return {"table": table, "where": [{"column": named[0][0], "op": "=", "value": named[0][1]}], "select": asked[0]}
    return {"table": "(no table names what it asks)"}


_FIGURE = re.compile(r"\S*\d\S*|\b(?:one|two|three|four|five|six|seven|eight|nine|ten)\b(?:\s+[a-z]+){0,2}", re.IGNORECASE)  # "23kg", "one checked bag"


def pick_passage(request: LMRequest) -> dict[str, Any]:
    """The passage and sentence sharing most words with the question (of equals, the same whatever the passages' order),
    and its first fact the question does not say."""
    question = normalise(section(request, "Question"))
    words = set(stems(" ".join(set(question.split()) - STOPWORDS)))  # stems: a reader matches "cat" and "cats"
    passages = re.split(r"^\[(\d+)\] ", section(request, "Passages"), flags=re.M)[1:]
    best: tuple[int, int, str, int] = (0, 0, "", 0)
    for number, body in zip(passages[::2], passages[1::2]):
        titled = len(words & set(stems(body.splitlines()[0])))  # of equals, a sentence of the page the question is about
        for sentence in sentences(" ".join(body.splitlines()[1:])):
            shared = len(words & set(stems(sentence)))
            if (shared, titled, sentence) > best[:3]:  # ties go to the same sentence in whatever order the passages are shown
                best = (shared, titled, sentence, int(number))
    shared, _, sentence, number = best
    if not shared:
        return {"passage": 0, "sentence": "", "answer": ""}
    numbers = [m.group(0).strip(",.") for m in _FIGURE.finditer(sentence)] if question.startswith("how ") else []
    return {"passage": number, "sentence": sentence, "answer": (numbers[0] if numbers else _facts_not_asked(sentence, question)) or sentence}


def question_frame(request: LMRequest) -> dict[str, Any]:
    """The asked column, spoken, of the row its placeholders name: "What is the hire date of {FirstName} {LastName}?"."""
    return {"frame": f"What is the {spoken_name(section(request, 'Ask For')).lower()} of {section(request, 'Named By')}?"}


def faithful_replies() -> dict[str, Reply]:
    """ScriptedLM `by_task` entries for every implement task."""
    return {
        "write_turn": write_turn, "answer_from_documents": answer_from_documents, "figures_from_documents": figures_from_documents,
        "read_spec": read_spec, "plan_query": plan_query, "pick_passage": pick_passage, "question_frame": question_frame,
    }
