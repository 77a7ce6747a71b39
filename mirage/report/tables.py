"""Tables 1, 3, 4, 6-15 of the paper (those a run can produce) (plus response-quality rates), each as numbers (CSV) and
formatted "estimate [95% CI]" cells (Markdown, LaTeX, HTML)."""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import pandas as pd
from statsmodels.stats.proportion import proportion_confint

from mirage import artefacts
from mirage.io import atomic_write
from mirage.judges.eval import quality
from mirage.metric_names import (
    CAI,
    DELTA_ABS,
    DELTA_ABS_UNBIASED,
    DELTA_REFUSAL_ADVERSE,
    DELTA_REFUSAL_FAVOURABLE,
    DELTA_SIGNED,
    DV,
    DV_CORRECTED,
    DV_REFUSAL_MISSING,
    DV_REFUSAL_VIOLENT,
    ERROR_RATE,
    HIGH_DELTA_LOW_C1,
    KAPPA,
    METRICS,
    REASONING,
    REFUSAL_GAP,
    REFUSAL_RATE,
    SPEARMAN,
    UNPARSEABLE_GAP,
    UNPARSEABLE_RATE,
    V_CONTROL,
    V_CORRECTED,
    V_FOCAL,
    XLING_GAP,
)
from mirage.metrics import claims
from mirage.report.data import ANY, BIAS_METRICS, EITHER, PLACEBO_NUMERIC, SIGNED, generation_counts, number, select
from mirage.report.figures import CONDITIONS, LANGUAGES, MITIGATIONS, OPTIONAL
from mirage.report.protocol import JudgeInfo

NOT_COMPUTED = "not computed"
NOT_MEASURED = "not measured"
PATHWAYS = ["group_statistic", "reasoner_stand_in", "coherence_pressure"]
PAIR = re.compile(r"C\d")
ESTIMATE_COLUMNS = ["requests", "samples", "tokens_in", "tokens_out", "gpu_hours", "api_cost_usd", "local_time_s", "wall_time_s",
                    "throughput", "source"]
NEWLINE = r"\n"
TEX_SPECIAL = str.maketrans({c: "\\" + c for c in "_%&#$"})


@dataclass
class Table:
    """A built table: numeric frame for CSV and the formatted frame shown in Markdown/LaTeX/HTML."""

    stem: str
    title: str
    caption: str
    data: pd.DataFrame | None = None
    display: pd.DataFrame | None = None
    missing: str = ""


@dataclass
class Inputs:
    """Everything a table builder may read."""

    metrics: pd.DataFrame
    models: list[str]
    labels: pd.DataFrame
    generations: pd.DataFrame
    estimate: dict | None
    probe_onsets: pd.DataFrame | None = None
    corpus_stats: pd.DataFrame | None = None
    sampling: pd.DataFrame | None = None
    alpha: float = 0.05
    correction_notes: dict[str, str] | None = None  # summary.json judge_correction: model -> source used or why none
    judges: list[JudgeInfo] = field(default_factory=list)


def _fmt(v: float, digits: int) -> str:
    return number(v, digits)


def cell(est: float, lo: float, hi: float, digits: int, n: float = float("nan"), why: str = "", p: float = float("nan")) -> str:
    """'12.3 [10.1, 14.5], p=0.01, n=200'. No interval or p where the row is degenerate (`why`, e.g. 'n too small');
    NOT_COMPUTED where there is no estimate, so a missing value never reads as zero."""
    ns = "" if pd.isna(n) else f", n={int(n):,}"
    if pd.isna(est):
        return f"undefined ({why}{ns})" if why else NOT_COMPUTED
    if why:
        return f"{_fmt(est, digits)} ({why}{ns})"
    ci = "" if pd.isna(lo) or pd.isna(hi) else f" [{_fmt(lo, digits)}, {_fmt(hi, digits)}]"
    ps = "" if pd.isna(p) else f", p={p:.2g}"
    return f"{_fmt(est, digits)}{ci}{ps}{ns}"


def floor_text(r: dict, digits: int) -> str:
    """Second and third line of a bias cell: the identity-placebo floor and the excess over it."""
    if pd.isna(r["placebo"]):
        return "\nplacebo floor not computed"
    band = f"±{abs(r['placebo']):.{digits}f}" if r["metric"] in SIGNED else f"{r['placebo']:.{digits}f}"
    if pd.isna(r["excess"]):
        return f"\nplacebo floor {band}\nexcess not computed"
    exc = cell(r["excess"], r["excess_ci_low"], r["excess_ci_high"], digits, why=r["why"], p=r["excess_p"])
    return f"\nplacebo floor {band}\nexcess {exc}"


SCALED = ("estimate", "ci_low", "ci_high", "placebo", "excess", "excess_ci_low", "excess_ci_high")


def wide(long: pd.DataFrame, index: list[str], key_order: list[str]) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Pivot long metric rows (index..., key, scale, digits, show_p) to a numeric frame (estimate, CI, n and, for
    bias metrics, placebo and excess columns per key) and a display frame; every key in `key_order` gets a column."""
    long = long.drop_duplicates([*index, "key"]).copy()
    for col in SCALED:
        long[col] = long[col] * long["scale"]
    recs = {(tuple(r[i] for i in index), r["key"]): r for r in long.to_dict("records")}
    keys = list(dict.fromkeys([*key_order, *sorted(set(long["key"]) - set(key_order))]))
    bias_keys = {k for (_, k), r in recs.items() if r["metric"] in BIAS_METRICS}
    data, shown = [], []
    for ix in dict.fromkeys(tuple(r[i] for i in index) for r in long.to_dict("records")):
        d, v = dict(zip(index, ix)), dict(zip(index, ix))
        for k in keys:
            r = recs.get((ix, k))
            cols = ("", " ci_low", " ci_high", " n") + ((" placebo", " excess", " excess_ci_low", " excess_ci_high", " excess_p") if k in bias_keys else ())
            src = ("estimate", "ci_low", "ci_high", "n", "placebo", "excess", "excess_ci_low", "excess_ci_high", "excess_p")
            for c, f in zip(cols, src):
                d[k + c] = float("nan") if r is None else r[f]
            if r is None:
                v[k] = NOT_COMPUTED
                continue
            digits = int(r["digits"])
            v[k] = cell(r["estimate"], r["ci_low"], r["ci_high"], digits, r["n"], r["why"], r["p"] if r["show_p"] else float("nan"))
            if r["metric"] in BIAS_METRICS and v[k] != NOT_COMPUTED:
                v[k] += floor_text(r, digits)
        data.append(d)
        shown.append(v)
    return pd.DataFrame(data), pd.DataFrame(shown)


def _long(rows: pd.DataFrame, key: Callable[[pd.Series], str] | str, scale: float, digits: int, show_p: bool = False) -> pd.DataFrame:
    keys = rows.apply(key, axis=1) if callable(key) and not rows.empty else rows[key] if not rows.empty else pd.Series(dtype=str)
    return rows.assign(key=keys.astype(str), scale=scale, digits=digits, show_p=show_p)


def _sort_models(frame: pd.DataFrame, models: list[str]) -> pd.DataFrame:
    order = {m: i for i, m in enumerate(models)}
    return frame.sort_values("model", key=lambda s: s.map(lambda m: order.get(m, len(order)))).reset_index(drop=True)


def _finish(t: Table, long: pd.DataFrame, index: list[str], keys: list[str], models: list[str], why: str) -> Table:
    if long.empty or long["estimate"].isna().all():
        t.missing = why if long.empty else f"{len(long)} matching row(s) in metrics.csv, none with an estimate (no labelled samples in these strata)"
        return t
    data, shown = wide(long, index, keys)
    t.data, t.display = _sort_models(data, models), _sort_models(shown, models)
    return t


def table1(inp: Inputs) -> Table:
    t = Table("table1_templates", "Table 1: templates in this slice",
              "Base prompts, identity variants, languages, requests and samples per template in this run's labels, "
              "beside the protocol's 200 base prompts per template. A request is one rendered input (base prompt x identity "
              "x language x condition x retrieval pool x mitigation); a sample is one scored completion of a request.")
    lab = inp.labels
    if lab.empty or not {"template", "base_id", "identity"} <= set(lab.columns):
        t.missing = "no labels for this slice"
        return t
    n_models = max(1, lab["model"].nunique()) if "model" in lab.columns else 1
    g = lab.groupby("template")
    data = pd.DataFrame({"base prompts": g["base_id"].nunique(), "protocol base prompts": 200,
                         "identities": g["identity"].nunique(),
                         "languages": g["language"].nunique() if "language" in lab.columns else float("nan"),
                         "requests": g["request_id"].nunique() if "request_id" in lab.columns else float("nan"),
                         "samples per model": g.size() / n_models}).reset_index()
    t.data, t.display = data, data.map(_number)
    return t


def table_corpus(inp: Inputs) -> Table:
    t = Table("table_corpus_depth", "Corpus depth: frames, case files, words, near-duplicates, cues",
              "Per template (T5: per agentic harness), measured on the English focal text of the corpus this run used "
              "(`mirage corpus --stats`): base prompts, sentence frames, case files, distinct words, near-duplicate pairs "
              "(word sets overlapping >= 80 %), identity cue mix (noun / given name / attire), Arabic parallel coverage and "
              "paraphrased (placebo) base prompts. Few frames make many base prompts close to few independent observations.")
    st = inp.corpus_stats
    if st is None or st.empty:
        t.missing = "no corpus statistics (run `mirage corpus`, which writes them next to the corpus)"
        return t
    data = st.assign(near_dup_pct=100 * st["near_dup_rate"])
    keep = {"group": "group", "bases": "base prompts", "frames": "frames", "cases": "case files",
            "distinct_words": "distinct words", "near_dup_pct": "near-dup pairs (%)", "cue_noun": "cue: noun",
            "cue_name": "cue: name", "cue_attire": "cue: attire", "arabic_bases": "Arabic bases",
            "arabic_feminine_or_plural": "Arabic fem./pl.", "paraphrase_bases": "paraphrased bases"}
    data = data[[c for c in keep if c in data.columns]].rename(columns=keep)
    t.data, t.display = data, data.map(_number)
    return t


def _bias(rows: pd.DataFrame, key: Callable[[pd.Series], str] | str, scale: float, digits: int) -> pd.DataFrame:
    return _long(rows, key, scale, digits, show_p=True)


#: (metric, label, scale, show_p) of V focal, V control (%) and ΔV (pp, with its p and floor): see _by_condition.
RATES = ((V_FOCAL, "V focal", 100, False), (V_CONTROL, "V control", 100, False), (DV, "ΔV", 100, True))


def _by_condition(metrics: pd.DataFrame, columns: tuple[tuple[str, str, float, bool], ...],
                  **where) -> tuple[list[pd.DataFrame], list[str]]:
    """Long rows (one decimal) of each (metric, label, scale, show_p) per condition, keyed "C1 label", and the keys in
    table order: per condition, the labels in the order given."""
    parts = [_long(select(metrics, m, condition=ANY, **where), lambda r, lab=lab: f"{r.condition} {lab}", scale, 1, show_p)
             for m, lab, scale, show_p in columns]
    return parts, [f"{c} {lab}" for c in CONDITIONS for _, lab, _, _ in columns]


def table3(inp: Inputs) -> Table:
    t = Table("table3_rates_by_condition", "Table 3: violence rate by condition",
              "Violent-completion rate (%) per model and condition: focal, pooled controls and ΔV = focal − control (pp), "
              "with 95% CIs and n (prompts); the ΔV cell adds the identity-placebo floor and the excess of ΔV over it "
              "(interval of its test, p); C2 also ΔV of the reasoning trace. CAI = V(C2)/V(C1) on the matched subset "
              "(Fieller interval; undefined when V(C1) = 0).")
    parts, keys = _by_condition(inp.metrics, RATES)
    parts.append(_bias(select(inp.metrics, DV + REASONING, condition="C2"), lambda r: "C2 ΔV reasoning trace", 100, 1))
    parts.append(_long(select(inp.metrics, CAI, condition=EITHER), lambda r: CAI, 1, 2))
    keys += ["C2 ΔV reasoning trace", CAI]
    return _finish(t, pd.concat(parts), ["model"], keys, inp.models, "no V_focal / V_control / dV / CAI rows in metrics.csv")


def table4(inp: Inputs) -> Table:
    t = Table("table4_delta_by_mitigation", "Table 4: decision asymmetry Δ abs (paper's estimator, biased upward) under each mitigation",
              "The paper's decision asymmetry Δ abs (pp, mean |s_focal − s_control| over the four agentic harnesses) without "
              "mitigation and under each mitigation, with the identity-placebo floor and the excess over it. Δ abs is biased "
              "upward under sampling noise (an identity-blind model scores well above 0); read the excess, or Δ signed and "
              "the noise-corrected |Δ| (table_c3_asymmetry). Structural = the identity field hidden from the model, so its "
              "variants are identical by construction and its Δ is not a measured effect.")
    base = select(inp.metrics, DELTA_ABS, condition=["", "C3"])
    mit = select(inp.metrics, DELTA_ABS, condition=["", "C3"], mitigation=ANY)
    long = pd.concat([_bias(base, lambda r: "none", 1, 1), _bias(mit, "mitigation", 1, 1)])
    return _finish(t, long, ["model"], ["none", *MITIGATIONS], inp.models, "no Delta_abs rows (C3, harness pooled) in metrics.csv")


def table_gender_cells(inp: Inputs) -> Table:
    t = Table("table_gender_cells", "Religion × gender cells",
              "Where the identity cue carries gender (given names, attire descriptors: lexicon `gender`; gendered person nouns: `gendered_nouns`), violence rates (%) "
              "of the focal identity and the pooled controls and ΔV (pp) per gender, over the base prompts whose cue carries "
              "it, with 95% CIs, n (base prompts), the identity-placebo floor and the excess over it. Each cell's ΔV is a "
              "headline claim (metrics.intersectional), Holm-adjusted with the model's other claims (table_claims).")
    parts, keys = _by_condition(inp.metrics, RATES, gender=ANY)
    return _finish(t, pd.concat(parts), ["model", "gender"], keys, inp.models,
                   "no religion × gender cells in metrics.csv (metrics.intersectional is off)")


def table_claims(inp: Inputs) -> Table:
    t = Table("table_claims", "Headline claims and the error budget",
              "Every headline claim per model (mirage/metrics/claims.py): estimate, its excess over the identity-placebo floor, "
              "the p it is tested on (excess p; CAI: its excess over the controls' CoT amplification), the Holm-adjusted p over the model's tested claims, and "
              "the interval of the same test at the level Holm tested the claim (it excludes the null value exactly when "
              "the claim is significant). Untested: no test could run (see flag).")
    m = inp.metrics
    if "claim_level" not in m.columns or not (m["family"] == claims.FAMILY).any():
        t.missing = "no headline claims in metrics.csv (made by an older mirage metrics)"
        return t
    rows = []
    for r in m[m["family"] == claims.FAMILY].to_dict("records"):
        k, digits = METRICS[r["metric"]].scale, METRICS[r["metric"]].digits
        tested = not pd.isna(r["p_adj"])
        rows.append({"model": r["model"], "claim": claims.describe(r), "n": r["n"], "estimate": r["estimate"] * k,
                     "excess": r["excess"] * k, "interval low": r["claim_ci_low"] * k, "interval high": r["claim_ci_high"] * k,
                     "interval level": r["claim_level"], "p": r[claims.test_column(r["metric"])], "p Holm": r["p_adj"],
                     "decision": ("significant" if r["p_adj"] <= inp.alpha else "not significant") if tested
                     else f"untested ({r['why'] or 'no test'})", "digits": digits})
    data = _sort_models(pd.DataFrame(rows), inp.models)
    show = data.drop(columns="digits").copy().astype(object)
    for i, r in data.iterrows():
        d = int(r["digits"])
        for col in ("estimate", "excess", "interval low", "interval high"):
            show.at[i, col] = NOT_COMPUTED if pd.isna(r[col]) else _fmt(r[col], d)
        for col in ("p", "p Holm"):
            show.at[i, col] = NOT_COMPUTED if pd.isna(r[col]) else f"{r[col]:.2g}"
        show.at[i, "interval level"] = NOT_COMPUTED if pd.isna(r["interval level"]) else f"{100 * r['interval level']:.1f} %"
        show.at[i, "n"] = _number(r["n"])
    t.data, t.display = data.drop(columns="digits"), show
    return t


JUDGE_COLUMNS = ["rows", "texts", "precision", "recall", "specificity", "F1 [95% CI]"]
#: Why a judge figure has no value (its denominator is empty).
UNDEFINED = {"precision": "undefined (no text labelled violent)", "recall": "undefined (no violent text)",
             "specificity": "undefined (no non-violent text)", "f1": "undefined (no violent text, none labelled violent)"}


def _judge_f1(st: dict) -> str:
    """F1 with its interval, or without one where the bootstrap cannot give one (one row, all resamples agree)."""
    ci = st.get("f1_ci") or [None, None]
    rows = st.get("rows") if st.get("rows") is not None else st.get("n")
    why = ("n too small" if rows is not None and rows < 2 else
           "bootstrap degenerate" if None in ci or ci[0] == ci[1] else "")
    return cell(st["f1"], _nan(ci[0]), _nan(ci[1]), 2, why=why)


def table_judge(inp: Inputs) -> Table:
    t = Table("table_judge_quality", "Judge quality on the held-out realistic split",
              "How well the judge that labelled V finds violence in texts shaped like the pipeline's (the held-out split "
              "of the realistic gold set, `by_split.heldout` of judge_eval.json, written by `mirage judge eval`): "
              "precision, recall (sensitivity), specificity and F1 with its 95% bootstrap interval (resampling gold "
              "rows), overall, per language (Arabic pooled and per dialect) and per condition and shape; rows = gold "
              "texts, texts = rows filled with each identity. A judge that misses violence shrinks V and ΔV toward zero.")
    data, shown = [], []
    for j in inp.judges:
        if j.heldout is None:
            data.append({"judge": j.name, "stratum": "held-out realistic split"})
            shown.append({"judge": j.name, "stratum": "held-out realistic split", **dict.fromkeys(JUDGE_COLUMNS, NOT_MEASURED)})
            continue
        for stratum, st in quality.strata(j.heldout):
            ci = st.get("f1_ci") or [None, None]
            nums = {"rows": st.get("rows"), "texts": st.get("n"), "positives": st.get("positives"),
                    "precision": st.get("precision"), "recall": st.get("recall"), "specificity": st.get("specificity"),
                    "f1": st.get("f1"), "f1_ci_low": ci[0], "f1_ci_high": ci[1]}
            data.append({"judge": j.name, "stratum": stratum, **nums})
            shown.append({"judge": j.name, "stratum": stratum, "rows": _number(nums["rows"]), "texts": _number(nums["texts"]),
                          **{k: UNDEFINED[k] if nums[k] is None else f"{nums[k]:.2f}" for k in ("precision", "recall", "specificity")},
                          "F1 [95% CI]": UNDEFINED["f1"] if nums["f1"] is None else _judge_f1(st)})
    if not any(j.heldout for j in inp.judges):
        t.missing = (f"{NOT_MEASURED}: no held-out split in the judge evaluation ("
                     + "; ".join(j.path for j in inp.judges) + "); run `mirage judge eval` with "
                     f"--gold {artefacts.judge_realistic_heldout()}")
        return t
    t.data, t.display = pd.DataFrame(data), pd.DataFrame(shown)
    return t


def _nan(x: float | None) -> float:
    return float("nan") if x is None else x


def table_c3(inp: Inputs) -> Table:
    t = Table("table_c3_asymmetry", "Decision asymmetry per harness: signed, noise-corrected and the paper's Δ abs",
              "Per model and agentic harness (C3, no mitigation): Δ signed = s_focal − s_control (pp; negative = adverse to the "
              "focal identity; the headline estimator), the noise-corrected |Δ| (expectation 0 for an identity-blind model) "
              "and the paper's Δ abs (biased upward under sampling noise), each with 95% CI, n, placebo floor and excess.")
    parts = [_bias(select(inp.metrics, m, harness=EITHER, condition=["", "C3"]), lambda r, lab=lab: f"{r.harness or 'pooled'} {lab}", 1, 1)
             for m, lab in ((DELTA_SIGNED, "Δ signed"), (DELTA_ABS_UNBIASED, "|Δ| noise-corrected"),
                            (DELTA_ABS, "Δ abs (paper, biased upward)"))]
    keys = [f"{h} {lab}" for h in ("pooled", "H1", "H2", "H3", "H4")
            for lab in ("Δ signed", "|Δ| noise-corrected", "Δ abs (paper, biased upward)")]
    return _finish(t, pd.concat(parts), ["model"], keys, inp.models, "no Delta_signed rows (C3) in metrics.csv")


def table_missing(inp: Inputs) -> Table:
    t = Table("table_missing_data", "Missing data as a result: refusal and unparseable gaps, refusal bounds",
              "Per model and condition (no mitigation, no retrieval): refusal gap = refusal rate focal − control and (C3) "
              "unparseable gap, with placebo floor and excess; ΔV with every refusal counted as violent and with refused "
              "samples left out (the primary ΔV counts a refusal as non-violent), and Δ signed with C3 refusals scored as "
              "the adverse / favourable decision (the primary leaves them out). Bounds appear only where some sample was refused.")
    parts, keys = _by_condition(inp.metrics, (
        (REFUSAL_GAP, "refusal gap", 100, True), (UNPARSEABLE_GAP, "unparseable gap", 100, True),
        (DV_REFUSAL_VIOLENT, "ΔV refusal=violent", 100, True), (DV_REFUSAL_MISSING, "ΔV refusal=missing", 100, True),
        (DELTA_REFUSAL_ADVERSE, "Δ signed refusal=adverse", 1, True),
        (DELTA_REFUSAL_FAVOURABLE, "Δ signed refusal=favourable", 1, True)), template=["", "T5"])
    return _finish(t, pd.concat(parts), ["model"], keys, inp.models, "no refusal_gap rows in metrics.csv")


def table6(inp: Inputs) -> Table:
    t = Table("table6_cot_pathways", "Table 6: CoT amplification pathways",
              "Share (%) of amplifying C2 traces (focal variant, final answer labelled violent, no mitigation or retrieval) "
              "whose reasoning shows each pathway, with Wilson 95% CIs and n (traces); computed from the labels.")
    lab = inp.labels
    need = {"condition", "focal", "violent", "pathways"}
    if lab.empty or not need <= set(lab.columns):
        t.missing = "no C2 labels with pathways for this slice"
        return t
    amp = lab[(lab.condition == "C2") & lab.focal.astype(bool) & (lab.violent == 1)]
    for col in ("mitigation", "rag_pool"):
        if col in amp.columns:
            amp = amp[amp[col].fillna("none").isin(["none", ""])]
    rows = []
    nan = float("nan")
    for model, g in amp.groupby("model"):
        n = len(g)
        why = "n too small" if n < 2 else ""
        sets = g.pathways.apply(lambda p: set(p or []))
        for key, k in [(p, int(sets.apply(lambda s, p=p: p in s).sum())) for p in PATHWAYS] + [("none of these", int((sets.apply(len) == 0).sum()))]:
            lo, hi = proportion_confint(k, n, method="wilson")
            rows.append({"model": model, "metric": "share", "key": key, "estimate": k / n, "ci_low": lo, "ci_high": hi, "n": n, "why": why,
                         "p": nan, "scale": 100, "digits": 1, "show_p": False})
        rows.append({"model": model, "metric": "count", "key": "n traces", "estimate": n, "ci_low": nan, "ci_high": nan, "n": nan, "why": "",
                     "p": nan, "scale": 1, "digits": 0, "show_p": False})
    long = pd.DataFrame(rows)
    for col in PLACEBO_NUMERIC:
        long[col] = nan
    return _finish(t, long, ["model"], [*PATHWAYS, "none of these", "n traces"], inp.models,
                   "no amplifying C2 traces (focal, violent final answer) in the labels")


def table7(inp: Inputs) -> Table:
    t = Table("table7_probe_onsets", "Table 7: logit-lens onsets",
              "Per open model: layers L, the early-elevation layer and the final-suppression layer of λ(l) (onset rules: "
              "docs/probe.md), from `mirage probe`.")
    if inp.probe_onsets is None or inp.probe_onsets.empty:
        t.missing = "the logit-lens probe did not run for these models"
        return t
    t.data = _sort_models(inp.probe_onsets, inp.models)
    t.display = t.data.map(lambda v: NOT_COMPUTED if v is None or (isinstance(v, float) and pd.isna(v)) else _number(v))
    return t


def _pair(cond: str) -> str:
    found = PAIR.findall(cond)
    return "–".join(found) if len(found) == 2 else cond


def table9(inp: Inputs) -> Table:
    t = Table("table9_spearman_by_model", "Table 9: inter-condition correlations per model",
              "Spearman rank correlation of per-prompt bias scores between conditions, per model, with 95% CIs and n "
              "(base prompts); last column: share of high-Δ agentic items with low C1 violence.")
    rho = select(inp.metrics, SPEARMAN, condition=ANY)
    share = select(inp.metrics, HIGH_DELTA_LOW_C1, condition=EITHER)
    long = pd.concat([_long(rho, lambda r: _pair(r.condition), 1, 2), _long(share, lambda r: "high-Δ, low-C1 share (%)", 100, 1)])
    keys = ["C1–C2", "C1–C3", "C2–C3", "high-Δ, low-C1 share (%)"]
    return _finish(t, long, ["model"], keys, inp.models, "no spearman rows in metrics.csv")


def table8(inp: Inputs) -> Table:
    t = Table("table8_spearman_mean", "Table 8: inter-condition correlations, mean over models",
              "Mean over models of the per-model Spearman correlations in Table 9 (CIs are per model, see Table 9); "
              "models = how many models the mean is over.")
    rho = select(inp.metrics, SPEARMAN, condition=ANY)
    rho = rho[rho["estimate"].notna()]
    if rho.empty:
        t.missing = "no spearman rows with an estimate in metrics.csv"
        return t
    mean = rho.assign(pair=rho.condition.map(_pair)).groupby("pair").agg(rho=("estimate", "mean"), models=("model", "nunique")).reset_index()
    t.data = mean
    t.display = mean.assign(rho=mean.rho.map(lambda v: number(v, 2)))
    return t


def table10(inp: Inputs) -> Table:
    t = Table("table10_kappa_by_template", "Table 10: labeler agreement (Cohen's κ) per template",
              "Cohen's κ for the binary violent label per template on the human validation sample (metric kappa), with 95% CIs and n.")
    rows = select(inp.metrics, KAPPA, template=ANY, condition=OPTIONAL)
    return _finish(t, _long(rows, "template", 1, 2), ["model"], ["T1", "T2", "T3", "T4", "T5", "T6"], inp.models,
                   "no kappa rows in metrics.csv (no human-validated labels in this run)")


def table11(inp: Inputs) -> Table:
    t = Table("table11_rates_by_template", "Table 11: violence rate per template",
              "Focal violent-completion rate (%) per template and condition, with 95% CIs and n (C3 uses T5 only).")
    rows = select(inp.metrics, V_FOCAL, template=ANY, condition=ANY)
    return _finish(t, _long(rows, "condition", 100, 1), ["model", "template"], CONDITIONS, inp.models,
                   "no per-template V_focal rows in metrics.csv")


def table12(inp: Inputs) -> Table:
    t = Table("table12_rates_by_dialect", "Table 12: violence rate per language variant",
              "Focal violent-completion rate (%) on the parallel subset by language variant, and the cross-lingual gap "
              "(pp, variant − English) with its identity-placebo floor and excess, with 95% CIs and n.")
    v = select(inp.metrics, V_FOCAL, language=ANY, condition=OPTIONAL)
    gap = select(inp.metrics, XLING_GAP, language=ANY, condition=OPTIONAL)
    long = pd.concat([_long(v, "language", 100, 1), _bias(gap, lambda r: f"gap {r.language}", 100, 1)])
    keys = [*LANGUAGES, *(f"gap {lang}" for lang in LANGUAGES[1:])]
    return _finish(t, long, ["model"], keys, inp.models, "no per-language V_focal rows in metrics.csv")


def table_models(inp: Inputs) -> Table:
    t = Table("table13_14_models", "Tables 13–14: model checkpoints and API identifiers",
              "What produced the samples of this run, read from the generations: provider, model id, pinned revision, "
              "samples and the UTC window in which they were generated.")
    gen = inp.generations
    if gen.empty or not {"model", "provider", "model_id", "revision"} <= set(gen.columns):
        t.missing = "no generations for this slice"
        return t
    created = gen["created"] if "created" in gen.columns else pd.Series(None, index=gen.index)
    g = gen.assign(created=created).groupby(["model", "provider", "model_id", "revision"], dropna=False)
    data = g.agg(samples=("key", "count"), first=("created", "min"), last=("created", "max")).reset_index()
    t.data = _sort_models(data, inp.models)
    t.display = t.data.map(lambda v: NOT_COMPUTED if v is None or (isinstance(v, float) and pd.isna(v)) else _number(v))
    return t


def table_sampling(inp: Inputs) -> Table:
    t = Table("table13_14_sampling", "Tables 13–14: sampling settings per model",
              "How each model of the slice samples, from params: temperature, top_p, samples per request and max_tokens "
              "per condition (slice overrides applied), the seed policy, the server kind of OpenAI-compatible servers and "
              "the extra sampling fields sent in every request body (server_kind's neutral values included; part of the "
              "store key).")
    if inp.sampling is None or inp.sampling.empty:
        t.missing = "no models in this slice"
        return t
    t.data = inp.sampling
    t.display = t.data.map(lambda v: v if isinstance(v, str) else _number(v))
    return t


def table_quality(inp: Inputs) -> Table:
    t = Table("table_quality_rates", "Response quality: refusal, error and unparseable rates",
              "Share (%) of samples refused, failed, or (C3) whose decision could not be parsed, per condition, with n.")
    parts, keys = _by_condition(inp.metrics, ((REFUSAL_RATE, "refusal", 100, False), (ERROR_RATE, "error", 100, False),
                                              (UNPARSEABLE_RATE, "unparseable", 100, False)))
    return _finish(t, pd.concat(parts), ["model"], keys, inp.models, "no refusal/error/unparseable rows in metrics.csv")


def _num(v: object) -> float:
    return pd.to_numeric(pd.Series([v]), errors="coerce").iloc[0]


def table_correction(inp: Inputs) -> Table:
    t = Table("table_judge_correction", "Judge-error correction: raw and corrected violence rates",
              "V focal, V control and ΔV (%, pp) as measured, beside the same corrected for the judge's errors "
              "(V* = (V + Sp − 1) / (Se + Sp − 1), ΔV* = ΔV / (Se + Sp − 1); the CI also redraws the validation items), "
              "with the sensitivity Se and specificity Sp used, their n (true positives / true negatives they are "
              "measured on) and source. No interval where Se + Sp − 1 < 0.5 (the correction would more than double "
              "the noise). V* is clipped to [0, 100] % (marked 'clipped at 0' or 'clipped at 100'); ΔV* corrects "
              "the raw difference, not the clipped rates, so where a V* is clipped ΔV* is not the difference of the V* "
              "shown: it is the focal-control gap the judge's error rates imply. Baseline stratum, all templates. "
              "Judge figures used: "
              + ("; ".join(f"{m}: {n}" for m, n in sorted((inp.correction_notes or {}).items())) or "not recorded"))
    df = inp.metrics
    if "correction_source" not in df.columns or not df["metric"].isin([V_CORRECTED, DV_CORRECTED]).any():
        notes = inp.correction_notes or {}
        t.missing = ("; ".join(f"{m}: {n}" for m, n in sorted(notes.items())) or
                     "metrics.csv has no judge-error-corrected rows (run `mirage metrics` with the judge's judge_eval.json "
                     "holding a held-out split, or with a human validation sample from `mirage validate import`)")
        return t
    focal = set(df.loc[df["metric"] == V_FOCAL, "identity"])
    pairs = ((V_FOCAL, V_CORRECTED, "V focal", focal), (V_CONTROL, V_CORRECTED, "V control", {"control"}),
             (DV, DV_CORRECTED, "ΔV", {"control"}))
    data, shown = [], []
    for raw_name, corr_name, label, idents in pairs:
        raw = select(df, raw_name, condition=ANY, language=EITHER, identity=list(idents))
        corr = select(df, corr_name, condition=ANY, language=EITHER, identity=list(idents))
        keys = ["model", "condition", "language", "identity"]
        for _, r in raw.merge(corr, on=keys, suffixes=("", "_c")).iterrows():
            se, sp = _num(r["se_c"]), _num(r["sp_c"])
            j = se + sp - 1
            why_c = (f"unstable: Se + Sp − 1 = {j:.2f} < 0.5" if r["flag_c"] == "unstable_correction" else r["why_c"])
            data.append({"model": r["model"], "condition": r["condition"], "language": r["language"], "metric": label,
                         "raw": 100 * r["estimate"], "raw ci_low": 100 * r["ci_low"], "raw ci_high": 100 * r["ci_high"],
                         "corrected": 100 * r["estimate_c"], "corrected ci_low": 100 * r["ci_low_c"],
                         "corrected ci_high": 100 * r["ci_high_c"], "n": r["n"], "Se": se, "Se n": _num(r["se_n_c"]),
                         "Sp": sp, "Sp n": _num(r["sp_n_c"]), "source": r["correction_source_c"]})
            clipped = (f" (clipped at {int(100 * r['estimate_c'])})" if corr_name == V_CORRECTED
                       and r["estimate_c"] in (0.0, 1.0) else "")
            shown.append({"model": r["model"], "condition": r["condition"], "language": r["language"], "metric": label,
                          "raw": cell(100 * r["estimate"], 100 * r["ci_low"], 100 * r["ci_high"], 1, r["n"], r["why"]),
                          "corrected": cell(100 * r["estimate_c"], 100 * r["ci_low_c"], 100 * r["ci_high_c"], 1,
                                            r["n"], why_c) + clipped,
                          "Se (n)": f"{se:.2f} ({int(_num(r['se_n_c']))})", "Sp (n)": f"{sp:.2f} ({int(_num(r['sp_n_c']))})",
                          "source": r["correction_source_c"]})
    if not data:
        t.missing = "no baseline V / ΔV rows with a corrected counterpart in metrics.csv"
        return t
    rank = {m: i for i, m in enumerate(inp.models)}
    order = pd.DataFrame(data)[["model", "condition", "language"]].assign(model=lambda f: f["model"].map(rank))
    index = order.sort_values(["model", "condition", "language"], kind="stable").index
    t.data = pd.DataFrame(data).loc[index].reset_index(drop=True)
    t.display = pd.DataFrame(shown).loc[index].reset_index(drop=True)
    return t


def _seconds(created: pd.Series) -> float:
    """Wall time of one generation job: last minus first `created` timestamp (1 s resolution)."""
    ts = pd.to_datetime(created.dropna(), utc=True, errors="coerce").dropna()
    return float("nan") if ts.empty else (ts.max() - ts.min()).total_seconds()


def table15(inp: Inputs) -> Table:
    t = Table("table15_compute", "Table 15: compute and cost, estimated vs measured",
              "Estimated (mirage estimate) requests, samples, tokens, GPU-hours, API cost, local and API wall time per "
              "model and condition, with the throughput (tok/s) the times use and its source (measured by a calibration, "
              "assumed from the registry, or none), next to what this run measured from its generations, counted as `mirage generate` plans them: "
              "request rows, requests, samples, calls (an M4 sample takes two) and scored rows (request rows x samples), tokens, errors and wall time = last minus first `created` timestamp of the "
              "samples of that model x condition (one generate job; 1 s resolution; a lower bound: model loading and the "
              "first batch, which ends at the first timestamp, are not included because jobs record no start time).")
    est = pd.DataFrame(inp.estimate["rows"]) if inp.estimate else pd.DataFrame()
    gen = inp.generations
    if est.empty and gen.empty:
        t.missing = "no estimate file and no generations for this slice"
        return t
    frames = []
    if not est.empty:
        frames.append(est.set_index(["model", "condition"]).add_prefix("est. "))
    if not gen.empty:
        g = gen.assign(failed=gen["error"].notna() if "error" in gen.columns else False,
                       created=gen["created"] if "created" in gen.columns else None)
        counts = generation_counts(gen).set_index(["model", "condition"])
        frames.append(counts.add_prefix("run ").join(g.groupby(["model", "condition"]).agg(**{
            "run tokens_in": ("tokens_in", "sum"), "run tokens_out": ("tokens_out", "sum"),
            "run wall time_s": ("created", _seconds), "run errors": ("failed", "sum")})))
    data = _sort_models(pd.concat(frames, axis=1).reset_index(), inp.models)
    first = ["model", "condition"] + [f"est. {c}" for c in ESTIMATE_COLUMNS]
    t.data = data[[c for c in first if c in data.columns] + [c for c in data.columns if c not in first]]
    t.display = t.data.map(_number)
    est_cols = [c for c in t.data.columns if c.startswith("est. ")]
    has_est = t.data[est_cols].notna().any(axis=1) if est_cols else pd.Series(False, index=t.data.index)
    for c in est_cols:  # the estimate leaves a number null where it does not apply (GPU-hours of an API model)
        t.display.loc[has_est & t.data[c].isna(), c] = "not applicable"
    return t


def _number(v: object) -> object:
    """Counts with thousands separators, other floats to 2 decimals, missing as 'not computed'."""
    if v is None or (isinstance(v, float) and pd.isna(v)):
        return NOT_COMPUTED
    if isinstance(v, (int, float)) and not isinstance(v, bool):
        return f"{int(v):,}" if float(v).is_integer() else f"{v:,.2f}"
    return v


BUILDERS: list[Callable[[Inputs], Table]] = [table_claims, table1, table_corpus, table3, table_judge, table_c3, table4, table_missing, table6, table7, table8, table9, table10, table11, table12,
                                              table_models, table_sampling, table15, table_quality, table_correction,
                                              table_gender_cells]
#: Tables of optional analyses: on the page only when their rows exist.
OPTIONAL_TABLES = frozenset({"table_gender_cells"})


def write(t: Table, out_dir: Path) -> None:
    """CSV (numbers), Markdown and LaTeX (formatted cells); a table not computed leaves no stale files."""
    paths = {ext: out_dir / f"{t.stem}.{ext}" for ext in ("csv", "md", "tex")}
    if t.data is None:
        for p in paths.values():
            p.unlink(missing_ok=True)
        return
    with atomic_write(paths["csv"]) as fh:
        t.data.to_csv(fh, index=False, float_format="%.6g")
    with atomic_write(paths["md"]) as fh:
        fh.write(f"**{t.title}.** {t.caption}\n\n{t.display.replace(NEWLINE, '<br>', regex=True).to_markdown(index=False)}\n")
    with atomic_write(paths["tex"]) as fh:
        fh.write(t.display.replace(NEWLINE, "; ", regex=True).to_latex(index=False, escape=True, caption=f"{t.title}. {t.caption}".translate(TEX_SPECIAL).replace("|", "$|$"), label=f"tab:{t.stem}"))


def build_all(inp: Inputs, out_dir: Path) -> list[Table]:
    """Build and write every table; return those the page shows (an optional analysis only when it ran)."""
    tables = [build(inp) for build in BUILDERS]
    for t in tables:
        write(t, out_dir)
    return [t for t in tables if t.data is not None or t.stem not in OPTIONAL_TABLES]
