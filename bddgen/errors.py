"""The small exception hierarchy; every error carries the exit code the CLI uses."""

from __future__ import annotations

from dataclasses import dataclass, field


class BddgenError(Exception):
    """Base of every error bddgen reports to the user (exit code 2: input, config or usage)."""

    exit_code: int = 2


MAX_MESSAGE_CHARS = 600  # not a setting: the form of an error message
"""A problem's message is cut to this length: it quotes at most a few hundred characters of input."""
_KEPT_TAIL = 200  # characters kept from a cut message's end, where the reason and the fix stand
_REPLY_CHARS = 400  # not a setting: the form of an error message, the start of an unusable reply it quotes


def capped(text: str, limit: int = MAX_MESSAGE_CHARS) -> str:
    """`text` whole when short; otherwise its start and end with the count of characters left out."""
    if len(text) <= limit:
        return text
    head = limit - _KEPT_TAIL - len(" … [ characters left out] … ") - len(f"{len(text):,}")
    left_out = len(text) - head - _KEPT_TAIL
    return f"{text[:head]} … [{left_out:,} characters left out] … {text[-_KEPT_TAIL:]}"


@dataclass(frozen=True)
class Problem:
    """One problem found in an input: where it is and what to do about it (its message capped)."""

    location: str
    message: str

    def __post_init__(self) -> None:
        object.__setattr__(self, "location", capped(self.location))
        object.__setattr__(self, "message", capped(self.message))

    def __str__(self) -> str:
        return f"{self.location}: {self.message}"


MAX_LISTED_PROBLEMS = 20  # not a setting: the form of an error message
"""An error message lists this many problems, then counts the rest (`problems` keeps them all)."""


class InputError(BddgenError):
    """One or more problems in user-supplied files; lists every problem, not only the first."""

    def __init__(self, problems: list[Problem] | Problem | str, title: str = "invalid input") -> None:
        if isinstance(problems, str):
            problems = [Problem("input", problems)]
        elif isinstance(problems, Problem):
            problems = [problems]
        self.problems: list[Problem] = list(problems)
        self.title = title
        super().__init__(self.render())

    def __reduce__(self) -> tuple[type[InputError], tuple[list[Problem], str]]:
        """Pickles by its problems and title (worker processes send errors back to the parent)."""
        return type(self), (self.problems, self.title)

    def render(self) -> str:
        lines = [f"{self.title} ({len(self.problems)} problem{'s' if len(self.problems) != 1 else ''}):"]
        lines += [f"  {p}" for p in self.problems[:MAX_LISTED_PROBLEMS]]
        hidden = len(self.problems) - MAX_LISTED_PROBLEMS
        if hidden > 0:
            lines.append(f"  ... and {hidden} more problem{'s' if hidden != 1 else ''} (fix the ones above and run again)")
        return "\n".join(lines)


class ConfigError(BddgenError):
    """A bad setting in bddgen.toml, [tool.bddgen], BDDGEN_* or a flag."""


class BackendUnavailableError(BddgenError):
    """A model backend cannot be used here (missing package, missing key, bad file)."""


@dataclass
class LMOutputError(BddgenError):
    """The LM did not return what the task asked for after every retry; keeps the raw text."""

    task: str
    raw_text: str
    reason: str
    attempts: int = 1
    exit_code: int = field(default=2)

    def __reduce__(self) -> tuple[type[LMOutputError], tuple[str, str, str, int, int]]:
        """Pickles by its fields: a dataclass exception has no `args` to rebuild it from."""
        return type(self), (self.task, self.raw_text, self.reason, self.attempts, self.exit_code)

    def __str__(self) -> str:
        snippet = self.raw_text if len(self.raw_text) < _REPLY_CHARS else self.raw_text[:_REPLY_CHARS] + "…"
        return (
            f"task {self.task!r}: the model's reply was unusable after {self.attempts} attempt(s): "
            f"{self.reason}\n  raw reply: {snippet!r}\n"
            "  Try a stronger model (see `bddgen lm ask --help`) or raise [lm] max_retries."
        )


class AssistantError(BddgenError):
    """The assistant under test failed: transport error, timeout or unusable reply."""
