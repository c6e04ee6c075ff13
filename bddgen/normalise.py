"""Text normalisation for matching: normalised phrases, stopwords and content words (graph building, grounding
checks, table cells and their SQLite store, the judge).

Each normaliser, stopword list and content-word reader here has its own users, and they differ on purpose:

- `normalise`: ASCII words only, no leading article, possessive or dots of initials (phrases, table cells);
  `normalise_punctuated`: punctuation kept, plain quotes and hyphens, no thousands separators (an answer's
  exact values and refusals); `normalise_unquoted`: only quotes dropped (the probe's quotes of a dialogue).
- `STOPWORDS`: function and question words (content words, names, reference answers); `SPEC_STOPWORDS`: those
  and the vocabulary every spec uses (a draft's key terms); `INTERVIEW_STOPWORDS`: a shorter list
  (`content_words_as_written`, the probe's interview and plan); `FUNCTION_WORDS`: words a capitalised word may
  be without naming anything (an answer's guessed names); `PRONOUNS` and `POSSESSIVES`: words standing for
  something said before (a question referring back, a sentence leaning on the one before it, a clause question).
- `content_words`: normalised words of three letters or more, and `content_stems` their stems (by the one
  stemmer, `bddgen.text.stem`); `content_words_as_written`: lower-cased words as written, identifiers and
  apostrophes kept (`max_turns`, "don't").
"""

from __future__ import annotations

import re
import unicodedata

from bddgen.text import stem, words

_NON_WORD = re.compile(r"[^a-z0-9]+")
_LEADING_ARTICLE = re.compile(r"^(the|a|an) ")
_POSSESSIVE = re.compile(r"['’]s\b")
_INITIAL_DOT = re.compile(r"\b([a-z])\.")
_DASHES = re.compile(r"[\u2010-\u2015\u2212]")
_QUOTES = {"\u2018": "'", "\u2019": "'", "\u201c": '"', "\u201d": '"'}
_THOUSANDS = re.compile(r"(?<=\d)[,\u202f\u00a0 ](?=\d{3}\b)")
_ANY_QUOTE = re.compile(r"[\"'“”‘’]")

STOPWORDS = frozenset(
    """a about above after again against all also am an and any are as at be because been before being below
    between both but by can could did do does doing down during each few for from further had has have having he
    her here hers him his how i if in into is it its itself just me more most my no nor not now of off on once
    only or other our out over own same she should so some such than that the their them then there these they
    this those through to too under until up very was we were what when where which while who whom why will with
    would you your yours tell give name list many much one ones did does""".split()
)


# Function words and the vocabulary every spec uses (arithmetic asked of a subject included), which say nothing
# about its subject.
SPEC_STOPWORDS = frozenset(
    """
    a an and are as at be been being but by can could did do does for from had has have how if in into is it its
    of on or than that the their them then there these they this those to was were what when where which who whom
    whose why will with would about after before between during over under up out off not no nor only own same so
    too very just also any all each every both few more most other some such one two first last many much new
    user users assistant assistants ask asks asked asking want wants wanted know knows wonder wonders question
    questions answer answers say says said tell tells give gives provide provides should need needs needed
    information info detail details fact facts overview explain explains explanation help helps request requests
    looking look looks find finds list lists show shows get gets make makes use uses using given specific particular
    table tables column columns row rows highest lowest largest smallest biggest greatest fewest total average
    maximum minimum sum change changes changed increase increases increased decrease decreases decreased
    difference differences percentage percent ratio compare compares compared comparison trend trends growth
    """.split()
)

INTERVIEW_STOPWORDS = frozenset(
    "a an and are as at be but by can do does for from has have how i if in is it its no not of on or our so "
    "that the their them then there these they this to was we were what when where which who will with would "
    "you your yes should must may".split()
)

# Words that stand for something said before ("it", "they", "there", "then") and the possessives ("its", "their").
PRONOUNS = frozenset("it he she they him them this these those there then".split())
POSSESSIVES = frozenset("its his her their".split())

# Words a capitalised word may be without naming anything ("She", "The", "Yes").
FUNCTION_WORDS = frozenset(
    "a an and as at but by for from he her his i in it its no of on or she so that the their there they this "
    "to was we were yes you your".split()
)


def normalise(text: str) -> str:
    """Lower-case ASCII words separated by single spaces, without a leading article, possessive 's
    or the dots of initials ('F.C.' -> 'fc')."""
    ascii_text = unicodedata.normalize("NFKD", text).encode("ascii", "ignore").decode("ascii").lower()
    ascii_text = _INITIAL_DOT.sub(r"\1", _POSSESSIVE.sub("", ascii_text))
    return _LEADING_ARTICLE.sub("", _NON_WORD.sub(" ", ascii_text).strip())


def normalise_punctuated(text: str) -> str:
    """Lower case, plain quotes and hyphens, no thousands separators, single spaces."""
    text = unicodedata.normalize("NFKC", text)
    text = _DASHES.sub("-", text)
    for fancy, plain in _QUOTES.items():
        text = text.replace(fancy, plain)
    text = _THOUSANDS.sub("", text)
    return " ".join(text.lower().split())


def normalise_unquoted(text: str) -> str:
    """Lower case without quotation marks or apostrophes, single spaces; other punctuation kept."""
    return " ".join(_ANY_QUOTE.sub("", text).lower().split())


def contains_phrase(haystack_normalised: str, phrase: str) -> bool:
    """True when the normalised `phrase` occurs in the normalised haystack on word boundaries."""
    needle = normalise(phrase)
    if not needle:
        return False
    return f" {needle} " in f" {haystack_normalised} "


def is_numeric(text: str) -> bool:
    """True for values that are only a number, date or code made of digits and punctuation."""
    stripped = text.strip()
    return bool(stripped) and not any(ch.isalpha() for ch in stripped)


def content_words(text: str) -> set[str]:
    """Lower-case words of `text` that carry meaning (no stopwords, three letters or more)."""
    return {w for w in words(normalise(text)) if len(w) > 2 and w not in STOPWORDS}


def content_stems(text: str) -> set[str]:
    """The stems of a text's `content_words`: "fees" and "fee", "capacities" and "capacity", "revealing" and
    "reveal" meet."""
    return {stem(w) for w in content_words(text)}


def content_words_as_written(text: str) -> set[str]:
    """Lower-cased words of two characters or more that start with a letter, as written (underscores and
    apostrophes kept, no ASCII folding), without INTERVIEW_STOPWORDS."""
    found = (w.lstrip("_'") for w in words(text.lower(), keep="_'", fold=False))
    return {w for w in found if len(w) > 1 and w[0].isalpha() and w not in INTERVIEW_STOPWORDS}
