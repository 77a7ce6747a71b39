"""Names are identifiers: the one pattern every model, slice and judge name matches, and the check that a path
built from a name stays under its root.

A name is 1 to 100 characters: ASCII letters, digits, `.`, `_` and `-`, starting with a letter or digit. So a
name is always exactly one path component (no `/`, no `..`, no leading `-` that a command would read as an
option, no spaces). A judge name is an offline judge or registry name, or a jury `jury:A,B[,...]` of >= 2
names. Names are checked where they enter: params.yaml (registry keys, slice models, label.judge),
command-line options (`NAME` below) and submission bundles.
"""

from __future__ import annotations

import os
import re
from pathlib import Path
from typing import Annotated

import click
from pydantic import AfterValidator

from mirage.errors import DataError

NAME_PATTERN = r"[A-Za-z0-9][A-Za-z0-9._-]{0,99}"
NAME_RULE = "letters, digits, '.', '_' and '-', starting with a letter or digit, at most 100 characters"
JURY_PREFIX = "jury:"
_NAME = re.compile(rf"{NAME_PATTERN}\Z")


def is_name(value: object) -> bool:
    return isinstance(value, str) and _NAME.match(value) is not None


def check_name(value: object, what: str = "name") -> str:
    """`value` if it is an identifier, else a DataError naming `what` and the rule."""
    if not is_name(value):
        shown = repr(value) if len(repr(value)) <= 60 else repr(value)[:57] + "..."
        raise DataError(f"{what} {shown} is not a name ({NAME_RULE})")
    return value  # type: ignore[return-value]


#: A model's name as a pydantic field: a name, else a validation error of that field.
ModelName = Annotated[str, AfterValidator(lambda v: check_name(v, "model name"))]


def jury_members(value: str) -> list[str] | None:
    """The members of a `jury:A,B` name (None for a single name)."""
    if not value.startswith(JURY_PREFIX):
        return None
    return value[len(JURY_PREFIX):].split(",")


def judge_members(name: str | list[str]) -> list[str]:
    """The member names of a judge setting (one name for a single judge)."""
    if isinstance(name, list):
        return [str(n) for n in name]
    if name.startswith(JURY_PREFIX):
        return [n.strip() for n in name[len(JURY_PREFIX):].split(",") if n.strip()]
    return [name]


def judge_name(name: str | list[str]) -> str:
    members = judge_members(name)
    return members[0] if len(members) == 1 else JURY_PREFIX + ",".join(members)


def check_judge(value: object, what: str = "judge") -> str | list[str]:
    """A judge setting: one name, `jury:A,B,...` (>= 2 members) or a non-empty list of names."""
    if isinstance(value, list):
        if not value:
            raise DataError(f"{what}: an empty list names no judge; give one name or >= 2 jury members")
        for v in value:
            check_name(v, f"{what} member")
    elif isinstance(value, str) and (parts := jury_members(value)) is not None:
        if len(parts) < 2:
            raise DataError(f"{what} {value!r}: a jury needs >= 2 members (jury:A,B)")
        for p in parts:
            check_name(p, f"{what} member")
    else:
        return check_name(value, what)
    return value  # type: ignore[return-value]


def inside(root: str | os.PathLike, path: str | os.PathLike) -> Path:
    """`path` if it resolves to a place under `root` (links followed), else a DataError."""
    base, target = Path(root).resolve(), Path(path).resolve()
    if target != base and base not in target.parents:
        raise DataError(f"{path}: outside {root}; a path built from a name must stay under its root")
    return Path(path)


class NameType(click.ParamType):
    """A click option value that must be a name (a judge setting when `judge`)."""

    name = "NAME"

    def __init__(self, judge: bool = False) -> None:
        self.judge = judge

    def convert(self, value, param, ctx):  # noqa: ANN001 - click's signature
        what = f"option {param.opts[0] if param else 'value'}"
        return check_judge(value, what) if self.judge else check_name(value, what)


NAME = NameType()
JUDGE = NameType(judge=True)
