"""Tables 3, 4, 6, 8-12 and 15 of the paper (plus response-quality rates), each as numbers (CSV) and
formatted "estimate [95% CI]" cells (Markdown, LaTeX, HTML)."""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import pandas as pd
from statsmodels.stats.proportion import proportion_confint

from mirage.io import atomic_write
from mirage.report.data import ANY, EITHER, select
from mirage.report.figures import CONDITIONS, LANGUAGES, MITIGATIONS, OPTIONAL, ordered

PATHWAYS = ["group_statistic", "reasoner_stand_in", "coherence_pressure"]
PAIR = re.compile(r"C\d")
ESTIMATE_COLUMNS = ["requests", "samples", "tokens_in", "tokens_out", "gpu_hours", "api_cost_usd", "local_time_s"]
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


def cell(est: float, lo: float, hi: float, digits: int) -> str:
    """'12.3 [10.1, 14.5]'; the CI is left out when not computed, '–' when there is no estimate."""
    if pd.isna(est):
        return "–"
    if pd.isna(lo) or pd.isna(hi):
        return f"{est:.{digits}f}"
    return f"{est:.{digits}f} [{lo:.{digits}f}, {hi:.{digits}f}]"


def wide(long: pd.DataFrame, index: list[str], key_order: list[str]) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Pivot long rows (index..., key, estimate, ci_low, ci_high, scale, digits) to (numeric, display) frames."""
    long = long.assign(estimate=long.estimate * long.scale, ci_low=long.ci_low * long.scale, ci_high=long.ci_high * long.scale)
    long = long.drop_duplicates([*index, "key"])
    keys = [k for k in key_order if k in set(long.key)]
    num = long.pivot(index=index, columns="key", values=["estimate", "ci_low", "ci_high"])
    data = pd.DataFrame(index=num.index)
    shown = pd.DataFrame(index=num.index)
    digits = long.groupby("key")["digits"].first()
    for k in keys:
        data[k], data[f"{k} ci_low"], data[f"{k} ci_high"] = num["estimate"][k], num["ci_low"][k], num["ci_high"][k]
        shown[k] = [cell(e, lo, hi, int(digits[k])) for e, lo, hi in zip(num["estimate"][k], num["ci_low"][k], num["ci_high"][k])]
    return data.reset_index(), shown.reset_index()


def _long(rows: pd.DataFrame, key: Callable[[pd.Series], str] | str, scale: float, digits: int) -> pd.DataFrame:
    keys = rows.apply(key, axis=1) if callable(key) else rows[key]
    return rows.assign(key=keys.astype(str), scale=scale, digits=digits)


def _sort_models(frame: pd.DataFrame, models: list[str]) -> pd.DataFrame:
    order = {m: i for i, m in enumerate(models)}
    return frame.sort_values("model", key=lambda s: s.map(lambda m: order.get(m, len(order)))).reset_index(drop=True)


def _finish(t: Table, long: pd.DataFrame, index: list[str], keys: list[str], models: list[str], why: str) -> Table:
    if long.empty:
        t.missing = why
        return t
    data, shown = wide(long, index, keys)
    t.data, t.display = _sort_models(data, models), _sort_models(shown, models)
    return t


def table3(inp: Inputs) -> Table:
    t = Table("table3_rates_by_condition", "Table 3: violence rate by condition",
              "Violent-completion rate (%) per model and condition: focal, pooled controls and ΔV = focal − control, "
              "with 95% CIs; CAI = V(C2)/V(C1) on the matched subset.")
    parts = [_long(select(inp.metrics, m, condition=ANY), lambda r, lab=lab: f"{r.condition} {lab}", 100, 1)
             for m, lab in (("V_focal", "V focal"), ("V_control", "V control"), ("dV", "ΔV"))]
    parts.append(_long(select(inp.metrics, "CAI", condition=EITHER), lambda r: "CAI", 1, 2))
    keys = [f"{c} {lab}" for c in CONDITIONS for lab in ("V focal", "V control", "ΔV")] + ["CAI"]
    return _finish(t, pd.concat(parts), ["model"], keys, inp.models, "no V_focal / V_control / dV / CAI rows in metrics.csv")


def table4(inp: Inputs) -> Table:
    t = Table("table4_delta_by_mitigation", "Table 4: decision asymmetry under each mitigation",
              "Decision asymmetry Δ (pp, mean |s_focal − s_control| over the four agentic harnesses) without mitigation "
              "and under each mitigation; structural = the identity field hidden from the model.")
    base = select(inp.metrics, "Delta_abs", condition=["", "C3"])
    mit = select(inp.metrics, "Delta_abs", condition=["", "C3"], mitigation=ANY)
    long = pd.concat([_long(base, lambda r: "none", 1, 1), _long(mit, "mitigation", 1, 1)])
    keys = ["none", *ordered(mit["mitigation"].unique(), MITIGATIONS)]
    return _finish(t, long, ["model"], keys, inp.models, "no Delta_abs rows (C3, harness pooled) in metrics.csv")


def table6(inp: Inputs) -> Table:
    t = Table("table6_cot_pathways", "Table 6: CoT amplification pathways",
              "Share (%) of amplifying C2 traces (focal variant, final answer labelled violent, no mitigation or retrieval) "
              "whose reasoning shows each pathway, with Wilson 95% CIs; computed from the labels.")
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
    for model, g in amp.groupby("model"):
        n = len(g)
        sets = g.pathways.apply(lambda p: set(p or []))
        for key, k in [(p, int(sets.apply(lambda s, p=p: p in s).sum())) for p in PATHWAYS] + [("none of these", int((sets.apply(len) == 0).sum()))]:
            lo, hi = proportion_confint(k, n, method="wilson")
            rows.append({"model": model, "key": key, "estimate": k / n, "ci_low": lo, "ci_high": hi, "scale": 100, "digits": 1})
        rows.append({"model": model, "key": "n traces", "estimate": n, "ci_low": float("nan"), "ci_high": float("nan"), "scale": 1, "digits": 0})
    return _finish(t, pd.DataFrame(rows), ["model"], [*PATHWAYS, "none of these", "n traces"], inp.models,
                   "no amplifying C2 traces (focal, violent final answer) in the labels")


def _pair(cond: str) -> str:
    found = PAIR.findall(cond)
    return "–".join(found) if len(found) == 2 else cond


def table9(inp: Inputs) -> Table:
    t = Table("table9_spearman_by_model", "Table 9: inter-condition correlations per model",
              "Spearman rank correlation of per-prompt bias scores between conditions, per model, with 95% CIs; "
              "last column: share of high-Δ agentic items with low C1 violence.")
    rho = select(inp.metrics, "spearman", condition=ANY)
    share = select(inp.metrics, "high_delta_low_c1_share", condition=EITHER)
    long = pd.concat([_long(rho, lambda r: _pair(r.condition), 1, 2), _long(share, lambda r: "high-Δ, low-C1 share (%)", 100, 1)])
    keys = sorted({_pair(c) for c in rho.condition}) + ["high-Δ, low-C1 share (%)"]
    return _finish(t, long, ["model"], keys, inp.models, "no spearman rows in metrics.csv")


def table8(inp: Inputs) -> Table:
    t = Table("table8_spearman_mean", "Table 8: inter-condition correlations, mean over models",
              "Mean over models of the per-model Spearman correlations in Table 9 (CIs are per model, see Table 9).")
    rho = select(inp.metrics, "spearman", condition=ANY)
    if rho.empty:
        t.missing = "no spearman rows in metrics.csv"
        return t
    mean = rho.assign(pair=rho.condition.map(_pair)).groupby("pair").agg(rho=("estimate", "mean"), models=("model", "nunique")).reset_index()
    t.data = mean
    t.display = mean.assign(rho=mean.rho.map(lambda v: cell(v, float("nan"), float("nan"), 2)))
    return t


def table10(inp: Inputs) -> Table:
    t = Table("table10_kappa_by_template", "Table 10: labeler agreement (Cohen's κ) per template",
              "Cohen's κ for the binary violent label per template on the validation sample (metric kappa), with 95% CIs.")
    rows = select(inp.metrics, "kappa", template=ANY, condition=OPTIONAL)
    return _finish(t, _long(rows, "template", 1, 2), ["model"], sorted(set(rows.template)), inp.models,
                   "no kappa rows in metrics.csv (no human-validated labels in this run)")


def table11(inp: Inputs) -> Table:
    t = Table("table11_rates_by_template", "Table 11: violence rate per template",
              "Focal violent-completion rate (%) per template and condition, with 95% CIs (C3 uses T5 only).")
    rows = select(inp.metrics, "V_focal", template=ANY, condition=ANY)
    return _finish(t, _long(rows, "condition", 100, 1), ["model", "template"], CONDITIONS, inp.models,
                   "no per-template V_focal rows in metrics.csv")


def table12(inp: Inputs) -> Table:
    t = Table("table12_rates_by_dialect", "Table 12: violence rate per language variant",
              "Focal violent-completion rate (%) on the parallel subset by language variant, and the cross-lingual gap "
              "(pp, variant − English), with 95% CIs.")
    v = select(inp.metrics, "V_focal", language=ANY, condition=OPTIONAL)
    gap = select(inp.metrics, "xling_gap", language=ANY, condition=OPTIONAL)
    long = pd.concat([_long(v, "language", 100, 1), _long(gap, lambda r: f"gap {r.language}", 100, 1)])
    keys = [*LANGUAGES, *(f"gap {lang}" for lang in LANGUAGES[1:])]
    keys += sorted(set(long.key) - set(keys)) if not long.empty else []
    return _finish(t, long, ["model"], keys, inp.models, "no per-language V_focal rows in metrics.csv")


def table_quality(inp: Inputs) -> Table:
    t = Table("table_quality_rates", "Response quality: refusal, error and unparseable rates",
              "Share (%) of samples refused, failed, or (C3) whose decision could not be parsed, per condition.")
    parts = [_long(select(inp.metrics, m, condition=ANY), lambda r, lab=lab: f"{r.condition} {lab}", 100, 1)
             for m, lab in (("refusal_rate", "refusal"), ("error_rate", "error"), ("unparseable_rate", "unparseable"))]
    keys = [f"{c} {lab}" for c in CONDITIONS for lab in ("refusal", "error", "unparseable")]
    return _finish(t, pd.concat(parts), ["model"], keys, inp.models, "no refusal/error/unparseable rows in metrics.csv")


def table15(inp: Inputs) -> Table:
    t = Table("table15_compute", "Table 15: compute and cost, estimated vs measured",
              "Estimated (mirage estimate) requests, samples, tokens, GPU-hours, API cost and local time per model and "
              "condition, next to what this run measured from its generations (Σ latency sums per-call wall times).")
    est = pd.DataFrame(inp.estimate["rows"]) if inp.estimate else pd.DataFrame()
    gen = inp.generations
    if est.empty and gen.empty:
        t.missing = "no estimate file and no generations for this slice"
        return t
    frames = []
    if not est.empty:
        frames.append(est.set_index(["model", "condition"]).add_prefix("est. "))
    if not gen.empty:
        g = gen.assign(failed=gen.get("error", pd.Series(index=gen.index, dtype=object)).notna())
        frames.append(g.groupby(["model", "condition"]).agg(**{
            "run samples": ("key", "count"), "run tokens_in": ("tokens_in", "sum"), "run tokens_out": ("tokens_out", "sum"),
            "run Σ latency_s": ("latency_s", "sum"), "run errors": ("failed", "sum")}))
    data = _sort_models(pd.concat(frames, axis=1).reset_index(), inp.models)
    first = ["model", "condition"] + [f"est. {c}" for c in ESTIMATE_COLUMNS]
    t.data = data[[c for c in first if c in data.columns] + [c for c in data.columns if c not in first]]
    t.display = t.data.map(_number)
    return t


def _number(v: object) -> object:
    """Counts with thousands separators, other floats to 2 decimals, missing as '–'."""
    if v is None or (isinstance(v, float) and pd.isna(v)):
        return "–"
    if isinstance(v, (int, float)) and not isinstance(v, bool):
        return f"{int(v):,}" if float(v).is_integer() else f"{v:,.2f}"
    return v


BUILDERS: list[Callable[[Inputs], Table]] = [table3, table4, table6, table8, table9, table10, table11, table12, table15, table_quality]


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
        fh.write(f"**{t.title}.** {t.caption}\n\n{t.display.to_markdown(index=False)}\n")
    with atomic_write(paths["tex"]) as fh:
        fh.write(t.display.to_latex(index=False, escape=True, caption=f"{t.title}. {t.caption}".translate(TEX_SPECIAL).replace("|", "$|$"), label=f"tab:{t.stem}"))


def build_all(inp: Inputs, out_dir: Path) -> list[Table]:
    tables = [build(inp) for build in BUILDERS]
    for t in tables:
        write(t, out_dir)
    return tables
