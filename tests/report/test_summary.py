"""The closing lines of a run: time, samples per model, where the report, the browser and the leaderboard are."""

from __future__ import annotations

from pathlib import Path

from mirage import artefacts
from mirage.report.summary import closing_summary


def test_closing_summary_counts_what_the_run_wrote(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    for model, n in (("model-a", 390), ("model-b", 12)):
        path = Path(artefacts.labels(model, "demo"))
        path.parent.mkdir(parents=True)
        path.write_text("{}\n" * n + "\n", encoding="utf-8")
    figures = Path(artefacts.figures_dir("demo"))
    figures.mkdir(parents=True)
    for stem in ("fig2_violence_by_condition", "fig6_mitigation"):
        (figures / f"{stem}.png").write_bytes(b"png")
    text = closing_summary("demo", ["model-a", "model-b", "model-c"], 425.4)
    assert text.splitlines()[0] == "MIRAGE demo: done in 7 min 05 s. 402 samples labelled and scored (model-a: 390, model-b: 12)."
    assert f"report:          {artefacts.report('demo')}  (2 of 7 figures drawn" in text
    assert f"sample browser:  {artefacts.samples_page('demo')}" in text
    assert "leaderboard" not in text  # no board page was built
    assert closing_summary("lite", [], 42).startswith("MIRAGE lite: done in 42 s. 0 samples labelled and scored (none labelled).")
