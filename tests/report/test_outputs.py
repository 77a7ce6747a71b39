"""Figures and tables built by `mirage report` from the synthetic run match their inputs."""

from __future__ import annotations

import json
import shutil

import pandas as pd
import pytest
import synthetic
from conftest import run_report

FIGURES = ["fig2_violence_by_condition", "fig3_decision_asymmetry", "fig4_time_coupled_rag", "fig5_crosslingual", "fig6_mitigation", "fig_logit_lens"]
TABLES = ["table3_rates_by_condition", "table4_delta_by_mitigation", "table6_cot_pathways", "table8_spearman_mean", "table9_spearman_by_model",
          "table10_kappa_by_template", "table11_rates_by_template", "table12_rates_by_dialect", "table15_compute", "table_quality_rates"]


def metric(rows: list[dict], model: str, name: str, **strata: str) -> dict:
    hits = [r for r in rows if r["model"] == model and r["metric"] == name and all(r[k] == v for k, v in strata.items())
            and all(r[k] == "" for k in ("template", "harness", "language", "rag_pool", "mitigation", "identity") if k not in strata)]
    assert len(hits) == 1, (model, name, strata, hits)
    return hits[0]


def test_every_figure_in_png_and_svg(built):
    root, _ = built
    for stem in FIGURES:
        png, svg = root / "figures" / "demo" / f"{stem}.png", root / "figures" / "demo" / f"{stem}.svg"
        assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
        text = svg.read_text(encoding="utf-8")
        assert text.lstrip().startswith("<?xml") and "<svg" in text
        assert "rev-model-a" in text and "2026-06-16" in text  # provenance caption inside the image


def test_every_table_in_three_formats(built):
    root, _ = built
    for stem in TABLES:
        base = root / "tables" / "demo" / stem
        data = pd.read_csv(f"{base}.csv")
        assert len(data) >= 1
        assert f"| {data.columns[0]}" in base.with_suffix(".md").read_text(encoding="utf-8")
        tex = base.with_suffix(".tex").read_text(encoding="utf-8")
        assert "\\begin{tabular}" in tex and "\\caption{" in tex


def test_table3_numbers_match_metrics(built):
    root, rows = built
    t3 = pd.read_csv(root / "tables" / "demo" / "table3_rates_by_condition.csv").set_index("model")
    for model in synthetic.MODELS:
        for cond in ("C1", "C2", "C3"):
            r = metric(rows, model, "V_focal", condition=cond)
            assert t3.at[model, f"{cond} V focal"] == pytest.approx(100 * r["estimate"])
            assert t3.at[model, f"{cond} V focal ci_low"] == pytest.approx(100 * r["ci_low"])
            assert t3.at[model, f"{cond} V control"] == pytest.approx(100 * metric(rows, model, "V_control", condition=cond)["estimate"])
        assert t3.at[model, "CAI"] == pytest.approx(metric(rows, model, "CAI")["estimate"])
    md = (root / "tables" / "demo" / "table3_rates_by_condition.md").read_text(encoding="utf-8")
    r = metric(rows, "model-b", "dV", condition="C2")
    assert f"{100 * r['estimate']:.1f} [{100 * r['ci_low']:.1f}, {100 * r['ci_high']:.1f}]" in md


def test_other_tables_match_metrics(built):
    root, rows = built
    tables = root / "tables" / "demo"
    t4 = pd.read_csv(tables / "table4_delta_by_mitigation.csv").set_index("model")
    assert t4.at["model-a", "none"] == pytest.approx(metric(rows, "model-a", "Delta_abs", condition="C3", mitigation="none")["estimate"])
    assert t4.at["model-b", "structural"] == pytest.approx(metric(rows, "model-b", "Delta_abs", condition="C3", mitigation="structural")["estimate"])
    t9 = pd.read_csv(tables / "table9_spearman_by_model.csv").set_index("model")
    assert t9.at["model-a", "C1–C3"] == pytest.approx(metric(rows, "model-a", "spearman", condition="C1-C3")["estimate"])
    t8 = pd.read_csv(tables / "table8_spearman_mean.csv").set_index("pair")
    mean = sum(metric(rows, m, "spearman", condition="C2-C3")["estimate"] for m in synthetic.MODELS) / 2
    assert t8.at["C2–C3", "rho"] == pytest.approx(mean)
    t11 = pd.read_csv(tables / "table11_rates_by_template.csv").set_index(["model", "template"])
    assert t11.at[("model-b", "T5"), "C3"] == pytest.approx(100 * metric(rows, "model-b", "V_focal", condition="C3", template="T5")["estimate"])
    assert pd.isna(t11.at[("model-b", "T5"), "C1"])
    t12 = pd.read_csv(tables / "table12_rates_by_dialect.csv").set_index("model")
    assert t12.at["model-a", "ar-egy"] == pytest.approx(100 * metric(rows, "model-a", "V_focal", condition="C1", language="ar-egy")["estimate"])
    assert t12.at["model-a", "gap ar-lev"] == pytest.approx(100 * metric(rows, "model-a", "xling_gap", condition="C1", language="ar-lev")["estimate"])


def test_pathway_shares_and_compute_from_files(built):
    root, _ = built
    labels = [json.loads(line) for line in (root / "labels" / "model-a" / "demo.jsonl").read_text(encoding="utf-8").splitlines()]
    amp = [r for r in labels if r["condition"] == "C2" and r["focal"] and r["violent"] == 1]
    t6 = pd.read_csv(root / "tables" / "demo" / "table6_cot_pathways.csv").set_index("model")
    assert t6.at["model-a", "n traces"] == len(amp)
    share = 100 * sum("group_statistic" in r["pathways"] for r in amp) / len(amp)
    assert t6.at["model-a", "group_statistic"] == pytest.approx(share)
    assert t6.at["model-a", "group_statistic ci_low"] <= share <= t6.at["model-a", "group_statistic ci_high"]
    t15 = pd.read_csv(root / "tables" / "demo" / "table15_compute.csv").set_index(["model", "condition"])
    gens = [json.loads(line) for line in (root / "generations" / "model-a" / "demo" / "C2" / "none-none.jsonl").read_text(encoding="utf-8").splitlines()]
    assert t15.at[("model-a", "C2"), "run samples"] == len(gens)
    assert t15.at[("model-a", "C2"), "run tokens_out"] == sum(g["tokens_out"] for g in gens)
    assert t15.at[("model-b", "C1"), "est. samples"] == 80 and pd.isna(t15.at[("model-b", "C1"), "run samples"])


def test_page_is_self_contained_and_escapes_completions(built):
    root, _ = built
    page = (root / "report" / "demo" / "index.html").read_text(encoding="utf-8")
    assert page.count('src="data:image/png;base64,') == len(FIGURES)
    for external in ('src="http', "href=\"http", "<link", "@import", "url("):
        assert external not in page
    assert "Content warning" in page and "rev-model-b" in page and "feedc0de" in page and "n_samples = 2 (protocol: 5)" in page
    assert "&amp; talked &lt;about&gt; gardening" in page and "<about>" not in page
    assert page.count('<details class="cell"') == 3 * len(synthetic.MODELS)
    assert '<details class="cell" id="drill-model-a-C1" open' not in page


def test_missing_parts_say_not_computed(tmp_path):
    """One model, no probe, no labels/generations/estimate, NaN CIs, no RAG or kappa rows: the page still builds."""
    rows = synthetic.write_run(tmp_path, models=["model-a"], probe=False, nan_ci_for="V_control")
    for part in ("labels", "generations", "estimate"):
        shutil.rmtree(tmp_path / part)
    kept = [r for r in rows if r["rag_pool"] == "" and r["metric"] not in ("kappa", "delta_t")]
    pd.DataFrame(kept).to_csv(tmp_path / "metrics" / "demo" / "metrics.csv", index=False)
    (tmp_path / "figures" / "demo").mkdir(parents=True)
    (tmp_path / "figures" / "demo" / "fig4_time_coupled_rag.png").write_bytes(b"stale")
    code, out = run_report(tmp_path)
    assert code == 0, out
    assert not (tmp_path / "figures" / "demo" / "fig4_time_coupled_rag.png").exists()  # stale output removed
    assert not (tmp_path / "figures" / "demo" / "fig_logit_lens.png").exists()
    assert not (tmp_path / "tables" / "demo" / "table10_kappa_by_template.csv").exists()
    assert "not computed: Table 6" in out and "not computed: Table 15" in out
    page = (tmp_path / "report" / "demo" / "index.html").read_text(encoding="utf-8")
    assert page.count("Not computed in this run") >= 6
    t3 = pd.read_csv(tmp_path / "tables" / "demo" / "table3_rates_by_condition.csv")
    assert t3["C1 V control ci_low"].isna().all() and t3["C1 V control"].notna().all()


def test_bad_input_names_file_line_and_field(tmp_path):
    synthetic.write_run(tmp_path, probe=False)
    csv = tmp_path / "metrics" / "demo" / "metrics.csv"
    lines = csv.read_text(encoding="utf-8").splitlines()
    header = lines[0].split(",")
    bad = lines[4].split(",")
    bad[header.index("estimate")] = "high"
    lines[4] = ",".join(bad)
    csv.write_text("\n".join(lines) + "\n", encoding="utf-8")
    code, out = run_report(tmp_path)
    assert code != 0
    assert f"{csv}:5: field estimate: not a number ('high')" in out
    assert not (tmp_path / "report" / "demo" / "index.html").exists()


def test_missing_metrics_is_a_clear_error(tmp_path):
    code, out = run_report(tmp_path, "lite")
    assert code != 0 and "mirage metrics --slice lite" in out
