"""Read the report's inputs (docs/artefacts.md) into pandas, tolerating parts that a run did not make."""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pandas as pd

from mirage.io import DataError, located_jsonl, read_jsonl
from mirage.metric_names import (
    CAI,
    DELTA_ABS,
    DELTA_ABS_UNBIASED,
    DELTA_REFUSAL_ADVERSE,
    DELTA_REFUSAL_FAVOURABLE,
    DELTA_SIGNED,
    DELTA_T,
    DELTA_T_DID,
    DV,
    DV_COT,
    DV_REFUSAL_MISSING,
    DV_REFUSAL_VIOLENT,
    MIT_DELTA,
    MIT_DELTA_SIGNED,
    MIT_V,
    REASONING,
    REFUSAL_GAP,
    UNPARSEABLE_GAP,
    V_FOCAL,
    XLING_GAP,
)
from mirage.names import JURY_PREFIX

STRATA: tuple[str, ...] = ("condition", "template", "harness", "language", "rag_pool", "mitigation", "identity", "gender")
NUMERIC: tuple[str, ...] = ("estimate", "ci_low", "ci_high", "p", "p_adj", "n")
# `gender` (religion x gender cells, metrics.intersectional) is read as "" where an older metrics.csv lacks it.
METRICS_COLUMNS: tuple[str, ...] = ("model", "metric", *STRATA[:-1], *NUMERIC, "family")
# Placebo floor and interval metadata (docs/metrics.md); older metrics.csv files lack them -> "not computed".
PLACEBO_NUMERIC: tuple[str, ...] = ("placebo", "excess", "excess_ci_low", "excess_ci_high", "excess_p")
PLACEBO_TEXT: tuple[str, ...] = ("placebo_kind", "ci_method", "resampling", "flag")
# The headline claim interval (docs/metrics.md, "Error budget"); older metrics.csv files lack it.
CLAIM_NUMERIC: tuple[str, ...] = ("claim_ci_low", "claim_ci_high", "claim_level")
FLAG_TEXT = {"n_too_small": "n too small", "degenerate_bootstrap": "bootstrap degenerate",
             "identical_by_construction": "identical by construction",
             "zero_denominator": "V C1 = 0, the ratio is undefined",
             "unbounded_ci": "V C1 not distinguishable from 0, no finite interval"}
# Bias metrics whose placebo floor is shown; the signed ones get a floor band of ±|placebo|, the others [0, placebo].
BIAS_METRICS: tuple[str, ...] = (DV, DV + REASONING, DELTA_SIGNED, DELTA_ABS, DELTA_T, XLING_GAP, CAI, MIT_V, MIT_DELTA,
                                  DELTA_ABS_UNBIASED, REFUSAL_GAP, UNPARSEABLE_GAP, DV_REFUSAL_VIOLENT, DV_REFUSAL_MISSING,
                                  DELTA_REFUSAL_ADVERSE, DELTA_REFUSAL_FAVOURABLE)
SIGNED = frozenset({DV, DV + REASONING, DELTA_SIGNED, DELTA_T, DELTA_T_DID, DV_COT, XLING_GAP, MIT_V, MIT_DELTA,
                    MIT_DELTA_SIGNED, REFUSAL_GAP, UNPARSEABLE_GAP, DV_REFUSAL_VIOLENT, DV_REFUSAL_MISSING,
                    DELTA_REFUSAL_ADVERSE, DELTA_REFUSAL_FAVOURABLE})
# Stratum values that mean "the unmitigated, non-retrieval, English, pooled" baseline when a column is not
# selected on (mirage metrics writes none/none/en, identity = the focal identity or pooled `control`, T5 for Δ).
BASELINE: dict[str, frozenset[str]] = {"rag_pool": frozenset({"", "none"}), "mitigation": frozenset({"", "none"}),
                                       "language": frozenset({"", "en"}), "identity": frozenset({"", "control"}),
                                       "template": frozenset({"", "T5"})}
# Generation-view fields the report reads (tables 13-15, counts, drill-down, sample browser); the rest (`answer`
# repeats `text`) is not kept in memory.
GENERATION_FIELDS: tuple[str, ...] = ("key", "model", "condition", "request_id", "text", "reasoning", "first_turn", "created",
                                      "tokens_in", "tokens_out", "error", "provider", "model_id", "revision", "template", "harness",
                                      "identity", "focal", "language", "rag_pool", "mitigation", "base_id", "sample_index",
                                      "row_id")
# Fields of GENERATION_FIELDS held as their place in the views (Texts) instead: a slice's texts are GBs.
TEXT_FIELDS: tuple[str, ...] = ("text", "reasoning")
# Where a generation's texts lie and how long they are: view file (index into Texts.paths), byte offset of its line,
# characters of text + reasoning.
TEXT_PLACE: tuple[str, ...] = ("text_file", "text_at", "text_chars")
GENERATION_REQUIRED: tuple[str, ...] = ("key", "model", "condition", "text")
SHARED_CHARS = 64  # strings up to this long are one object per distinct value (strata, ids, timestamps)
#: The run's counts, in the vocabulary every stage prints (mirage.generate.runner.VOCABULARY), plus the rows scored.
COUNT_COLUMNS: tuple[str, ...] = ("request rows", "requests", "samples", "calls", "scored rows")
ANY = object()  # select(): the column must be set to a non-baseline value
EITHER = object()  # select(): no constraint on the column


def number(v: float, digits: int = 1, sign: bool = False) -> str:
    """`v` to `digits` decimals (with + for positives when `sign`), never `-0.0`: a value that rounds to zero prints
    as an unsigned zero."""
    text = f"{v:+.{digits}f}" if sign else f"{v:.{digits}f}"
    return text.lstrip("+-") if float(text) == 0 else text


def generation_counts(gens: pd.DataFrame) -> pd.DataFrame:
    """Per model x condition, counted as `mirage generate` plans them (the console's lines add up to these): request
    rows, requests (distinct inputs), samples (n per request), calls (an M4 sample takes two), and scored rows
    (request rows x samples: what is labelled and scored, so a request shared by rows is scored once per row)."""
    if gens.empty:
        return pd.DataFrame(columns=["model", "condition", *COUNT_COLUMNS])
    g = gens.assign(request=gens["request_id"] if "request_id" in gens.columns else gens["key"],
                    row=gens["row_id"] if "row_id" in gens.columns else gens["key"],
                    index=gens["sample_index"] if "sample_index" in gens.columns else 0,
                    two=gens["first_turn"].notna() if "first_turn" in gens.columns else False)
    out = []
    for (model, cond), sub in g.groupby(["model", "condition"], sort=False):
        samples = sub.drop_duplicates(["request", "index"])
        out.append({"model": model, "condition": cond, "request rows": sub["row"].nunique(),
                    "requests": sub["request"].nunique(), "samples": len(samples),
                    "calls": len(samples) + int(samples["two"].sum()), "scored rows": len(sub)})
    return pd.DataFrame(out)


def load_metrics(path: Path) -> pd.DataFrame:
    """metrics.csv with empty strata as "" and numeric columns as floats; bad cells raise DataError (file:line)."""
    try:
        df = pd.read_csv(path, dtype=str, keep_default_na=False)
    except (pd.errors.ParserError, UnicodeDecodeError) as exc:
        raise DataError(f"{path}: not a valid CSV ({exc})") from None
    missing = [c for c in METRICS_COLUMNS if c not in df.columns]
    if missing:
        raise DataError(f"{path}:1: missing column(s) {', '.join(missing)}")
    for col in NUMERIC:
        raw = df[col].str.strip()
        num = pd.to_numeric(raw.replace({"": None, "nan": None, "NaN": None}), errors="coerce")
        bad = num.isna() & raw.ne("") & ~raw.str.lower().eq("nan")
        if bad.any():
            i = int(bad.idxmax())
            raise DataError(f"{path}:{i + 2}: field {col}: not a number ({df.at[i, col]!r})")
        df[col] = num.astype(float)
    df.attrs["placebo_computed"] = "placebo" in df.columns
    if "gender" not in df.columns:
        df["gender"] = ""
    for col in (*PLACEBO_NUMERIC, *CLAIM_NUMERIC):
        df[col] = pd.to_numeric(df[col], errors="coerce").astype(float) if col in df.columns else float("nan")
    for col in PLACEBO_TEXT:
        df[col] = df[col].fillna("").astype(str) if col in df.columns else ""
    df["why"] = [degenerate_reason(n, lo, hi, flag, est)
                 for n, lo, hi, flag, est in zip(df["n"], df["ci_low"], df["ci_high"], df["flag"], df["estimate"])]
    return df


def degenerate_reason(n: float, lo: float, hi: float, flag: str, est: float = float("nan")) -> str:
    """Why a row's interval and p-value must not be shown ("" when they can): the metrics flag, n < 2, a bootstrap
    whose interval collapsed to a point, or one that ends at the estimate itself (a handful of units: Spearman's ρ of 5
    models gives [−1.00, −0.25] around −0.25)."""
    if flag:
        return FLAG_TEXT.get(flag, flag.replace("_", " "))
    if not pd.isna(n) and n < 2:
        return "n too small"
    if not (pd.isna(lo) or pd.isna(hi)) and lo == hi:
        return "bootstrap degenerate"
    if not (pd.isna(lo) or pd.isna(hi) or pd.isna(est)) and (abs(est - lo) < 1e-12 or abs(est - hi) < 1e-12):
        return "interval ends at the estimate"
    return ""


def select(df: pd.DataFrame, metric: str, **fixed: Any) -> pd.DataFrame:
    """Rows of `metric` whose strata match `fixed` (a value, a list of values, or ANY); every other stratum
    must be empty (or the baseline: `none` for rag_pool / mitigation, `en`, the focal identity or the pooled
    controls). Paraphrase-placebo rows are left out."""
    rows = df[(df["metric"] == metric) & df.get("placebo_kind", pd.Series("", index=df.index)).ne("paraphrase")]
    focal = frozenset(df.loc[df["metric"] == V_FOCAL, "identity"])
    for col in STRATA:
        want = fixed.get(col)
        if want is EITHER:
            continue
        if want is ANY:
            rows = rows[rows[col].ne("") & rows[col].ne("none")]
        elif col in fixed:
            rows = rows[rows[col].isin(want if isinstance(want, (list, tuple, set)) else [want])]
        else:
            rows = rows[rows[col].isin(BASELINE.get(col, frozenset({""})) | (focal if col == "identity" else frozenset()))]
    return rows.sort_values("template", key=lambda t: t.ne(""), kind="stable")  # pooled rows first when both exist


@dataclass
class Provenance:
    """What produced the run: shown in captions and on the page."""

    slice: str
    code_version: str = "not recorded"
    params_hash: str = "not recorded"  # the whole params the report was built with (set by `mirage report`)
    metrics_params_hash: str = "not recorded"  # the label and metrics sections, as `mirage metrics` recorded them
    run_date: str = "not recorded"
    revisions: dict[str, str] = field(default_factory=dict)
    deviations: list[str] = field(default_factory=list)
    model_set: str = "the slice's own models"  # or the named set run (params `model_set`)

    def caption(self, models: list[str]) -> str:
        """Short form for figure captions; the provenance table on the page shows full revisions."""
        revs = ", ".join(f"{m} @ {_short(self.revisions.get(m, 'revision not recorded'))}" for m in models) or "no models"
        return f"Slice {self.slice}; {revs}; run {self.run_date}; code {self.code_version}."


def _short(revision: str) -> str:
    """`sha256:<64 hex>` -> `sha256:<first 12>…`; other revisions (snapshots, commits) unchanged."""
    return revision[:19] + "…" if revision.startswith("sha256:") and len(revision) > 19 else revision


def _deviation_lines(raw: Any) -> list[str]:
    if isinstance(raw, dict):
        return [f"{k}: {v}" for k, v in sorted(raw.items())]
    if isinstance(raw, list):
        return [d if isinstance(d, str) else json.dumps(d, sort_keys=True) for d in raw]
    return [str(raw)] if raw else []


def load_provenance(summary_path: Path, slice_name: str, slice_overrides: dict[str, Any]) -> Provenance:
    """Provenance from summary.json (`provenance` object or top level), plus this slice's declared deviations in params."""
    prov = Provenance(slice_name)
    summary: dict[str, Any] = {}
    if summary_path.exists():
        try:
            summary = json.loads(summary_path.read_text(encoding="utf-8"))
        except json.JSONDecodeError as exc:
            raise DataError(f"{summary_path}:{exc.lineno}: not valid JSON ({exc.msg})") from None
        if not isinstance(summary, dict):
            raise DataError(f"{summary_path}:1: expected a JSON object")
        info = summary.get("provenance") if isinstance(summary.get("provenance"), dict) else summary
        prov.code_version = str(info.get("code_version") or prov.code_version)
        prov.metrics_params_hash = str(info.get("params_hash") or prov.metrics_params_hash)
        revs = info.get("model_revisions") or info.get("revisions") or {}
        if not isinstance(revs, dict):
            raise DataError(f"{summary_path}: field model_revisions: expected an object model -> revision")
        prov.revisions = {str(k): ", ".join(map(str, v)) if isinstance(v, list) else str(v) for k, v in revs.items()}
        # Only dates recorded in the data: a rebuild from pulled files must give identical figures.
        prov.run_date = str(info.get("run_date") or prov.run_date)
        prov.deviations = _deviation_lines(info.get("protocol_deviations") or info.get("deviations"))
    declared = [f"params slices.{slice_name}.{k} = {json.dumps(v, sort_keys=True)}" for k, v in slice_overrides.items() if v is not None]
    if not prov.deviations:  # the summary already lists them when metrics ran with these params
        prov.deviations = declared
    return prov


def load_correction_notes(summary_path: Path) -> dict[str, str]:
    """summary.json `judge_correction`: model -> which judge figures corrected V and dV, or why none did."""
    if not summary_path.exists():
        return {}
    try:
        block = json.loads(summary_path.read_text(encoding="utf-8")).get("judge_correction") or {}
    except (json.JSONDecodeError, AttributeError):
        return {}
    return {str(m): str(v.get("note", "")) for m, v in block.items() if isinstance(v, dict)} if isinstance(block, dict) else {}


def _frame(rows: Iterable[dict], keep: tuple[str, ...] | None) -> pd.DataFrame:
    """The frame pandas makes from `rows` as records (a field a row lacks is NaN), built column by column so that no
    list of row dicts is ever held, with equal short strings sharing one object."""
    cols: dict[str, list] = {}
    shared: dict[str, str] = {}
    nan = float("nan")
    n = 0
    for row in rows:
        filled = 0
        for k in keep if keep is not None else row:
            if k not in row:
                continue
            v = row[k]
            if type(v) is str and len(v) <= SHARED_CHARS:
                v = shared.setdefault(v, v)
            col = cols.get(k)
            if col is None:
                col = cols[k] = [nan] * n
            col.append(v)
            filled += 1
        n += 1
        if filled < len(cols):
            for col in cols.values():
                if len(col) < n:
                    col.append(nan)
    return pd.DataFrame(cols)


def judged_more_than_once(labels: pd.DataFrame) -> list[str]:
    """The models whose completions more than one judge labelled: several `judge` values among their label rows, or
    a jury whose rows keep each member's own labels (`votes`)."""
    if labels.empty or "judge" not in labels:
        return []
    out = []
    for model, rows in labels.groupby("model", sort=False):
        judges = set(rows["judge"].dropna().astype(str))
        jury = any(j.startswith(JURY_PREFIX) for j in judges) and "votes" in rows and bool(rows["votes"].notna().any())
        if len(judges) > 1 or jury:
            out.append(str(model))
    return out


def load_jsonl_frame(paths: list[Path], required: tuple[str, ...], keep: tuple[str, ...] | None = None) -> pd.DataFrame:
    """Concatenate JSONL files (rows validated for `required` fields) into one frame; empty if none exist. With
    `keep`, only those fields are kept."""
    return _frame((row for p in paths if p.exists() for row in read_jsonl(p, required=required)), keep)


@dataclass
class Texts:
    """Where the generations' texts lie: TEXT_PLACE columns index `paths` and give byte offsets; `read` fetches the
    few a page shows at a time, so a slice's texts are never in memory together."""

    paths: list[Path] = field(default_factory=list)

    def read(self, place: pd.DataFrame) -> Iterator[tuple[str | None, str | None]]:
        """(text, reasoning) for each row of `place` (columns key and TEXT_PLACE); (None, None) where it has none."""
        handles: dict[int, Any] = {}
        try:
            for key, file, at in zip(place["key"], place["text_file"], place["text_at"]):
                if pd.isna(file):
                    yield None, None
                    continue
                path = self.paths[int(file)]
                fh = handles.get(int(file)) or handles.setdefault(int(file), path.open("rb"))
                fh.seek(int(at))
                try:
                    row = json.loads(fh.readline())
                except ValueError:  # not JSON or not UTF-8 any more
                    row = None
                if not isinstance(row, dict) or row.get("key") != key:
                    raise DataError(f"{path}: changed while the report was built (byte {int(at)} no longer holds sample {key})")
                yield row.get("text"), row.get("reasoning")
        finally:
            for fh in handles.values():
                fh.close()


def load_generations(paths: list[Path]) -> tuple[pd.DataFrame, Texts]:
    """The views' GENERATION_FIELDS, with text and reasoning replaced by their place (TEXT_PLACE; read back with the
    returned Texts); empty if no view exists."""
    texts = Texts([p for p in paths if p.exists()])

    def rows() -> Iterator[dict]:
        for i, path in enumerate(texts.paths):
            for _, at, row in located_jsonl(path, required=GENERATION_REQUIRED):
                row["text_chars"] = sum(len(v) for v in (row.get(f) for f in TEXT_FIELDS) if isinstance(v, str))
                row["text_file"], row["text_at"] = i, at
                yield row

    keep = (*(f for f in GENERATION_FIELDS if f not in TEXT_FIELDS), *TEXT_PLACE)
    return _frame(rows(), keep), texts


def load_estimate(path: Path) -> dict[str, Any] | None:
    """`mirage estimate` output, or None when the run made none."""
    if not path.exists():
        return None
    try:
        est = json.loads(path.read_text(encoding="utf-8"))
    except json.JSONDecodeError as exc:
        raise DataError(f"{path}:{exc.lineno}: not valid JSON ({exc.msg})") from None
    if not isinstance(est, dict) or not isinstance(est.get("rows"), list):
        raise DataError(f"{path}: field rows: expected a list of per-model x condition rows")
    return est


def load_probe(paths: list[Path]) -> dict[str, pd.DataFrame]:
    """Logit-lens curves keyed by model (the folder holding each `lambda.csv`); missing files are skipped."""
    out = {}
    for path in paths:
        m = path.parent.name
        if path.exists():
            df = pd.read_csv(path)
            missing = [c for c in ("layer", "mean_lambda", "ci_low", "ci_high") if c not in df.columns]
            if missing:
                raise DataError(f"{path}:1: missing column(s) {', '.join(missing)}")
            out[m] = df
    return out


def load_csv(path: Path) -> pd.DataFrame | None:
    """An optional CSV input (None when the run made none)."""
    if not path.exists():
        return None
    try:
        return pd.read_csv(path)
    except (pd.errors.ParserError, UnicodeDecodeError, pd.errors.EmptyDataError) as exc:
        raise DataError(f"{path}: not a valid CSV ({exc})") from None


def load_probe_onsets(paths: list[Path]) -> pd.DataFrame:
    """Table 7 rows (`table7.csv` of `mirage probe`) from the given files that exist."""
    frames = [pd.read_csv(path) for path in paths if path.exists()]
    return pd.concat(frames, ignore_index=True) if frames else pd.DataFrame()
