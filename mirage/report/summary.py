"""The closing lines of a workflow run (`make demo`, `snakemake lite`): how long it took, how many samples the slice
has, and where to look (report, sample browser, leaderboard)."""

from __future__ import annotations

from pathlib import Path

from mirage import artefacts
from mirage.report.figures import SPECS


def _duration(seconds: float) -> str:
    minutes, s = divmod(round(seconds), 60)
    return f"{minutes} min {s:02d} s" if minutes else f"{s} s"


def _lines(path: Path) -> int:
    with open(path, "rb") as fh:
        return sum(1 for line in fh if line.strip())


def closing_summary(slice_name: str, models: list[str], elapsed_s: float) -> str:
    """A few lines for the end of a run of SLICE's target; counts come from the files the run wrote."""
    labels = {m: _lines(Path(artefacts.labels(m, slice_name))) for m in models if Path(artefacts.labels(m, slice_name)).exists()}
    figures = Path(artefacts.figures_dir(slice_name))
    drawn = sum((figures / f"{s.stem}.png").exists() for s in SPECS)
    who = ", ".join(f"{m}: {n:,}" for m, n in labels.items()) or "none labelled"
    out = [f"MIRAGE {slice_name}: done in {_duration(elapsed_s)}. {sum(labels.values()):,} samples labelled and scored ({who}).",
           f"  report:          {artefacts.report(slice_name)}  ({drawn} of {len(SPECS)} figures drawn; open it in a browser)",
           f"  sample browser:  {artefacts.samples_page(slice_name)}"]
    if slice_name == "demo" and Path(artefacts.board_page()["page"]).exists():
        out.append(f"  leaderboard:     {artefacts.board_page()['page']}")
    return "\n".join(out)
