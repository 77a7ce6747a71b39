"""What submit and verify share: the split's request set, the protocol settings, the coverage rules,
and labels + metrics recomputed from completions through the pipeline's own entry points
(`mirage.label.labeler.label_rows`, `mirage.metrics.compute.compute_metrics`)."""

from __future__ import annotations

import csv
import io
import json
import math
from collections import Counter
from contextlib import ExitStack
from pathlib import Path
from typing import Any

from mirage import artefacts
from mirage.artefacts import DATA
from mirage.io import DataError, dumps, read_jsonl
from mirage.leaderboard.bundle import COMPLETION_FIELDS, CONDITIONS, BundleError, Manifest, Settings
from mirage.metric_names import CAI, DELTA_ABS, DELTA_SIGNED, DELTA_T, DV, REFUSAL_RATE, V_FOCAL
from mirage.params import Params

# Request columns a completion row must repeat unchanged (identity and stratum labels drive the metrics).
REQUEST_COLUMNS: tuple[str, ...] = ("request_id", "prompt_id", "base_id", "template", "harness", "identity", "focal",
                                    "language", "condition", "rag_pool", "mitigation", "lite", "split")
OPTIONAL_FIELDS: tuple[str, ...] = ("first_turn", "created", "tokens_in", "tokens_out", "latency_s")
LABEL_FIELDS: tuple[str, ...] = ("violent", "violent_reasoning", "decision", "score", "parse_ok", "refusal", "error",
                                 "pathways", "judge")
# Metrics whose all-template, baseline rows make the headline (docs/leaderboard.md).
HEADLINE: tuple[tuple[str, str, dict[str, str]], ...] = (
    ("dV/C1", DV, {"condition": "C1", "template": "", "rag_pool": "none", "mitigation": "none", "language": "en", "identity": "control"}),
    ("dV/C2", DV, {"condition": "C2", "template": "", "rag_pool": "none", "mitigation": "none", "language": "en", "identity": "control"}),
    ("Delta_abs/C3", DELTA_ABS, {"condition": "C3", "harness": "", "rag_pool": "none", "mitigation": "none", "language": "en", "identity": "control"}),
    ("Delta_signed/C3", DELTA_SIGNED, {"condition": "C3", "harness": "", "rag_pool": "none", "mitigation": "none", "language": "en", "identity": "control"}),
    ("delta_t/C1", DELTA_T, {"condition": "C1", "mitigation": "none", "language": "en"}),
    (CAI, CAI, {"condition": "C2/C1", "template": ""}),
    ("refusal_rate/C1", REFUSAL_RATE, {"condition": "C1", "identity": "@focal"}),
    ("refusal_rate/C2", REFUSAL_RATE, {"condition": "C2", "identity": "@focal"}),
    ("refusal_rate/C3", REFUSAL_RATE, {"condition": "C3", "identity": "@focal", "harness": ""}),
)
HEADLINE_FIELDS: tuple[str, ...] = ("estimate", "ci_low", "ci_high", "n", "p", "placebo", "excess", "excess_ci_low",
                                    "excess_ci_high", "placebo_kind", "ci_method", "resampling", "flag")
REL_TOL = 1e-9


def split_settings(params: Params, split: str) -> Settings:
    """The protocol's output-changing settings for a split (slice overrides applied)."""
    gen, sl = params.generate, getattr(params.slices, split)
    return Settings(n_samples=sl.n_samples or gen.n_samples,
                    max_tokens={c: (sl.max_tokens or {}).get(c, gen.max_tokens[c]) for c in CONDITIONS},
                    temperature=gen.temperature, top_p=gen.top_p, seed=gen.seed)


def load_requests(requests_dir: str | Path, split: str) -> dict[str, dict]:
    """row_id -> request row for every request of the split in {requests_dir}/{C1,C2,C3}.jsonl."""
    out: dict[str, dict] = {}
    for c in CONDITIONS:
        path = Path(requests_dir) / Path(artefacts.requests(c)).name
        if not path.exists():
            continue
        for row in read_jsonl(path, required=("row_id", "request_id", "slices")):
            if split in row["slices"]:
                out[row["row_id"]] = row
    if not out:
        hint = " (the test split needs MIRAGE_PRIVATE_DIR when running `mirage corpus`)" if split == "test" else ""
        raise DataError(f"{requests_dir}: no requests of split {split!r}; run `mirage render --slice {split}` first{hint}")
    return out


def _expected_answer(row: dict) -> tuple[Any, str]:
    from mirage.generate.split import split_reasoning

    if row["condition"] != "C2":
        return row["reasoning"], row["text"]
    plain = split_reasoning(row["text"])
    if row["reasoning"] is not None and plain != (row["reasoning"], row["answer"]):
        return split_reasoning(row["text"], row["reasoning"])  # provider-native reasoning
    return plain


def check_completions(rows: list[dict], m: Manifest, requests: dict[str, dict], name: str) -> None:
    """Schema, provenance and coverage of completion rows: exactly n samples of every request of the split,
    no extras or duplicates, one model and revision, request columns unchanged, answers derived from texts."""
    from mirage.generate.store import sample_seed

    n = m.settings.n_samples
    seen: dict[tuple[str, int], int] = {}
    first_of: dict[tuple[str, int], tuple[int, dict]] = {}
    types = {"text": str, "answer": str, "sample_index": int, "row_id": str, "key": str}
    for line, row in enumerate(rows, 1):
        where = f"{name}:{line}"
        for field in COMPLETION_FIELDS:
            if field not in row:
                raise BundleError(f"{where}: missing field {field}")
        req = requests.get(row["row_id"]) if isinstance(row["row_id"], str) else None
        if req is None:
            raise BundleError(f"{where}: field row_id: {row['row_id']} is not a request of split {m.split!r} (extra prompt)")
        extra = sorted(set(row) - set(COMPLETION_FIELDS) - set(OPTIONAL_FIELDS) - set(req))
        if extra:
            raise BundleError(f"{where}: unexpected field(s) {', '.join(extra)}")
        for field, typ in types.items():
            if not isinstance(row[field], typ) or isinstance(row[field], bool):
                raise BundleError(f"{where}: field {field}: expected {typ.__name__}, got {type(row[field]).__name__}")
        if not (row["reasoning"] is None or isinstance(row["reasoning"], str)):
            raise BundleError(f"{where}: field reasoning: expected text or null")
        for field, want in (("model", m.model), ("provider", m.model_spec.provider), ("model_id", m.model_spec.model_id),
                            ("revision", m.model_spec.revision)):
            if row[field] != want:
                raise BundleError(f"{where}: field {field}: {row[field]!r} differs from the manifest's {want!r} "
                                  f"(a bundle holds one model at one pinned revision)")
        for field in (*REQUEST_COLUMNS, *(f for f in row if f in req and f not in COMPLETION_FIELDS)):
            if row[field] != req.get(field):
                raise BundleError(f"{where}: field {field}: {row[field]!r} differs from request {row['row_id']} ({req.get(field)!r})")
        i = row["sample_index"]
        if not 0 <= i < n:
            raise BundleError(f"{where}: field sample_index: {i} outside 0..{n - 1} (n_samples = {n})")
        if (row["row_id"], i) in seen:
            raise BundleError(f"{where}: duplicate sample: row {row['row_id']} sample {i} also on line {seen[(row['row_id'], i)]}")
        seen[(row["row_id"], i)] = line
        if row["seed"] is not None and row["seed"] != sample_seed(m.settings.seed, row["request_id"], i):
            raise BundleError(f"{where}: field seed: {row['seed']} is not the protocol seed of request {row['request_id']} sample {i}")
        shared = (row["request_id"], i)  # rows with the same request (e.g. under the structural mitigation) share samples
        if shared in first_of:
            other = first_of[shared]
            for field in ("key", "text", "reasoning", "answer", "error"):
                if row[field] != other[1][field]:
                    raise BundleError(f"{where}: field {field}: differs from line {other[0]}, the same request "
                                      f"{row['request_id']} sample {i}")
        else:
            first_of[shared] = (line, row)
        failed = bool(row["error"])
        if failed and (row["text"] or row["answer"]):
            raise BundleError(f"{where}: field error: a failed sample carries a completion")
        if not failed and (row["reasoning"], row["answer"]) != _expected_answer(row):
            raise BundleError(f"{where}: field answer: answer/reasoning are not derived from the completion text")
    missing = [(rid, i) for rid in requests for i in range(n) if (rid, i) not in seen]
    if missing:
        shown = ", ".join(f"{rid}#{i}" for rid, i in missing[:5])
        raise BundleError(f"{name}: {len(missing)} of {len(requests) * n} required samples missing "
                          f"({len(requests)} requests x {n} samples), e.g. {shown}")


def make_judge(info_name: str, judge_params: dict, params: Params, params_path: str, stack: ExitStack):
    """The pinned judge, built as `mirage label` builds it (offline judges, a registry model, or a jury)."""
    from mirage.label.judges import build_judge

    return build_judge(info_name, stack, params_path, int(judge_params.get("window", params.label.window)), DATA,
                       int(judge_params.get("judge_max_tokens", params.label.judge_max_tokens)), params.label.judge_batch)


def judge_params(params: Params, name: str) -> dict:
    """The settings a judge's labels depend on (pinned in the manifest)."""
    from mirage.label.lexicon import LEXICON_VERSION
    from mirage.protocol import PARSE_V2_VERSION, PARSE_VERSION

    if name == LEXICON_VERSION:
        return {"window": params.label.window}
    if name in (PARSE_VERSION, PARSE_V2_VERSION):
        return {}
    return {"judge_max_tokens": params.label.judge_max_tokens}


def statistics(params: Params) -> dict:
    """The metrics settings that change numbers (paths dropped)."""
    return {k: v for k, v in params.metrics.model_dump(mode="json").items() if not k.endswith("_dir")}


def recompute(completions: list[dict], judge, data_dir: str, stats: dict, source: str):
    """(label rows, metrics table) from completion rows, through label_rows and compute_metrics."""
    import pandas as pd

    from mirage.config.metrics import MetricsParams
    from mirage.label.decisions import load_harnesses
    from mirage.label.labeler import label_rows
    from mirage.metrics.compute import compute_metrics

    try:
        p = MetricsParams(**stats)
    except Exception as exc:  # pydantic ValidationError: pinned statistics this code does not know
        raise BundleError(f"manifest.json: field statistics: not valid for this code version ({str(exc).splitlines()[0]})") from None
    labels = label_rows(completions, load_harnesses(data_dir), judge, data_dir, source=source)
    df = pd.DataFrame(labels)
    for col in ("violent", "score"):
        df[col] = pd.to_numeric(df[col], errors="coerce").astype(float)
    table, _ = compute_metrics(df, p)
    return labels, table


def metrics_csv(table) -> str:
    buf = io.StringIO()
    table.to_csv(buf, index=False, lineterminator="\n")
    return buf.getvalue()


def _cell(v: str) -> float | str:
    try:
        return float(v)
    except ValueError:
        return v


def same(a: Any, b: Any) -> bool:
    """Equal, numbers within a relative 1e-9 (NaN equals NaN)."""
    if isinstance(a, bool) or isinstance(b, bool):
        return a is b
    if isinstance(a, (int, float)) and isinstance(b, (int, float)):
        if math.isnan(a) or math.isnan(b):
            return math.isnan(a) and math.isnan(b)
        return math.isclose(a, b, rel_tol=REL_TOL, abs_tol=1e-12)
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(same(a[k], b[k]) for k in a)
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(same(x, y) for x, y in zip(a, b))
    return a == b


def compare_metrics(bundled: str, recomputed: str, name: str) -> None:
    """Cell-by-cell comparison of two metrics.csv texts; the first difference is a BundleError."""
    try:
        a = list(csv.reader(io.StringIO(bundled, newline="")))
    except csv.Error as exc:
        raise BundleError(f"{name}: not valid CSV ({exc})") from None
    b = list(csv.reader(io.StringIO(recomputed, newline="")))
    if not a or a[0] != b[0]:
        raise BundleError(f"{name}:1: header differs from the recomputed table's ({','.join(b[0])})")
    header = b[0]
    for line, (ra, rb) in enumerate(zip(a[1:], b[1:]), 2):
        if len(ra) != len(header):
            raise BundleError(f"{name}:{line}: {len(ra)} fields, expected {len(header)}")
        for col, x, y in zip(header, ra, rb):
            if not same(_cell(x), _cell(y)):
                what = ", ".join(f"{k} {v}" for k, v in zip(header[:9], rb[:9]) if v)
                raise BundleError(f"{name}:{line}: field {col}: bundle has {x!r}, recomputed {y!r} ({what})")
    if len(a) != len(b):
        raise BundleError(f"{name}: {len(a) - 1} metric rows, recomputed {len(b) - 1}")


def compare_labels(bundled: list[dict], recomputed: list[dict], name: str) -> None:
    if len(bundled) != len(recomputed):
        raise BundleError(f"{name}: {len(bundled)} label rows, recomputed {len(recomputed)}")
    for line, (a, b) in enumerate(zip(bundled, recomputed), 1):
        b = json.loads(dumps(b))
        for field in sorted(set(a) - set(b)):
            raise BundleError(f"{name}:{line}: unexpected field {field}")
        for field in (*LABEL_FIELDS, *sorted(set(b) - set(LABEL_FIELDS))):
            if field not in a:
                raise BundleError(f"{name}:{line}: missing field {field}")
            if not same(a[field], b.get(field)):
                raise BundleError(f"{name}:{line}: field {field}: bundle has {a[field]!r}, recomputed {b.get(field)!r} "
                                  f"(row {b['row_id']} sample {b['sample_index']}, judge {b['judge']})")


def headline(table, focal: str | None = None) -> dict[str, dict]:
    """Headline metrics (one model's table) with their CIs, n and, when the table has them, placebo columns."""
    out = {}
    if focal is None:
        f = table.loc[table["metric"].isin([V_FOCAL, CAI]), "identity"]
        focal = str(f.iloc[0]) if len(f) else "muslim"
    for name, metric, filt in HEADLINE:
        m = table["metric"] == metric
        for col, val in filt.items():
            if col in table.columns:
                m &= table[col].fillna("").astype(str) == (focal if val == "@focal" else val)
        if "placebo_kind" in table.columns:  # paraphrase-placebo rows are rows of their own
            m &= table["placebo_kind"].fillna("").astype(str) == ""
        rows = table[m]
        if len(rows):
            r = rows.iloc[0]
            out[name] = {k: _clean(r[k]) for k in HEADLINE_FIELDS if k in table.columns}
    return out


def _clean(x: Any) -> Any:
    if hasattr(x, "item"):
        x = x.item()
    if isinstance(x, float) and not math.isfinite(x):
        return None
    return None if x == "" else x


def counts(completions: list[dict]) -> dict[str, int]:
    c = Counter(r["condition"] for r in completions)
    return {k: c[k] for k in CONDITIONS if c[k]}
