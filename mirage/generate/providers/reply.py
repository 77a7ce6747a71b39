"""Field-by-field checks of a server's reply against its protocol, before anything from it is stored.

Every field read from a reply goes through one of these: objects must be objects, strings strings that encode as
UTF-8 (no lone surrogates), token counts integers within 0..MAX_TOKEN_COUNT (not NaN, Infinity, floats, booleans
or text), and the text of a reply at most max_tokens x CHARS_PER_TOKEN characters (no tokenizer emits longer
tokens: a longer reply is not what was asked for). A violation raises Malformed naming the field; the providers
turn it into one failed call (cause `reply`), which the run retries within its budget. So does a reply without
an answer (`answered`: empty or blank text, or a budget spent before any visible text).
"""

from __future__ import annotations

from typing import Any

from mirage.limits import LimitsParams

MAX_TOKEN_COUNT = 100_000_000
CHARS_PER_TOKEN = LimitsParams.model_fields["chars_per_token"].default


class Malformed(ValueError):
    """A reply field that breaks the protocol."""


class Unanswered(Malformed):
    """A well-formed reply without an answer: no visible text (thinking may have spent the whole budget)."""


def answered(text: str, finish: str, max_tokens: int | None, reasoning_tokens: int = 0) -> None:
    """Refuse a reply whose visible text is empty or blank, unless it is a refusal (finish `refusal`, which the
    audit counts). Such a reply is a failed call (cause `reply`), retried within the run's limits, never a stored
    success: an empty M4 first turn would also make the second turn a conversation the endpoint may refuse."""
    if text.strip() or finish == "refusal":
        return
    spent = f", {reasoning_tokens} of them spent thinking" if reasoning_tokens else ""
    if finish == "length":
        raise Unanswered(f"the output budget ({max_tokens} tokens{spent}) ran out before any visible text")
    raise Unanswered(f"empty answer (finish_reason {finish}{spent})")


def obj(value: Any, where: str, optional: bool = False) -> dict[str, Any]:
    """`value` as a JSON object ({} for a missing optional one)."""
    if value is None and optional:
        return {}
    if not isinstance(value, dict):
        raise Malformed(f"{where} is {_kind(value)}, not an object")
    return value


def array(value: Any, where: str) -> list[Any]:
    if not isinstance(value, list):
        raise Malformed(f"{where} is {_kind(value)}, not an array")
    return value


def string(parent: dict[str, Any], name: str, where: str) -> str | None:
    """`parent[name]` as a string that encodes as UTF-8, or None when absent or null."""
    value = parent.get(name)
    if value is None:
        return None
    if not isinstance(value, str):
        raise Malformed(f"{where}.{name} is {_kind(value)}, not a string")
    try:
        value.encode("utf-8")
    except UnicodeEncodeError:
        raise Malformed(f"{where}.{name} holds a lone surrogate (not encodable text)") from None
    return value


def count(usage: dict[str, Any], name: str, where: str) -> int:
    """`usage[name]` as a token count (0 when absent or null)."""
    value = usage.get(name)
    if value is None:
        return 0
    if isinstance(value, bool) or not isinstance(value, int):
        raise Malformed(f"{where}.{name} is {_kind(value)}, not an integer")
    if not 0 <= value <= MAX_TOKEN_COUNT:
        raise Malformed(f"{where}.{name} is {value}, outside 0..{MAX_TOKEN_COUNT:,}")
    return value


def within_budget(max_tokens: int | None, *texts: str | None) -> None:
    """Refuse a reply whose texts are longer than max_tokens tokens can be."""
    if max_tokens is None:
        return
    chars = sum(len(t) for t in texts if t)
    if chars > max_tokens * CHARS_PER_TOKEN:
        raise Malformed(f"reply of {chars:,} characters for max_tokens {max_tokens} (at most {CHARS_PER_TOKEN} "
                        "characters a token)")


def served_model_matches(served: str | None, requested: str) -> bool:
    """Whether the model a server names is the one requested: the same name, the name under a prefix
    (`models/NAME`), or a dated snapshot of a requested alias (`NAME-2024-08-06`)."""
    if served is None:
        return True
    return served == requested or served.endswith("/" + requested) or served.startswith(requested + "-")


def _kind(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, float) and value != value:
        return "NaN"
    names = {bool: "a boolean", int: "an integer", float: "a number", str: "a string", list: "an array", dict: "an object"}
    return names.get(type(value), type(value).__name__)
