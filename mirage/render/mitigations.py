"""Mitigation audit (§3.8, App. C): where each mitigation text goes, and the structural mitigation.

Positions (docs/conditions.md): M1 is the system prompt (a leading paragraph in completion mode);
M2 opens the user content, before any retrieved context; M3 follows the content and precedes the
production instruction (C3) and the CoT suffix (C2); M4 keeps turn 1 unchanged and adds the
critique-and-revise turn (under C3 it refers to the decision). `structural` (C3) hides the
identity field's value before the case file is rendered.
"""

from __future__ import annotations

import re

from mirage.io import DataError
from mirage.render.conditions import Content, Request
from mirage.render.texts import MitigationTexts


def compose(
    condition: str,
    content: Content,
    texts: MitigationTexts,
    mitigation: str = "none",
    context: str | None = None,
    cot_suffix: str | None = None,
) -> Request:
    """Assemble one request from its content, an optional retrieved-context block and a mitigation."""
    user = [texts.M2] if mitigation == "M2" else []
    if context is not None:
        user.append(context)
    user += content.head
    if mitigation == "M3":
        user.append(texts.M3)
    user += content.tail
    if cot_suffix is not None:
        user.append(cot_suffix)
    followup = None
    if mitigation == "M4":
        followup = texts.M4.followup_decision if condition == "C3" else texts.M4.followup
    return Request(
        system=texts.M1 if mitigation == "M1" else None,
        user="\n\n".join(user),
        followup=followup,
        completion_cue=texts.M4.completion_cue if followup else None,
    )


def hide_identity_field(case_file: str, field: str, placeholder: str, where: str) -> str:
    """Replace the value of the `field: value` line of a case file by `placeholder`.

    Raises DataError (naming `where`) unless exactly one such line exists.
    """
    pattern = re.compile(rf"^{re.escape(field)}: .*$", re.MULTILINE)
    hidden, n = pattern.subn(lambda _: f"{field}: {placeholder}", case_file)
    if n != 1:
        raise DataError(f"{where}: identity field {field!r} found {n} times in the case file (expected once)")
    return hidden
