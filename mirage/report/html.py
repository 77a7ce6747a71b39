"""The self-contained HTML page: figures inlined as PNG data URIs, tables, provenance, and per-cell
drill-down to matched focal/control completions (collapsed <details>, escaped by Jinja2)."""

from __future__ import annotations

import base64
import re
from dataclasses import dataclass, field
from pathlib import Path

import pandas as pd
from jinja2 import Environment, PackageLoader, select_autoescape
from markupsafe import Markup

from mirage.hashing import rank_key
from mirage.io import atomic_write
from mirage.metric_names import (
    CAI,
    DELTA_ABS_UNBIASED,
    DELTA_REFUSAL_ADVERSE,
    DELTA_REFUSAL_FAVOURABLE,
    DELTA_SIGNED,
    DV,
    DV_REFUSAL_MISSING,
    DV_REFUSAL_VIOLENT,
    METRICS,
    MIT_DELTA_SIGNED,
)
from mirage.metrics import claims
from mirage.protocol import CONDITIONS
from mirage.report.data import COUNT_COLUMNS, TEXT_FIELDS, TEXT_PLACE, Provenance, Texts, generation_counts, number
from mirage.report.figures import SPECS, Rendered, floor_band
from mirage.report.protocol import Deviation, JudgeInfo
from mirage.report.tables import NOT_COMPUTED as CELL_NOT_COMPUTED
from mirage.report.tables import Table

NOT_COMPUTED = "Not computed in this run"
DEGENERATE = re.compile(r"^[-+\d.,]+ \([a-z ]+[,)]")  # '12.5 (n too small, n=2)': no interval shown
LONG_TABLE_ROWS = 25  # tables with more rows scroll inside a box of about that height


@dataclass
class Side:
    identity: str
    text: str
    reasoning: str | None
    labels: list[tuple[str, str]]


@dataclass
class Cell:
    """Drill-down for one model x condition: example matched pairs, most informative (discordant) first."""

    anchor: str
    model: str
    condition: str
    pairs: list[tuple[str, Side, Side]] = field(default_factory=list)
    missing: str = ""


def anchor(model: str, condition: str) -> str:
    return "drill-" + re.sub(r"[^A-Za-z0-9_-]+", "-", f"{model}-{condition}")


def _clip(text: object, limit: int) -> str:
    text = text if isinstance(text, str) else ""
    return text if len(text) <= limit else text[:limit] + f" … [cut; {len(text) - limit} more characters]"


def _label_list(row: pd.Series) -> list[tuple[str, str]]:
    out = []
    for col, name in (("violent", "violent"), ("violent_reasoning", "violent (reasoning)"), ("decision", "decision"),
                      ("score", "score s"), ("refusal", "refused"), ("error", "error")):
        v = row.get(col)
        if v is None or (isinstance(v, float) and pd.isna(v)) or (col in ("refusal", "error") and not v):
            continue
        if isinstance(v, float) and col != "score":
            v = int(v)
        out.append((name, "yes" if v is True else number(v, 2) if isinstance(v, float) else str(v)))
    if row.get("pathways"):
        out.append(("pathways", ", ".join(row["pathways"])))
    return out


def _pairs(sub: pd.DataFrame) -> pd.DataFrame:
    """One candidate pair per (base prompt, language, sample index) having both: the first focal row and the control
    whose rank_key(base, identity) is smallest; columns focal and control hold their row labels in `sub`."""
    keys = ["base_id", "language", "sample_index"]
    sub = sub.dropna(subset=keys)
    is_focal = sub["focal"].astype(bool)
    focal = sub.loc[is_focal, keys].drop_duplicates(keys).assign(focal=lambda f: f.index)
    ctrl = sub.loc[~is_focal, [*keys, "identity"]]
    ranks = {bi: rank_key(*bi) for bi in set(zip(ctrl["base_id"], ctrl["identity"]))}
    ctrl = ctrl.assign(control=ctrl.index, rank=[ranks[bi] for bi in zip(ctrl["base_id"], ctrl["identity"])])
    ctrl = ctrl.sort_values("rank", kind="stable").drop_duplicates(keys)  # smallest rank; ties: first row
    return focal.merge(ctrl[[*keys, "control"]], on=keys)


def drilldown(labels: pd.DataFrame, gens: pd.DataFrame, texts: Texts, models: list[str], per_cell: int, max_chars: int) -> list[Cell]:
    """Matched pairs (same base prompt, language and sample index; no mitigation or retrieval) per model x condition;
    only the texts shown are read (`texts`)."""
    cells = []
    if labels.empty or gens.empty or "key" not in labels.columns:
        rows = pd.DataFrame()
    else:
        rows = labels.drop(columns=[c for c in TEXT_FIELDS if c in labels.columns]).merge(gens[["key", *TEXT_PLACE]].drop_duplicates("key"), on="key", how="inner")
        for col in ("mitigation", "rag_pool"):
            rows = rows[rows[col].fillna("none").isin(["none", ""])] if col in rows.columns else rows
    groups = dict(list(rows.groupby(["model", "condition"]))) if not rows.empty else {}
    for model in models:
        for cond in CONDITIONS:
            cell = Cell(anchor(model, cond), model, cond)
            cells.append(cell)
            sub = groups.get((model, cond), pd.DataFrame())
            if per_cell == 0 or sub.empty:
                cell.missing = NOT_COMPUTED + ": no labelled generations for this cell" if per_cell else "drill-down disabled (report.examples_per_cell = 0)"
                continue
            pairs, found = _pairs(sub), []
            labels_of = {col: (sub[col].loc[pairs["focal"]].tolist(), sub[col].loc[pairs["control"]].tolist()) if col in sub.columns
                         else ([None] * len(pairs), [None] * len(pairs)) for col in ("violent", "decision")}
            for j, (base, lang, s, fi, ci) in enumerate(pairs.itertuples(index=False)):
                discordant = any(labels_of[col][0][j] != labels_of[col][1][j] for col in ("violent", "decision"))
                found.append((not discordant, rank_key(base, lang, s), f"{base} · {lang} · sample {s}", fi, ci))
            for _, _, title, fi, ci in sorted(found, key=lambda t: t[:2])[:per_cell]:
                shown = sub.loc[[fi, ci]]
                cell.pairs.append((title, *(Side(r["identity"], _clip(text, max_chars), _clip(reasoning, max_chars) or None, _label_list(r))
                                            for (_, r), (text, reasoning) in zip(shown.iterrows(), texts.read(shown)))))
            if not cell.pairs:
                cell.missing = NOT_COMPUTED + ": no base prompt has both a focal and a control completion here"
    return cells


def table_view(t: Table, files: list[str]) -> dict:
    """Template data for one table; Table 3 cells link to their model x condition drill-down."""
    view = {"id": t.stem, "title": t.title, "caption": t.caption, "missing": t.missing, "files": files, "columns": [], "rows": []}
    if t.display is None:
        return view
    view["columns"] = list(t.display.columns)
    for _, r in t.display.iterrows():
        row = []
        for col in view["columns"]:
            cond = col.split(" ")[0]
            href = f"#{anchor(r['model'], cond)}" if t.stem.startswith("table3") and cond in CONDITIONS and "model" in r else None
            text = str(r[col])
            kind = "nc" if text == CELL_NOT_COMPUTED else "degen" if DEGENERATE.search(text) else ""
            row.append((text, href, kind))
        view["rows"].append(row)
    return view


def _num(v: float, digits: int = 1) -> str:
    return number(v, digits)


def _pp(v: float, k: float, sign: bool = True) -> str:
    return number(v * k, 1, sign)


def _beside(df: pd.DataFrame, r: pd.Series, metric: str) -> pd.Series | None:
    """The row of `metric` in the same model and strata as claim row r (Δ_abs_unbiased beside Δ signed, refusal bounds)."""
    same = df[(df["metric"] == metric) & (df.get("placebo_kind", "") != "paraphrase")]
    for col in ("model", "condition", "template", "harness", "rag_pool", "mitigation", "language", "identity"):
        same = same[same[col] == r[col]]
    return None if same.empty else same.iloc[0]


def _context(df: pd.DataFrame, r: pd.Series) -> str:
    """What the report states beside a claim: Δ_abs_unbiased next to Δ signed, and the refusal bounds of ΔV and Δ."""
    bits = []
    if r["metric"] == DELTA_SIGNED:
        ub = _beside(df, r, DELTA_ABS_UNBIASED)
        if ub is not None and not pd.isna(ub["estimate"]):
            ci = "" if pd.isna(ub["ci_low"]) else f" [{_num(ub['ci_low'])}, {_num(ub['ci_high'])}]"
            bits.append(f"noise-corrected |Δ| {_num(ub['estimate'])} pp{ci} (either direction)")
    bounds = {DV: ((DV_REFUSAL_VIOLENT, "refusals as violent"), (DV_REFUSAL_MISSING, "refusals as missing")),
              DELTA_SIGNED: ((DELTA_REFUSAL_ADVERSE, "refusals as the adverse decision"),
                             (DELTA_REFUSAL_FAVOURABLE, "refusals as the favourable decision"))}.get(r["metric"], ())
    for metric, what in bounds:
        b = _beside(df, r, metric)
        if b is not None and not pd.isna(b["estimate"]):
            k = METRICS[metric].scale
            ci = "" if pd.isna(b["ci_low"]) else f" [{_pp(b['ci_low'], k, False)}, {_pp(b['ci_high'], k, False)}]"
            bits.append(f"with {what} {_pp(b['estimate'], k)} pp{ci}")
    return f" ({'; '.join(bits)})" if bits else ""


HEADLINE_COLUMNS = ("claim", "estimate", "interval", "identity-placebo floor", "excess over the floor", "verdict")


@dataclass
class Headline:
    """One model's headline: its error budget, one table row per tested claim (HEADLINE_COLUMNS), and the claims that
    could not be tested collapsed into one line (reasons, the n each has and what a test needs)."""

    model: str
    budget: str = ""
    rows: list[tuple[str, ...]] = field(default_factory=list)
    untested: str = ""
    note: str = ""


def _untested_line(rows: list[tuple[str, str, float]], slice_name: str) -> str:
    """'12 claims could not be tested ... n too small (too few units for an interval or a test): ΔV, C3 (n = 1), ...'."""
    needs = {"n too small": "too few units for an interval or a test", "bootstrap degenerate": "every unit had the same "
             "outcome, so no interval exists; a test needs units whose outcomes differ, i.e. more base prompts"}
    by_reason: dict[str, list[str]] = {}
    for what, why, n in rows:
        by_reason.setdefault(why, []).append(f"{what} ({'n not recorded' if pd.isna(n) else f'n = {int(n):,}'})")
    parts = [f"{why} ({needs[why]}): " if why in needs else f"{why}: " for why in by_reason]
    parts = [p + ", ".join(claims_) for p, claims_ in zip(parts, by_reason.values())]
    many = len(rows) != 1
    return (f"{len(rows)} claim{'s' if many else ''} could not be tested and make{'' if many else 's'} no claim — " + "; ".join(parts)
            + f". `mirage estimate --slice {slice_name} --power` gives the base prompts a target effect needs.")


def headline(df: pd.DataFrame, models: list[str], alpha: float = 0.05, slice_name: str = "SLICE") -> list[Headline]:
    """Per model, a table of its tested headline claims (mirage/metrics/claims.py): estimate, the interval of the claim's
    own test at the level Holm tested it (so it excludes 0, for CAI 1, exactly when the claim is made), identity-placebo
    floor, excess over it and the verdict of the model's one Holm correction; untestable claims in one line with their
    reasons. A metrics.csv without claims (an older run) gets a note saying so."""
    if not (df["family"] == claims.FAMILY).any():
        return [Headline(m, note="this metrics.csv has no headline claims (made by an older mirage metrics, or without "
                         "placebo floors): no gap is shown to exceed noise; rerun `mirage metrics`") for m in models]
    out = []
    for m in models:
        rows = df[(df["model"] == m) & (df["family"] == claims.FAMILY)]
        tested = rows[rows["p_adj"].notna() & rows["estimate"].notna()]
        h = Headline(m)
        if rows.empty:
            h.note = "no headline claim of this model in metrics.csv"
            out.append(h)
            continue
        h.budget = (f"Holm at α = {alpha:g} over the {len(tested)} tested headline claims of this model; "
                    f"{int((tested['p_adj'] <= alpha).sum())} significant.")
        untested = []
        for _, r in rows.iterrows():
            what, k = claims.describe(r), METRICS[r["metric"]].scale
            n = "n not recorded" if pd.isna(r["n"]) else f"n = {int(r['n']):,}"
            if pd.isna(r["estimate"]) or pd.isna(r["p_adj"]):
                untested.append((what, r["why"] or "no test", r["n"]))
                continue
            cai = r["metric"] == CAI
            digits = 2 if cai else 1
            est = number(r["estimate"], 2) if cai else f"{_pp(r['estimate'], k)} pp"
            ival = (f"[{_num(r['claim_ci_low'] * k, digits)}, {_num(r['claim_ci_high'] * k, digits)}] "
                    f"({number(100 * r['claim_level'])} %)" if not pd.isna(r["claim_ci_low"])
                    else f"unbounded: {r['why'] or 'no finite interval'}")
            verdict = (f"{'significant' if r['p_adj'] <= alpha else 'not significant'} (p = {r[claims.test_column(r['metric'])]:.2g}, "
                       f"Holm-adjusted {r['p_adj']:.2g}; {n})")
            if cai:  # CAI's floor: the controls' CoT amplification; the claim is tested on the excess over it
                floor, excess = f"{number(r['placebo'], 2)} (the controls' CoT amplification)", number(r["excess"], 2)
            elif abs(r["placebo"] * k) < 0.05:  # pooled signed contrasts: the floor is 0 by symmetry, the test is the floor
                floor, excess = "0 by symmetry", f"{_pp(r['excess'], k)} pp"
            else:
                a, b = floor_band(r["metric"], r["placebo"] * k)
                floor, excess = f"{_num(a)} to {_num(b)} pp", f"{_pp(r['excess'], k)} pp"
            sign = {DELTA_SIGNED: " (negative = adverse to the focal identity)",
                    MIT_DELTA_SIGNED: " (positive = the focal's disadvantage shrinks)"}.get(r["metric"], "")
            h.rows.append((what + sign + _context(df, r), est, ival, floor, excess, verdict))
        if untested:
            h.untested = _untested_line(untested, slice_name)
        out.append(h)
    return out


def counts(gens: pd.DataFrame, models: list[str]) -> list[tuple[str, dict[str, int]]]:
    """Per model: request rows, requests, samples, calls and scored rows (data.generation_counts, summed over
    conditions: the same numbers as Table 15, the console's plan lines and the closing summary)."""
    per = generation_counts(gens)
    out = []
    for m in models:
        sub = per[per["model"] == m]
        if not sub.empty:
            out.append((m, {c: int(sub[c].sum()) for c in COUNT_COLUMNS}))
    return out


def render(prov: Provenance, models: list[str], figures: dict[str, Rendered], fig_files: dict[str, list[str]],
           tables: list[Table], table_files: dict[str, list[str]], cells: list[Cell], params_text: str, fig_dir: str, tab_dir: str,
           *, headlines: list[Headline] = (), judges: list[JudgeInfo] = (), deviations: list[Deviation] = (),
           counts: list[tuple[str, dict[str, int]]] = (), samples_href: str | None = None, placebo_computed: bool = False,
           comparisons: list[str] = (), judge_banner: str | None = None) -> str:
    env = Environment(loader=PackageLoader("mirage.report", "templates"), autoescape=select_autoescape(["html", "j2"]),
                      trim_blocks=True, lstrip_blocks=True)
    figs = []
    for s in SPECS:
        r = figures.get(s.stem) or Rendered(None, "not built")
        figs.append({"id": s.stem, "title": s.title, "description": s.description, "files": fig_files.get(s.stem, []),
                     "src": "data:image/png;base64," + base64.b64encode(r.png).decode() if r.png else None,
                     "missing": r.note if r.png is None else "", "note": r.note if r.png else "", "coverage": r.coverage,
                     "caption": prov.caption(models)})
    return env.get_template("report.html.j2").render(
        prov=prov, models=models, figures=figs, tables=[table_view(t, table_files.get(t.stem, [])) for t in tables],
        cells=cells, not_computed=NOT_COMPUTED, params_text=params_text, fig_dir=fig_dir, tab_dir=tab_dir,
        headlines=headlines, judges=judges, deviations=deviations, counts=counts, count_columns=COUNT_COLUMNS,
        headline_columns=HEADLINE_COLUMNS, samples_href=samples_href, placebo_computed=placebo_computed,
        long_table_rows=LONG_TABLE_ROWS,
        comparisons=[Markup(c) for c in comparisons],  # sections written (and escaped) by mirage.compare
        judge_banner=judge_banner)


def write(path: Path, html: str) -> None:
    with atomic_write(path) as fh:
        fh.write(html)
