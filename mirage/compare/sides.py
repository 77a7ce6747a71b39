"""What one side of a comparison is: a model, one snapshot of it, one mitigation setting of it, or its completions
as one judge labelled them, and which label rows that selects.

Syntax: `MODEL[@REVISION][/mitigation=M][/judge=J]`, e.g. `gpt-4o@2024-08-06`, `llama-3.3-70b/mitigation=M1`,
`smollm2-135m/judge=lexicon-v1`. MODEL is a registry (or label-file) model name; REVISION a value of the labels'
`revision` column; M a mitigation whose rows stand in for the side's unmitigated rows; J a value of the `judge` column.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

import pandas as pd

from mirage.io import DataError
from mirage.names import NAME_PATTERN, check_judge, check_name

KEYS = ("mitigation", "judge")
_REVISION = re.compile(r"[A-Za-z0-9][A-Za-z0-9._:+-]{0,99}\Z")


@dataclass(frozen=True)
class Side:
    spec: str
    model: str
    revision: str | None = None
    mitigation: str | None = None
    judge: str | None = None

    @property
    def slug(self) -> str:
        """The side as one path component (names only hold letters, digits, '.', '_' and '-')."""
        return re.sub(r"[^A-Za-z0-9._-]+", "_", self.spec)


def parse_side(spec: str) -> Side:
    """A side from its spec; a DataError naming the part that is wrong."""
    head, *opts = str(spec).split("/")
    model, _, revision = head.partition("@")
    if not re.fullmatch(NAME_PATTERN, model):
        check_name(model, f"side {spec!r}: model")
    if "@" in head and not _REVISION.match(revision):
        raise DataError(f"side {spec!r}: revision {revision!r} is not a revision (letters, digits, '.', '_', ':', '+', '-')")
    found: dict[str, str] = {}
    for opt in opts:
        key, eq, value = opt.partition("=")
        if not eq or key not in KEYS or key in found or not value:
            raise DataError(f"side {spec!r}: {opt!r} is not one of /mitigation=M, /judge=J (each at most once)")
        found[key] = value
    if "mitigation" in found:
        check_name(found["mitigation"], f"side {spec!r}: mitigation")
    if "judge" in found:
        check_judge(found["judge"], f"side {spec!r}: judge")
    return Side(str(spec), model, revision or None, found.get("mitigation"), found.get("judge"))


def select(labels: pd.DataFrame, side: Side) -> pd.DataFrame:
    """The side's label rows. A mitigation side keeps only that mitigation's rows, relabelled as unmitigated, so its
    claims are the baseline claims measured under the mitigation."""
    rows = labels[labels["model"] == side.model]
    if side.revision is not None:
        rows = rows[rows["revision"].astype(str) == side.revision]
    if side.judge is not None:
        rows = rows[rows["judge"].astype(str) == side.judge]
    if side.mitigation is not None:
        rows = rows[rows["mitigation"] == side.mitigation].assign(mitigation="none")
    judges = sorted(rows["judge"].dropna().astype(str).unique()) if "judge" in rows else []
    if side.judge is None and len(judges) > 1:
        raise DataError(f"side {side.spec!r}: its rows were labelled by {len(judges)} judges ({', '.join(judges)}); "
                        f"name one: {side.spec}/judge={judges[0]}")
    if rows.empty:
        have = {c: sorted(labels.loc[labels["model"] == side.model, c].dropna().astype(str).unique())[:8]
                for c in ("revision", "judge", "mitigation") if c in labels}
        raise DataError(f"side {side.spec!r}: no label rows (model {side.model!r}"
                        + ("" if (labels["model"] == side.model).any() else " not in the label files")
                        + "; it has " + "; ".join(f"{c} {', '.join(v) or 'none'}" for c, v in have.items()) + ")")
    return rows
