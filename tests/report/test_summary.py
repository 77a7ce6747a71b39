"""The closing lines of a run: time, what was counted (the report's own numbers), where the report, the browser and
the leaderboard are."""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from mirage import artefacts
from mirage.report.summary import closing_summary


def test_closing_summary_counts_what_the_report_counted(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    tables = Path(artefacts.tables_dir("demo"))
    tables.mkdir(parents=True)
    pd.DataFrame([{"model": "model-a", "condition": "C1", "run samples": 180, "run calls": 180, "run scored rows": 180},
                  {"model": "model-a", "condition": "C3", "run samples": 202, "run calls": 232, "run scored rows": 210},
                  {"model": "model-b", "condition": "C1", "run samples": 12, "run calls": 12, "run scored rows": 12},
                  {"model": "model-x", "condition": "C1", "run samples": 5, "run calls": 5, "run scored rows": 5}]
                 ).to_csv(tables / "table15_compute.csv", index=False)
    figures = Path(artefacts.figures_dir("demo"))
    figures.mkdir(parents=True)
    for stem in ("fig2_violence_by_condition", "fig6_mitigation"):
        (figures / f"{stem}.png").write_bytes(b"png")
    text = closing_summary("demo", ["model-a", "model-b", "model-c"], 425.4)
    assert text.splitlines()[0] == ("MIRAGE demo: done in 7 min 05 s. 394 samples (model-a: 382, model-b: 12) from 424 "
                                    "calls, labelled and scored as 402 rows (request rows x samples).")
    assert f"report:          {artefacts.report('demo')}  (2 of 7 figures drawn" in text
    assert f"sample browser:  {artefacts.samples_page('demo')}" in text
    assert "leaderboard" not in text  # no board page was built
    assert closing_summary("lite", [], 42).startswith("MIRAGE lite: done in 42 s. 0 samples (none generated) from 0 calls")
