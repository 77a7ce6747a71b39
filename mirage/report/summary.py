"""The closing lines of a workflow run (`make demo`, `snakemake lite`): how long it took, what the slice counted, and
where to look (report, sample browser, leaderboard). The counts are the report's own (Table 15's run columns), so
the console, the closing summary and the report agree."""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from mirage import artefacts
from mirage.report.figures import SPECS


def _duration(seconds: float) -> str:
    minutes, s = divmod(round(seconds), 60)
    return f"{minutes} min {s:02d} s" if minutes else f"{s} s"


def _counts(slice_name: str, models: list[str]) -> dict[str, dict[str, int]]:
    """Model -> run counts (samples, calls, scored rows) from the report's Table 15; {} when it has none."""
    path = Path(artefacts.tables_dir(slice_name)) / "table15_compute.csv"
    if not path.exists():
        return {}
    t = pd.read_csv(path)
    cols = {"samples": "run samples", "calls": "run calls", "scored rows": "run scored rows"}
    if not set(cols.values()) <= set(t.columns):
        return {}
    per = t[t["model"].isin(models)].groupby("model", sort=False)[list(cols.values())].sum()
    return {m: {k: int(per.at[m, c]) for k, c in cols.items()} for m in models if m in per.index}


def closing_summary(slice_name: str, models: list[str], elapsed_s: float) -> str:
    """A few lines for the end of a run of SLICE's target; the counts are those of the report it built."""
    counts = _counts(slice_name, models)
    figures = Path(artefacts.figures_dir(slice_name))
    drawn = sum((figures / f"{s.stem}.png").exists() for s in SPECS)
    total = {k: sum(c[k] for c in counts.values()) for k in ("samples", "calls", "scored rows")}
    who = ", ".join(f"{m}: {c['samples']:,}" for m, c in counts.items()) or "none generated"
    out = [f"MIRAGE {slice_name}: done in {_duration(elapsed_s)}. {total['samples']:,} samples ({who}) from "
           f"{total['calls']:,} calls, labelled and scored as {total['scored rows']:,} rows (request rows x samples).",
           f"  report:          {artefacts.report(slice_name)}  ({drawn} of {len(SPECS)} figures drawn; open it in a browser)",
           f"  sample browser:  {artefacts.samples_page(slice_name)}"]
    if slice_name == "demo" and Path(artefacts.board_page()["page"]).exists():
        out.append(f"  leaderboard:     {artefacts.board_page()['page']}")
    return "\n".join(out)
