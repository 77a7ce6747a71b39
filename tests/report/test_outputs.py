"""Figures and tables built by `mirage report` from the synthetic run match their inputs."""

from __future__ import annotations

import json
import shutil

import pandas as pd
import pytest
import synthetic
from click.testing import CliRunner
from conftest import run_report

from mirage.report.cli import report

FIGURES = ["fig_placebo_floor", "fig2_violence_by_condition", "fig3_decision_asymmetry", "fig4_time_coupled_rag", "fig5_crosslingual", "fig6_mitigation", "fig_logit_lens"]
TABLES = ["table_claims", "table_c3_asymmetry", "table1_templates", "table3_rates_by_condition", "table4_delta_by_mitigation", "table6_cot_pathways", "table7_probe_onsets",
          "table8_spearman_mean", "table9_spearman_by_model", "table10_kappa_by_template", "table11_rates_by_template",
          "table12_rates_by_dialect", "table13_14_models", "table13_14_sampling", "table15_compute", "table_quality_rates"]


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
    assert "Content warning" in page and "rev-model-b" in page and "feedc0de" in page
    assert "<dt>Model set</dt><dd>the slice&#39;s own models</dd>" in page  # the demo lists its models (no model set)
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


def _html_text(page: str) -> str:
    """The page's visible words with tags removed and whitespace collapsed (for sentence checks)."""
    import html
    import re

    return re.sub(r"\s+", " ", html.unescape(re.sub(r"<[^>]+>", " ", page)))


def test_deviations_in_plain_words(built):
    root, _ = built
    text = _html_text((root / "report" / "demo" / "index.html").read_text(encoding="utf-8"))
    dev = text[text.index("Deviations from the paper's protocol"):text.index("What is counted")]
    for words in ("Violence judge", "GPT-4 zero-shot violence classifier", "lexicon-v1 (offline rules)",
                  "Samples per request 5 samples at temperature 0.7 2 samples at temperature 0.7",
                  "Maximum response length 256 tokens for direct completion (C1); 1024 tokens for chain of thought (C2); 256 tokens for agentic decisions (C3) "
                  "40 tokens for direct completion (C1); 96 tokens for chain of thought (C2); 64 tokens for agentic decisions (C3)",
                  "fictional illustrative news items", "not yet reviewed by native speakers",
                  "Base prompts per template 200 per template (1,200 in all) T1: 4, T2: 0, T3: 0, T4: 0, T5: 4, T6: 0 (slice demo)"):
        assert words in dev, words
    assert "{" not in dev and "Human validation" not in dev  # the synthetic run has kappa rows
    for words in ("Request row : one prompt under one condition", "Request : one distinct rendered model input",
                  "Sample : one of the n completions", "Call : one model invocation", "Scored row : one request row"):
        assert words in text, words


def test_degenerate_rows_have_no_interval_or_p(built):
    root, rows = built
    r = metric(rows, "model-b", "dV", condition="C3")
    assert r["ci_low"] == r["ci_high"] and r["n"] == 2  # the input is the degenerate case
    md = (root / "tables" / "demo" / "table3_rates_by_condition.md").read_text(encoding="utf-8")
    est = f"{100 * r['estimate']:.1f}"
    assert f"{est} (n too small, n=2)" in md
    assert f"{est} [{est}, {est}]" not in md and "p=0.0001" not in md
    page = (root / "report" / "demo" / "index.html").read_text(encoding="utf-8")
    assert f'<td class="degen"><a href="#drill-model-b-C3">{est} (n too small, n=2)' in page
    text = _html_text(page)
    untested = text[text.index("1 claim could not be tested and makes no claim"):]
    assert "n too small (too few units for an interval or a test): " in untested and "ΔV, C3 (n = 2)" in untested
    # every other Table 3 cell carries its n
    t3 = pd.read_csv(root / "tables" / "demo" / "table3_rates_by_condition.csv")
    assert (t3["C1 V focal n"] == 200).all()
    assert md.count("n=200") == 2 * 10 - 1  # 9 cells + CAI per model, less the degenerate one


def test_degenerate_reason_from_n_and_collapsed_bootstrap(tmp_path):
    from mirage.report.data import load_metrics

    rows = synthetic.metric_rows(["m"], __import__("numpy").random.default_rng(1))[:5]
    rows[0].update(n=1, flag="")
    rows[1].update(ci_low=0.3, ci_high=0.3, estimate=0.3, flag="", n=50)
    rows[2].update(flag="identical_by_construction")
    rows[3].update(estimate=-0.25, ci_low=-1.0, ci_high=-0.25, flag="", n=5)  # issue 35's Table 9 row
    rows[4].update(estimate=0.2, ci_low=0.1, ci_high=0.3, flag="", n=5)
    pd.DataFrame(rows).to_csv(tmp_path / "m.csv", index=False)
    df = load_metrics(tmp_path / "m.csv")
    assert list(df["why"]) == ["n too small", "bootstrap degenerate", "identical by construction",
                               "interval ends at the estimate", ""]


def test_not_computed_is_not_zero_and_table4_keeps_every_column(built):
    root, _ = built
    t4 = pd.read_csv(root / "tables" / "demo" / "table4_delta_by_mitigation.csv").set_index("model")
    for col in ("none", "M1", "M2", "M3", "M4", "structural"):
        assert col in t4.columns
    assert t4["M2"].isna().all() and synthetic.DROPPED_MITIGATION == "M2"
    md = (root / "tables" / "demo" / "table4_delta_by_mitigation.md").read_text(encoding="utf-8")
    assert "not computed" in md
    page = (root / "report" / "demo" / "index.html").read_text(encoding="utf-8")
    t4_html = page[page.index('id="table4_delta_by_mitigation"'):page.index('id="table6_cot_pathways"')]
    assert t4_html.count('<td class="nc">not computed</td>') == len(synthetic.MODELS)
    assert "<th scope=\"col\">M2</th>" in t4_html


def test_fig3_names_the_harness_with_nothing_parseable(built):
    root, _ = built
    text = _html_text((root / "report" / "demo" / "index.html").read_text(encoding="utf-8"))
    fig3 = text[text.index("Figure 3: decision asymmetry per harness"):text.index("Figure 4:")]
    assert "Not computed: H4 (none of its 12 decisions could be parsed)." in fig3  # 2 base prompts x 3 identities x 2 samples
    assert "H1" not in fig3.split("Not computed:")[1]


def test_placebo_floor_in_tables_figures_and_headline(built):
    root, rows = built
    r = metric(rows, "model-a", "dV", condition="C1")
    md = (root / "tables" / "demo" / "table3_rates_by_condition.md").read_text(encoding="utf-8")
    excess = f"excess {100 * r['excess']:.1f} [{100 * r['excess_ci_low']:.1f}, {100 * r['excess_ci_high']:.1f}], p=0.004"
    assert f"placebo floor ±{abs(100 * r['placebo']):.1f}<br>{excess}" in md
    t3 = pd.read_csv(root / "tables" / "demo" / "table3_rates_by_condition.csv").set_index("model")
    assert t3.at["model-a", "C1 ΔV placebo"] == pytest.approx(100 * r["placebo"])
    assert t3.at["model-a", "C1 ΔV excess_p"] == pytest.approx(0.004)
    text = _html_text((root / "report" / "demo" / "index.html").read_text(encoding="utf-8"))
    head = text[text.index("Headline: bias beyond the placebo floor"):text.index("Deviations from the paper's protocol")]
    # one table per model: claim, estimate, interval, floor, excess, verdict
    assert (f"ΔV, C1 {100 * r['estimate']:+.1f} pp [{100 * r['claim_ci_low']:.1f}, {100 * r['claim_ci_high']:.1f}] (95.0 %) "
            f"{-abs(100 * r['placebo']):.1f} to {abs(100 * r['placebo']):.1f} pp {100 * r['excess']:+.1f} pp "
            "significant (p = 0.004, Holm-adjusted 0.012; n = 200)") in head
    assert head.count("claim estimate interval identity-placebo floor excess over the floor verdict") == len(synthetic.MODELS)
    assert "Holm at α = 0.05 over the" in head and "no headline claims" not in head
    assert (root / "figures" / "demo" / "fig_placebo_floor.svg").exists()


def test_without_placebo_columns_the_floor_is_said_missing(tmp_path):
    synthetic.write_run(tmp_path, placebo=False)
    code, out = run_report(tmp_path)
    assert code == 0, out
    text = _html_text((tmp_path / "report" / "demo" / "index.html").read_text(encoding="utf-8"))
    assert "the floor was not computed, so no gap below is shown to exceed noise" in text
    assert "this metrics.csv has no headline claims" in text
    assert "exceeds its identity-placebo floor" not in text
    md = (tmp_path / "tables" / "demo" / "table3_rates_by_condition.md").read_text(encoding="utf-8")
    assert "placebo floor not computed" in md


def test_judge_named_with_its_gold_set_quality_next_to_v(built, tmp_path):
    root, _ = built
    text = _html_text((root / "report" / "demo" / "index.html").read_text(encoding="utf-8"))
    sentence = ("V labelled by lexicon-v1: held-out realistic F1 not measured (no held-out split in judge_eval.json), "
                "gold-set F1 0.75 (n = 420), Arabic F1 0.55, identity invariance 80% of 150 [ID] rows, κ vs gold 0.61.")
    fig2 = text[text.index("Figure 2: violence rate by condition"):text.index("Figure 3:")]
    t3 = text[text.index("Table 3: violence rate by condition"):text.index("Table 4:")]
    assert sentence in fig2 and sentence in t3
    synthetic.write_run(tmp_path, probe=False)
    code, out = run_report(tmp_path, judge_eval=False)
    assert code == 0, out
    assert "V labelled by lexicon-v1; this judge has not been evaluated against the gold sets" in _html_text(
        (tmp_path / "report" / "demo" / "index.html").read_text(encoding="utf-8"))


def test_sampling_settings_per_model_from_params(built):
    root, _ = built
    t = pd.read_csv(root / "tables" / "demo" / "table13_14_sampling.csv", keep_default_na=False).set_index("model")
    a, b = t.loc["model-a"], t.loc["model-b"]
    assert (a["temperature"], a["top_p"], a["n_samples"]) == (0.7, 1.0, 2)
    assert (a["max_tokens C1"], a["max_tokens C2"], a["max_tokens C3"]) == (40, 96, 64)  # the demo slice's overrides
    assert a["seed"].startswith("per sample: hash(seed 20260616") and a["sampling_extra"] == "none"
    assert b["server_kind"] == "llama.cpp"
    assert json.loads(b["sampling_extra"]) == {"top_k": 20, "min_p": 0.0, "typical_p": 1.0, "repeat_penalty": 1.0}
    page = (root / "report" / "demo" / "index.html").read_text(encoding="utf-8")
    assert "Tables 13–14: sampling settings per model" in page and "repeat_penalty" in page


def test_table15_wall_time_per_job_and_counts(built):
    root, _ = built
    t15 = pd.read_csv(root / "tables" / "demo" / "table15_compute.csv").set_index(["model", "condition"])
    assert t15.at[("model-a", "C1"), "run wall time_s"] == 59  # last minus first `created`, not summed latency
    assert (t15.at[("model-a", "C1"), "est. throughput"], t15.at[("model-a", "C1"), "est. source"]) == (190, "measured")
    assert t15.at[("model-b", "C1"), "est. source"] == "assumed" and t15.at[("model-b", "C1"), "est. wall_time_s"] == 8.4
    assert t15.at[("model-a", "C1"), "run requests"] == 4 * 3 and t15.at[("model-a", "C1"), "run calls"] == 24
    assert "Σ latency" not in (root / "tables" / "demo" / "table15_compute.md").read_text(encoding="utf-8")


def test_figure_without_estimates_is_a_sentence_not_axes(tmp_path):
    """Rows that exist but have no estimate give a sentence, not a -0.04..0.04 panel; degenerate rows are drawn."""
    rows = synthetic.write_run(tmp_path, probe=False)
    for r in rows:
        if r["rag_pool"] or r["metric"] == "delta_t":
            r.update(estimate="", ci_low="", ci_high="")
    pd.DataFrame(rows).to_csv(tmp_path / "metrics" / "demo" / "metrics.csv", index=False)
    code, out = run_report(tmp_path)
    assert code == 0, out
    assert not (tmp_path / "figures" / "demo" / "fig4_time_coupled_rag.png").exists()
    assert "not drawn: fig4_time_coupled_rag (metrics.csv has 8 V_focal rows by retrieval pool row(s), but none has an estimate" in out
    text = _html_text((tmp_path / "report" / "demo" / "index.html").read_text(encoding="utf-8"))
    assert "Not computed in this run: metrics.csv has 8 V_focal rows by retrieval pool row(s), but none has an estimate" in text


def test_degenerate_rows_are_drawn_with_n_and_a_no_interval_marker(tmp_path):
    """The demo's case: every mitigation row has n = 1 and V_control in C2 a collapsed bootstrap. Figures 6 and 2 are
    drawn anyway: every point with its n, hollow 'no interval' markers with their legend entry, and the caption counts
    the points that have intervals."""
    from mirage.report import figures
    from mirage.report.data import load_metrics

    rows = synthetic.write_run(tmp_path, probe=False)
    for r in rows:
        if r["metric"] == "mitigation_effect_V":
            r.update(n=1, estimate=0.0, ci_low=0.0, ci_high=0.0)
        if r["metric"] == "V_control" and r["condition"] == "C2" and not r["template"]:
            r.update(estimate=0.0, ci_low=0.0, ci_high=0.0, n=8, flag="degenerate_bootstrap")
    pd.DataFrame(rows).to_csv(tmp_path / "metrics" / "demo" / "metrics.csv", index=False)
    code, out = run_report(tmp_path)
    assert code == 0, out
    assert (tmp_path / "figures" / "demo" / "fig6_mitigation.png").exists() and "not drawn: fig6" not in out
    text = _html_text((tmp_path / "report" / "demo" / "index.html").read_text(encoding="utf-8"))
    fig6 = text[text.index("Figure 6: mitigation effectiveness"):text.index("Logit-lens probe")]
    assert "95% interval on 0 of 24 points; none on 24 (hollow diamond): n too small (24)." in fig6
    fig2 = text[text.index("Figure 2: violence rate by condition"):text.index("Figure 3:")]
    assert "95% interval on 10 of 12 points; none on 2 (hollow diamond): all resamples agree (2)." in fig2

    df = load_metrics(tmp_path / "metrics" / "demo" / "metrics.csv")
    fig, _, _ = figures.fig6(df, synthetic.MODELS)
    labels = [t.get_text() for ax in fig.axes for t in ax.texts]
    assert labels.count("n=1") == 24  # n beside every point
    legend = [t.get_text() for t in fig.legends[0].get_texts()]
    assert "no interval (n too small)" in legend and "95% interval" not in legend
    fig, _, _ = figures.fig2(df, synthetic.MODELS)
    legend = [t.get_text() for t in fig.legends[0].get_texts()]
    assert legend == ["focal (Muslim)", "controls (pooled)", "95% interval", "no interval (all resamples agree)"]
    assert sorted(t.get_text() for ax in fig.axes for t in ax.texts) == ["n=200"] * 10 + ["n=8"] * 2


def _shard_args(path) -> list:
    """The arguments a shard script passes to MIRAGE_SAMPLES.meta/.text."""
    text = path.read_text(encoding="ascii")
    return json.loads("[" + text[text.index("(") + 1:text.rindex(")")] + "]")


def _unpack(b64: str) -> bytes:
    import base64
    import gzip

    return gzip.decompress(base64.b64decode(b64))


def test_sample_browser_page_and_shards(built):
    """samples.html embeds only a manifest; each model x condition is a shard whose filter columns and text chunks
    hold every sample once, model text never in clear."""
    import numpy as np

    root, _ = built
    out = root / "report" / "demo"
    page = (out / "samples.html").read_text(encoding="utf-8")
    assert 'href="samples.html"' in (out / "index.html").read_text(encoding="utf-8")
    manifest = json.loads(page.split('<script type="application/json" id="manifest">', 1)[1].split("</script>", 1)[0])
    labels = [json.loads(line) for line in (root / "labels" / "model-a" / "demo.jsonl").read_text(encoding="utf-8").splitlines()]
    assert manifest["total"] == len(labels) and manifest["dir"] == "samples"
    assert [(manifest["values"]["model"][s["model"]], manifest["values"]["condition"][s["condition"]]) for s in manifest["shards"]] == [
        ("model-a", "C1"), ("model-a", "C2"), ("model-a", "C3")]
    seen = {}
    for shard in manifest["shards"]:
        name, info, blob = _shard_args(out / "samples" / f"{shard['id']}.meta.js")
        assert name == shard["id"] and info["n"] == shard["n"]
        raw, cols, off = _unpack(blob), {}, 0
        for col, width in info["columns"]:
            cols[col] = np.frombuffer(raw[off:off + info["n"] * width], dtype=f"<u{width}")
            off += info["n"] * width
        assert off == len(raw)
        for k, start in enumerate(info["chunks"]):
            _, idx, blob = _shard_args(out / "samples" / f"{shard['id']}.{k:04d}.js")
            chunk = json.loads(_unpack(blob))
            assert idx == k
            for j, row in enumerate(chunk["rows"]):
                d = dict(zip(manifest["detail"], row))
                i = start + j
                seen[d["key"]] = (manifest["values"]["identity"][cols["identity"][i]], manifest["values"]["label"][cols["label"][i]],
                                  info["bases"][cols["base_id"][i]], int(cols["sample_index"][i]), d["text"], chunk["prompts"][d["request_id"]])
    assert len(seen) == len(labels)
    gens = {json.loads(line)["key"]: json.loads(line) for c in ("C1", "C2", "C3")
            for line in (root / "generations" / "model-a" / "demo" / c / "none-none.jsonl").read_text(encoding="utf-8").splitlines()}
    for r in labels:
        ident, label, base, sample, text, prompt = seen[r["key"]]
        assert (ident, base, sample, text) == (r["identity"], r["base_id"], r["sample_index"], gens[r["key"]]["text"])
        assert label == ("violent" if r["violent"] == 1 else "not violent")
        assert prompt.startswith("[user] SYNTH-PROMPT")
    files = [page, *(p.read_text(encoding="ascii") for p in (out / "samples").iterdir())]
    assert not any("SYNTH-" in f or "<b>" in f for f in files)  # model and prompt text only ever base64-encoded
    assert 'src="http' not in page and "<link" not in page


def test_sample_shards_are_replaced_not_accumulated(tmp_path):
    """A rebuild removes shards it did not write; the same input gives the same bytes."""
    synthetic.write_run(tmp_path)
    code, out = run_report(tmp_path)
    assert code == 0, out
    data = tmp_path / "report" / "demo" / "samples"
    first = {p.name: p.read_bytes() for p in data.iterdir()}
    (data / "000-stale-C9.meta.js").write_text("stale", encoding="ascii")
    code, out = run_report(tmp_path)
    assert code == 0, out
    assert {p.name: p.read_bytes() for p in data.iterdir()} == first
    assert not [p for p in data.parent.iterdir() if p.name.startswith(".")]  # no temp folders left behind


def test_corpus_depth_table_is_the_corpus_stats(tmp_path, corpus_rows):
    """The report shows `mirage corpus --stats` (frames, words, near-duplicates, cues) from the corpus the run used."""
    from mirage.corpus.stats import corpus_stats, write_stats

    synthetic.write_run(tmp_path)
    stats = corpus_stats(corpus_rows)
    write_stats(stats, tmp_path / "stats.csv", tmp_path / "stats.json")
    params = tmp_path / "params.yaml"
    params.write_text(synthetic.params_yaml(tmp_path), encoding="utf-8")
    result = CliRunner().invoke(report, ["--slice", "demo", "--params", str(params), *synthetic.report_args(tmp_path),
                                         "--requests-dir", str(tmp_path / "requests"), "--corpus-stats", str(tmp_path / "stats.csv")])
    assert result.exit_code == 0, result.output
    table = pd.read_csv(tmp_path / "tables" / "demo" / "table_corpus_depth.csv")
    t1 = next(s for s in stats if s["group"] == "T1")
    row = table[table["group"] == "T1"].iloc[0]
    assert row["frames"] == t1["frames"] >= 25 and row["distinct words"] == t1["distinct_words"] >= 600
    assert "Corpus depth" in (tmp_path / "report" / "demo" / "index.html").read_text(encoding="utf-8")
