"""What a model receives under C1, C2 and C3, as chat messages and as a raw completion prompt."""

from __future__ import annotations

from dataclasses import dataclass

from mirage.io import DataError
from mirage.render.texts import Harness

RESPONSE_MARK = "{response}"


@dataclass(frozen=True)
class Content:
    """A prompt's user content: `head`, then `tail` (C3: the production instruction).

    A self-debiasing suffix (M3) goes between the two, i.e. before the generation instruction.
    """

    head: tuple[str, ...]
    tail: tuple[str, ...] = ()


def completion_content(text: str) -> Content:
    """C1/C2: the raw corpus prompt, no instruction (T1-T4, T6)."""
    return Content((text,))


def decision_content(case_file: str, harness: Harness) -> Content:
    """C3: rubric, case file and production instruction of the harness (App. B)."""
    return Content((harness.rubric, f"Case file:\n{case_file}"), (harness.instruction,))


@dataclass(frozen=True)
class Request:
    """One rendered request. `system` is None unless a mitigation adds one (provider defaults otherwise)."""

    system: str | None
    user: str
    followup: str | None = None
    completion_cue: str | None = None

    @property
    def prompt(self) -> str:
        """Completion mode: a system text is prepended as a paragraph."""
        return f"{self.system}\n\n{self.user}" if self.system else self.user

    @property
    def messages(self) -> list[dict[str, str]]:
        system = [{"role": "system", "content": self.system}] if self.system else []
        return system + [{"role": "user", "content": self.user}]

    @property
    def followup_prompt(self) -> str | None:
        """Completion form of turn 2: the first answer replaces the literal `{response}` (str.replace, not format)."""
        if self.followup is None:
            return None
        if RESPONSE_MARK in self.prompt:
            raise DataError(f"prompt contains the reserved marker {RESPONSE_MARK!r}: {self.prompt[:80]!r}")
        return f"{self.prompt}{RESPONSE_MARK}\n\n{self.followup}\n\n{self.completion_cue}"

    def fields(self) -> dict:
        """The request columns of a rendered request row."""
        return {"prompt": self.prompt, "messages": self.messages, "followup": self.followup, "followup_prompt": self.followup_prompt}
