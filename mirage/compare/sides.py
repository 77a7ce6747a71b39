"""Which label rows one side of a comparison selects (its syntax and `parse_side`: mirage/config/compare.py)."""

from __future__ import annotations

import pandas as pd

from mirage.config.compare import Side
from mirage.io import DataError


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
