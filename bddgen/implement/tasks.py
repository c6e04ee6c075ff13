"""The implement stage's LM tasks: phrase one turn around evidence code chose, and answer a written
question from documents alone (the round trip; of a computed question, the figures it needs). Both keep their instruction and schema in the system
message, identical on every call, and everything that varies in the user message, so a local model
reuses its cached prompt prefix."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field

from bddgen.lm.tasks import PromptTask
from bddgen.specs import CANNOT_ANSWER

STAGE = "implement"
QUESTION_CHARS = 240
ANSWER_CHARS = 600
FIGURES = 6  # a computed question reads two cells, an average a few more


class WrittenTurn(BaseModel):
    """One turn as the LM phrases it."""

    model_config = ConfigDict(extra="forbid", str_strip_whitespace=True)

    question: str = Field(min_length=1, max_length=QUESTION_CHARS)
    answer: str = Field(min_length=1, max_length=ANSWER_CHARS)


WRITE_TURN: PromptTask[WrittenTurn] = PromptTask(
    name="write_turn",
    instruction=f"""You write one turn of a test conversation between a user and an assistant that answers from documents.
You get the spec the conversation tests, the conversation so far, what to ask in this turn and its evidence.
"question": one natural question a user would ask, in plain words, ending with "?". Do what "What to ask" says: name what it says to name,
refer back where it says so. Never paste a table row ("column: value; ...") or copy a sentence of the document.
"answer": a short answer that states only what the evidence says (for a question no document answers: "{CANNOT_ANSWER}").
If "Problems" are listed, your previous attempt had them: fix every one.

Examples (about other documents; the form is what matters):
What to ask: Ask for the opening year of Eastgate; the question names 'Eastgate'. Plainly: What is the opening year of Eastgate?
Evidence: branch = Eastgate -> opening year = 1998
Reply: {{"question": "When did the Eastgate branch library open?", "answer": "1998"}}
What to ask: Ask for the branch of the branch library whose opening year is 1998; the question names '1998'. Plainly: What is the branch of the branch library whose opening year is 1998?
Evidence: opening year = 1998 -> branch = Eastgate
Reply: {{"question": "Which branch library opened in 1998?", "answer": "Eastgate"}}
What to ask: The previous answer named "Eastgate". Ask for the manager of that branch, without writing "Eastgate": say "that branch".
Evidence: branch = Eastgate -> manager = Mira Holt
Reply: {{"question": "Who manages that branch?", "answer": "Mira Holt"}}
What to ask: Ask a question about "Borrowing rules" that this sentence answers, naming what it is about.
Evidence: Members may borrow up to twelve books at a time, for three weeks each.
Reply: {{"question": "How many books can a library member borrow at once?", "answer": "Up to twelve books, for three weeks each."}}
What to ask: The previous answer named "Mira Holt". Ask a question about it that this sentence answers, without writing "Mira Holt": say "that person".
Evidence: Mira Holt founded the reading club in 2004.
Reply: {{"question": "When did that person found the reading club?", "answer": "In 2004."}}""",
    output=WrittenTurn,
    max_tokens=160,
)


class RoundTripAnswer(BaseModel):
    """The LM's answer to a written question, from the documents alone."""

    model_config = ConfigDict(extra="forbid", str_strip_whitespace=True)

    answer: str = Field(min_length=1, max_length=ANSWER_CHARS)


ANSWER_FROM_DOCUMENTS: PromptTask[RoundTripAnswer] = PromptTask(
    name="answer_from_documents",
    instruction=f"""Answer the user's last question using only the documents below and the conversation so far.
Give the answer itself, short: the value, name or fact asked for, with its number or date exactly as the documents write it.
When the question asks for several things, give each of them, separated by "; ".
If the documents do not answer the question, answer exactly "{CANNOT_ANSWER}".""",
    output=RoundTripAnswer,
    max_tokens=200,
)


class RoundTripFigures(BaseModel):
    """The figures a computed question is worked out from, as the LM finds them in the documents."""

    model_config = ConfigDict(extra="forbid", str_strip_whitespace=True)

    figures: list[str] = Field(min_length=1, max_length=FIGURES)

    @property
    def answer(self) -> str:
        """The figures as one reply, as a round trip records it."""
        return "; ".join(self.figures)


FIGURES_FROM_DOCUMENTS: PromptTask[RoundTripFigures] = PromptTask(
    name="figures_from_documents",
    instruction=f"""The user's last question asks for a value worked out from figures in the documents below (a change, a
percentage change, an average, a ratio). Do not work it out. List only the figures it is worked out from, each exactly
as the documents write it, with what it is ("Net sales 2019: 1,452.4"). Leave out every other figure.
If the documents do not hold them, answer ["{CANNOT_ANSWER}"].""",
    output=RoundTripFigures,
    max_tokens=200,
)


FRAME_CHARS = 200


class QuestionFrame(BaseModel):
    """The LM's question frame."""

    model_config = ConfigDict(extra="forbid", str_strip_whitespace=True)

    frame: str = Field(min_length=1, max_length=FRAME_CHARS)


QUESTION_FRAME: PromptTask[QuestionFrame] = PromptTask(
    name="question_frame",
    instruction="""You write how a user of an assistant asks for one fact of a table row, as a frame that code fills in for
every row: the values that name the row are placeholders, written exactly as given ({FirstName}, {year}).
"frame": one question in plain words, as a person would type it, ending with "?": it asks for the column "Ask for" says,
of the row its placeholders name, and holds every placeholder once. Say what the column means ("When was … hired?",
"Who won …?", "How long is …?"), never its name as a database writes it (HireDate, billing_city), never "whose",
"row", "record" or "table", and never the example's answer.

Examples (other tables; the form is what matters):
Table: Book (BookId, Title, AuthorId, PublishedYear). Rows are: books. Ask for: PublishedYear. Named by: {Title}.
Example row: Title = Winter Roads -> PublishedYear = 1998
Reply: {"frame": "When was {Title} published?"}
Table: Cup finals (year, winner, venue, man_of_the_match). Rows are: cup finals. Ask for: man_of_the_match. Named by: {year}.
Example row: year = 2004 -> man_of_the_match = Ana Ruiz
Reply: {"frame": "Who was man of the match in the {year} cup final?"}
Table: League table 2019 (rank, team, points). Rows are: teams. Ask for: team. Named by: {rank}.
Example row: rank = 1 -> team = Hill Rovers
Reply: {"frame": "Which team finished in place {rank} of the 2019 league table?"}""",
    output=QuestionFrame,
    max_tokens=80,
)
