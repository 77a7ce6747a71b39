"""What submit and verify share: the split's request set, the protocol settings, the coverage rules,
and labels + metrics recomputed from completions through the pipeline's own entry points
(`mirage.label.labeler.label_rows`, `mirage.metrics.compute.compute_metrics`)."""

from __future__ import annotations

import csv
import io
import json
import math
from collections import Counter
from collections.abc import Iterable, Iterator
from contextlib import ExitStack
from pathlib import Path
from typing import Any

from mirage import artefacts
from mirage.artefacts import DATA
from mirage.hashing import content_hash
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


class CompletionCheck:
    """Schema, provenance and coverage of completion rows, one row at a time (a bundle is never held in memory):
    exactly n samples of every request of the split, no extras or duplicates, one model and revision, request
    columns unchanged, answers derived from texts, texts no longer than max_tokens x `chars_per_token`."""

    SHARED = ("key", "text", "reasoning", "answer", "error")

    def __init__(self, m: Manifest, requests: dict[str, dict], name: str, chars_per_token: int | None = None) -> None:
        self.m, self.requests, self.name = m, requests, name
        self.n = m.settings.n_samples
        self.max_chars = ({c: t * chars_per_token for c, t in m.settings.max_tokens.items()}
                          if chars_per_token else None)
        self.seen: dict[tuple[str, int], int] = {}
        self.newest = ""  # the latest `created` of any row: the manifest's `created` must be it
        self.first_of: dict[tuple[str, int], tuple[int, tuple[str, ...]]] = {}

    def row(self, line: int, row: dict) -> None:
        from mirage.generate.store import sample_seed

        m, n, where = self.m, self.n, f"{self.name}:{line}"
        types = {"text": str, "answer": str, "sample_index": int, "row_id": str, "key": str}
        for field in COMPLETION_FIELDS:
            if field not in row:
                raise BundleError(f"{where}: missing field {field}")
        req = self.requests.get(row["row_id"]) if isinstance(row["row_id"], str) else None
        if req is None:
            raise BundleError(f"{where}: field row_id: {str(row['row_id'])[:80]} is not a request of split {m.split!r} (extra prompt)")
        extra = sorted(set(row) - set(COMPLETION_FIELDS) - set(OPTIONAL_FIELDS) - set(req))
        if extra:
            raise BundleError(f"{where}: unexpected field(s) {', '.join(extra)[:200]}")
        for field, typ in types.items():
            if not isinstance(row[field], typ) or isinstance(row[field], bool):
                raise BundleError(f"{where}: field {field}: expected {typ.__name__}, got {type(row[field]).__name__}")
        for field in ("reasoning", "error"):
            if not (row[field] is None or isinstance(row[field], str)):
                raise BundleError(f"{where}: field {field}: expected text or null")
        if self.max_chars is not None:
            cap = self.max_chars.get(str(row["condition"]), 0)
            for field in ("text", "reasoning", "answer"):
                if row[field] is not None and len(row[field]) > cap:
                    raise BundleError(f"{where}: field {field}: {len(row[field]):,} characters, more than max_tokens x "
                                      f"{cap // max(1, m.settings.max_tokens.get(str(row['condition']), 1))} = {cap:,} "
                                      "(limits.chars_per_token)")
        for field, want in (("model", m.model), ("provider", m.model_spec.provider), ("model_id", m.model_spec.model_id),
                            ("revision", m.model_spec.revision)):
            if row[field] != want:
                raise BundleError(f"{where}: field {field}: {str(row[field])[:80]!r} differs from the manifest's {want!r} "
                                  f"(a bundle holds one model at one pinned revision)")
        for field in (*REQUEST_COLUMNS, *(f for f in row if f in req and f not in COMPLETION_FIELDS)):
            if row[field] != req.get(field):
                raise BundleError(f"{where}: field {field}: {str(row[field])[:80]!r} differs from request {row['row_id']} "
                                  f"({req.get(field)!r})")
        self.newest = max(self.newest, str(row.get("created") or ""))
        i = row["sample_index"]
        if not 0 <= i < n:
            raise BundleError(f"{where}: field sample_index: {i if abs(i) < 10**12 else '(huge)'} outside 0..{n - 1} (n_samples = {n})")
        if (row["row_id"], i) in self.seen:
            raise BundleError(f"{where}: duplicate sample: row {row['row_id']} sample {i} also on line {self.seen[(row['row_id'], i)]}")
        self.seen[(row["row_id"], i)] = line
        if row["seed"] is not None and row["seed"] != sample_seed(m.settings.seed, row["request_id"], i):
            raise BundleError(f"{where}: field seed: {str(row['seed'])[:40]} is not the protocol seed of request "
                              f"{row['request_id']} sample {i}")
        shared = (row["request_id"], i)  # rows with the same request (e.g. under the structural mitigation) share samples
        digests = tuple(content_hash(row[f]) for f in self.SHARED)
        if shared in self.first_of:
            other_line, other = self.first_of[shared]
            for field, a, b in zip(self.SHARED, digests, other):
                if a != b:
                    raise BundleError(f"{where}: field {field}: differs from line {other_line}, the same request "
                                      f"{row['request_id']} sample {i}")
        else:
            self.first_of[shared] = (line, digests)
        failed = bool(row["error"])
        if failed and (row["text"] or row["answer"]):
            raise BundleError(f"{where}: field error: a failed sample carries a completion")
        if not failed and (row["reasoning"], row["answer"]) != _expected_answer(row):
            raise BundleError(f"{where}: field answer: answer/reasoning are not derived from the completion text")

    def finish(self) -> None:
        n, requests = self.n, self.requests
        missing = [(rid, i) for rid in requests for i in range(n) if (rid, i) not in self.seen]
        if missing:
            shown = ", ".join(f"{rid}#{i}" for rid, i in missing[:5])
            raise BundleError(f"{self.name}: {len(missing)} of {len(requests) * n} required samples missing "
                              f"({len(requests)} requests x {n} samples), e.g. {shown}")
        if self.m.created != self.newest:
            raise BundleError(f"manifest.json: field created: {self.m.created!r}, but the newest completion was created "
                              f"{self.newest[:40]!r} (the manifest's date is its completions')")


def check_completions(rows: list[dict], m: Manifest, requests: dict[str, dict], name: str) -> None:
    """CompletionCheck over a list of rows (what `submit` checks before it writes a bundle)."""
    check = CompletionCheck(m, requests, name)
    for line, row in enumerate(rows, 1):
        check.row(line, row)
    check.finish()


def make_judge(info_name: str, judge_params: dict, params: Params, params_path: str, stack: ExitStack):
    """The pinned judge, built as `mirage label` builds it (offline judges, a registry model, or a jury)."""
    from mirage.judges.registry import build_judge

    return build_judge(info_name, stack, params_path, int(judge_params.get("window", params.label.window)), DATA,
                       int(judge_params.get("judge_max_tokens", params.label.judge_max_tokens)), params.label.judge_batch)


def judge_params(params: Params, name: str) -> dict:
    """The settings a judge's labels depend on (pinned in the manifest)."""
    from mirage.judges.lexicon import LEXICON_VERSION
    from mirage.protocol import PARSE_V2_VERSION, PARSE_V3_VERSION, PARSE_VERSION

    if name == LEXICON_VERSION:
        return {"window": params.label.window}
    if name in (PARSE_VERSION, PARSE_V2_VERSION, PARSE_V3_VERSION):
        return {}
    return {"judge_max_tokens": params.label.judge_max_tokens}


def statistics(params: Params) -> dict:
    """The metrics settings that change numbers (paths dropped)."""
    return {k: v for k, v in params.metrics.model_dump(mode="json").items() if not k.endswith("_dir")}


def recompute(completions: list[dict], judge, data_dir: str, stats: dict, source: str):
    """(label rows, metrics table) from completion rows, through label_rows and compute_metrics."""
    labels = [lab for chunk in label_chunks(iter(completions), judge, data_dir, source) for lab in chunk]
    return labels, metrics_table(labels, stats)


#: Characters of completion text labelled at a time when rows are streamed (bounds the judge's working set).
CHUNK_CHARS = 1_000_000


def label_chunks(rows: Iterator[dict], judge, data_dir: str, source: str, chunk_chars: int = CHUNK_CHARS) -> Iterator[list[dict]]:
    """Label rows in chunks of about `chunk_chars` characters of text (labels are row by row, so chunking changes
    nothing in them); only the label rows are kept, never the texts."""
    from mirage.label.decisions import load_harnesses
    from mirage.label.labeler import label_rows

    harnesses = load_harnesses(data_dir)
    chunk: list[dict] = []
    size = 0
    for row in rows:
        chunk.append(row)
        size += sum(len(row.get(f) or "") for f in ("text", "reasoning", "answer"))
        if size >= chunk_chars:
            yield label_rows(chunk, harnesses, judge, data_dir, source=source)
            chunk, size = [], 0
    if chunk:
        yield label_rows(chunk, harnesses, judge, data_dir, source=source)


def metrics_table(labels: list[dict], stats: dict, unit_hook=None):
    """The metrics table of label rows under the pinned statistics (`unit_hook`: see compute_metrics)."""
    import pandas as pd

    from mirage.config.metrics import MetricsParams
    from mirage.metrics.compute import compute_metrics

    try:
        p = MetricsParams(**stats)
    except Exception as exc:  # pydantic ValidationError: pinned statistics this code does not know
        raise BundleError(f"manifest.json: field statistics: not valid for this code version ({str(exc).splitlines()[0]})") from None
    df = pd.DataFrame(labels)
    for col in ("violent", "score"):
        df[col] = pd.to_numeric(df[col], errors="coerce").astype(float)
    table, _ = compute_metrics(df, p, unit_hook=unit_hook)
    return table


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


def compare_metrics(bundled: Iterable[str], recomputed: str, name: str) -> None:
    """Cell-by-cell comparison of a metrics.csv (its lines, streamed) with the recomputed table's text; the first
    difference is a BundleError."""
    b = list(csv.reader(io.StringIO(recomputed, newline="")))
    header, n = b[0], 0
    try:
        for n, ra in enumerate(csv.reader(bundled), 1):
            if n == 1:
                if ra != header:
                    raise BundleError(f"{name}:1: header differs from the recomputed table's ({','.join(header)})")
                continue
            if n > len(b):
                continue  # counted below
            if len(ra) != len(header):
                raise BundleError(f"{name}:{n}: {len(ra)} fields, expected {len(header)}")
            rb = b[n - 1]
            for col, x, y in zip(header, ra, rb):
                if not same(_cell(x), _cell(y)):
                    what = ", ".join(f"{k} {v}" for k, v in zip(header[:9], rb[:9]) if v)
                    raise BundleError(f"{name}:{n}: field {col}: bundle has {x[:80]!r}, recomputed {y!r} ({what})")
    except csv.Error as exc:
        raise BundleError(f"{name}:{n + 1}: not valid CSV ({exc})") from None
    if n == 0:
        raise BundleError(f"{name}:1: header differs from the recomputed table's ({','.join(header)})")
    if n != len(b):
        raise BundleError(f"{name}: {n - 1} metric rows, recomputed {len(b) - 1}")


def compare_label(line: int, a: dict, b: dict, name: str) -> None:
    """One bundled label row against the recomputed one, field by field."""
    b = json.loads(dumps(b))
    for field in sorted(set(a) - set(b)):
        raise BundleError(f"{name}:{line}: unexpected field {field[:80]}")
    for field in (*LABEL_FIELDS, *sorted(set(b) - set(LABEL_FIELDS))):
        if field not in a:
            raise BundleError(f"{name}:{line}: missing field {field}")
        if not same(a[field], b.get(field)):
            raise BundleError(f"{name}:{line}: field {field}: bundle has {str(a[field])[:80]!r}, recomputed {b.get(field)!r} "
                              f"(row {b['row_id']} sample {b['sample_index']}, judge {b['judge']})")


def compare_labels(bundled: list[dict], recomputed: list[dict], name: str) -> None:
    if len(bundled) != len(recomputed):
        raise BundleError(f"{name}: {len(bundled)} label rows, recomputed {len(recomputed)}")
    for line, (a, b) in enumerate(zip(bundled, recomputed), 1):
        compare_label(line, a, b, name)


def headline(table, focal: str | None = None) -> dict[str, dict]:
    """Headline metrics (one model's table) with their CIs, n and, when the table has them, placebo columns."""
    out = {}
    if focal is None:
        f = table.loc[table["metric"].isin([V_FOCAL, CAI]), "identity"]
        focal = str(f.iloc[0]) if len(f) else ""
    for name, metric, filt in HEADLINE:
        m = table["metric"] == metric
        for col, val in filt.items():
            if col in table.columns:
                m &= table[col].fillna("").astype(str) == (focal if val == "@focal" else val)
        if "gender" in table.columns:  # religion x gender cells (metrics.intersectional) are no leaderboard headline
            m &= table["gender"].fillna("").astype(str) == ""
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
