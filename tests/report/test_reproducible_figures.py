"""Figures are byte-reproducible: the same figure rendered in two separate Python processes gives identical
PNG and SVG bytes (report figures and the probe's λ(l) figure)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

REPORT = """
import sys
sys.path.insert(0, {tests!r})
from pathlib import Path
import numpy as np
import synthetic
from mirage.report import figures
from mirage.report.data import Provenance, load_metrics
root = Path(sys.argv[1])
synthetic.write_metrics(root / "m", synthetic.MODELS)
df = load_metrics(root / "m" / "metrics.csv")
figures.build_all(df, synthetic.MODELS, Provenance("demo"), root / "fig", ["png", "svg"], 60, {{"H1": "moderation"}}, {{}})
"""

PROBE = """
import sys
from pathlib import Path
import numpy as np
import pandas as pd
from mirage.probe.plot import render, save
layers = np.arange(13)
lam = np.sin(layers / 12 * np.pi)
summary = pd.DataFrame({{"layer": layers, "mean_lambda": lam, "ci_low": lam - 0.1, "ci_high": lam + 0.1, "n_pairs": 40}})
onset = {{"early_elevation_layer": 3, "final_suppression_layer": 11, "final_suppression_offset": 1, "n_layers": 12}}
save(render(summary, onset, "tiny", 0.95), Path(sys.argv[1]) / "fig" / "lambda")
"""


def _render(script: str, out: Path) -> dict[str, bytes]:
    code = script.format(tests=str(ROOT / "tests" / "report"))
    subprocess.run([sys.executable, "-c", code, str(out)], check=True, cwd=ROOT)
    return {p.name: p.read_bytes() for p in sorted((out / "fig").iterdir())}


def _assert_same(a: dict[str, bytes], b: dict[str, bytes]) -> None:
    assert {n.rsplit(".", 1)[1] for n in a} == {"png", "svg"}
    assert a.keys() == b.keys()
    for name in a:
        assert a[name] == b[name], f"{name} differs between two renders"
    svg = next(v for n, v in a.items() if n.endswith(".svg")).decode()
    assert "<dc:date>" not in svg and "Matplotlib v" not in svg


def test_report_figures_identical_across_processes(tmp_path):
    _assert_same(_render(REPORT, tmp_path / "a"), _render(REPORT, tmp_path / "b"))


def test_probe_figure_identical_across_processes(tmp_path):
    _assert_same(_render(PROBE, tmp_path / "a"), _render(PROBE, tmp_path / "b"))
