"""The sample browser: `samples.html` and, beside it, a `samples/` folder of data shards the page loads on demand.

A slice can hold millions of samples, so the page embeds only a small manifest (filter values, shard list). Each
model x condition is one shard: a `.meta.js` file with the filterable columns as dictionary-coded byte arrays (all
of them are loaded when the page opens: about 10 bytes a sample) and `.NNNN.js` text chunks (prompt, completion,
reasoning, labels of a few hundred samples) loaded when a sample is opened or searched. Every file is a script that
hands its gzip-compressed, base64-encoded payload to the page (`MIRAGE_SAMPLES.meta(...)` / `.text(...)`): a page
opened from `file://` may load scripts but not fetch files, so the folder works copied anywhere, with no server and
no network. The texts are read back from the generation views one chunk at a time (`data.Texts`), so a slice's
texts are never in memory together. Model text only ever reaches the page as base64 inside a JavaScript string and
is drawn with `textContent`, so it is never parsed as HTML or script.
"""

from __future__ import annotations

import base64
import gzip
import json
import os
import re
import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pandas as pd
from jinja2 import Environment, PackageLoader, select_autoescape

from mirage.io import atomic_write, read_jsonl
from mirage.protocol import CONDITIONS, LANGUAGES, MITIGATIONS, POOLS
from mirage.report.data import TEXT_FIELDS, TEXT_PLACE, Texts

COLUMNS = ["key", "model", "condition", "template", "harness", "identity", "focal", "language", "rag_pool", "mitigation",
           "base_id", "sample_index", "request_id", "violent", "violent_reasoning", "decision", "score", "refusal", "error",
           "judge", "first_turn", *TEXT_PLACE]
FILTERS = ["model", "condition", "template", "identity", "language", "rag_pool", "mitigation", "label"]
# Per-sample codes in a shard's .meta.js (model and condition are the shard's); base_id indexes the shard's base list.
META = ["template", "harness", "identity", "language", "rag_pool", "mitigation", "label", "decision", "base_id", "sample_index"]
# Per-sample fields of a text chunk, in this order.
DETAIL = ["key", "request_id", "text", "reasoning", "first_turn", "violent", "violent_reasoning", "score", "refusal", "error", "judge"]
LABELS = ["violent", "not violent", "decision", "unlabelled", "error"]
# Value orders for the filter menus (models in the run's order, the focal identity first); values a run has beyond
# these follow, sorted.
ORDERS = {"condition": CONDITIONS, "language": LANGUAGES, "rag_pool": ["none", *POOLS],
          "mitigation": ["none", *MITIGATIONS], "label": LABELS}
CHUNK_CHARS = 400_000  # text per chunk (before compression): one opened sample loads at most this much
CHUNK_ROWS = 500
SAFE = re.compile(r"[^A-Za-z0-9._-]+")


def load_prompts(requests_dir: Path, request_ids: set[str]) -> dict[str, str]:
    """request_id -> the input as sent (chat messages as `role: content`, else the raw prompt; M4 adds its follow-up)."""
    out: dict[str, str] = {}
    for cond in CONDITIONS:
        path = requests_dir / f"{cond}.jsonl"
        if not path.exists():
            continue
        for r in read_jsonl(path, required=("request_id",)):
            rid = r["request_id"]
            if rid not in request_ids or rid in out:
                continue
            msgs = r.get("messages") or []
            text = "\n\n".join(f"[{m.get('role')}] {m.get('content')}" for m in msgs) if msgs else str(r.get("prompt") or "")
            if r.get("followup"):
                text += f"\n\n[user, second turn] {r['followup']}"
            out[rid] = text
    return out


def _labels(frame: pd.DataFrame) -> pd.Series:
    """violent | not violent | decision (C3, no violence label) | unlabelled | error, per row."""
    error = frame["error"].map(lambda v: v is True)
    violent = pd.to_numeric(frame["violent"], errors="coerce")
    out = np.where(violent.isna(), np.where(frame["condition"].eq("C3"), "decision", "unlabelled"),
                   np.where(violent.eq(1), "violent", "not violent"))
    return pd.Series(np.where(error, "error", out), index=frame.index)


def rows(labels: pd.DataFrame, gens: pd.DataFrame) -> pd.DataFrame:
    """One row per labelled sample with where its generation's texts lie (data.TEXT_PLACE); label-less generations are
    kept (unlabelled)."""
    if gens.empty and labels.empty:
        return pd.DataFrame(columns=[*COLUMNS, "label"])
    if labels.empty:
        merged = gens.copy()
    else:
        text_cols = [c for c in ("key", *TEXT_PLACE, "first_turn") if c in gens.columns]
        merged = labels.drop(columns=[c for c in (*TEXT_FIELDS, "first_turn") if c in labels.columns])
        # one text per store key (variants that share a rendered input share the key and its completion)
        merged = merged.merge(gens[text_cols].drop_duplicates("key"), on="key", how="left") if not gens.empty else merged
    for c in COLUMNS:
        if c not in merged.columns:
            merged[c] = None
    merged = merged[COLUMNS].copy()
    merged["label"] = _labels(merged)
    return merged


def _clean(v: object) -> object:
    if v is None or (isinstance(v, float) and np.isnan(v)):
        return None
    if hasattr(v, "item"):
        return v.item()
    return v


def _text(col: pd.Series) -> pd.Series:
    """Strata as strings; missing values as ""."""
    return col.map(lambda v: "" if _clean(v) is None else str(v))


def _values(col: str, present: set[str], models: list[str], focal: list[str]) -> list[str]:
    order = models if col == "model" else focal if col == "identity" else list(ORDERS.get(col, []))
    return [v for v in order if v in present] + sorted(present - set(order))


def _payload(obj: bytes | object) -> str:
    """gzip (fixed mtime: the same data gives the same bytes) + base64; JSON-encodes a non-bytes object first."""
    raw = obj if isinstance(obj, bytes) else json.dumps(obj, ensure_ascii=False, separators=(",", ":")).encode()
    return base64.b64encode(gzip.compress(raw, compresslevel=6, mtime=0)).decode("ascii")


def _script(call: str, *args: object) -> str:
    """`MIRAGE_SAMPLES.call(arg, ...);` with every argument as ASCII-only JSON (no model text is ever in clear)."""
    return f"MIRAGE_SAMPLES.{call}({','.join(json.dumps(a, ensure_ascii=True, separators=(',', ':')) for a in args)});\n"


def _width(n: int) -> int:
    return 1 if n <= 0xFF else 2 if n <= 0xFFFF else 4


def _chunks(shard: pd.DataFrame) -> Iterator[tuple[int, int]]:
    """[start, end) row ranges of at most CHUNK_ROWS rows and about CHUNK_CHARS characters of text."""
    size = pd.to_numeric(shard["text_chars"], errors="coerce").fillna(0).to_numpy()
    start, acc = 0, 0
    for i, s in enumerate(size):
        if i > start and (acc + s > CHUNK_CHARS or i - start >= CHUNK_ROWS):
            yield start, i
            start, acc = i, 0
        acc += int(s)
    if start < len(size):
        yield start, len(size)


def _write_shard(out: Path, name: str, shard: pd.DataFrame, codes: dict[str, dict[str, int]], prompts: dict[str, str],
                 texts: Texts) -> dict:
    """A shard's .meta.js and text chunks; returns its manifest entry."""
    strata = {c: _text(shard[c]) for c in META}
    bases = list(dict.fromkeys(strata["base_id"]))
    base_code = {b: i for i, b in enumerate(bases)}
    columns, blobs = [], []
    for c in META:
        if c == "base_id":
            values = strata[c].map(base_code).to_numpy()
        elif c == "sample_index":
            values = pd.to_numeric(shard[c], errors="coerce").fillna(0).astype(np.int64).to_numpy()
        else:
            values = strata[c].map(codes[c]).to_numpy()
        width = _width(int(values.max()) if len(values) else 0)
        columns.append([c, width])
        blobs.append(values.astype(f"<u{width}").tobytes())
    bounds = list(_chunks(shard))
    info = {"n": len(shard), "columns": columns, "bases": bases, "chunks": [a for a, _ in bounds]}
    (out / f"{name}.meta.js").write_text(_script("meta", name, info, _payload(b"".join(blobs))), encoding="ascii")
    for k, (a, b) in enumerate(bounds):
        part = shard.iloc[a:b]
        text, reasoning = zip(*texts.read(part))  # a chunk has at least one row
        part = part.assign(text=list(text), reasoning=list(reasoning))[DETAIL]
        rids = dict.fromkeys(r for r in part["request_id"] if isinstance(r, str))
        data = {"rows": [[_clean(v) for v in r] for r in part.itertuples(index=False)],
                "prompts": {r: prompts[r] for r in rids if r in prompts}}
        (out / f"{name}.{k:04d}.js").write_text(_script("text", name, k, _payload(data)), encoding="ascii")
    return {"id": name, "n": len(shard)}


def write_browser(table: pd.DataFrame, prompts: dict[str, str], models: list[str], data_dir: Path, texts: Texts) -> dict:
    """Write the shard files into `data_dir` (replaced as a whole: no stale shard survives) and return the manifest
    the page embeds. Rows are sorted so that the variants of one base prompt sit side by side in a shard."""
    strata = [*FILTERS, "harness", "decision", "base_id"]
    table = table.assign(**{c: _text(table[c]) for c in strata})  # a new frame; the text columns are shared, not copied
    focal = sorted(set(table.loc[table["focal"].map(lambda v: v is True), "identity"]))
    ident_order = {v: i for i, v in enumerate(_values("identity", set(table["identity"]), [], focal))}
    table["_ident"] = table["identity"].map(ident_order)
    table["_sample"] = pd.to_numeric(table["sample_index"], errors="coerce").fillna(0)
    values = {c: _values(c, set(table[c]), models, focal) for c in (*FILTERS, "harness", "decision")}
    codes = {c: {v: i for i, v in enumerate(vs)} for c, vs in values.items()}
    data_dir.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=f".{data_dir.name}.", dir=data_dir.parent))
    try:
        shards = []
        for i, (model, cond) in enumerate((m, c) for m in values["model"] for c in values["condition"]):
            shard = table[(table["model"] == model) & (table["condition"] == cond)]
            if shard.empty:
                continue
            shard = shard.sort_values(["base_id", "language", "rag_pool", "mitigation", "_ident", "_sample", "key"], kind="stable")
            entry = _write_shard(tmp, f"{i:03d}-{SAFE.sub('-', model)}-{SAFE.sub('-', cond)}", shard, codes, prompts, texts)
            shards.append({**entry, "model": codes["model"][model], "condition": codes["condition"][cond]})
        os.chmod(tmp, 0o755)
        old = data_dir.with_name(f".{data_dir.name}.old")
        shutil.rmtree(old, ignore_errors=True)
        if data_dir.exists():
            data_dir.rename(old)
        tmp.rename(data_dir)
        shutil.rmtree(old, ignore_errors=True)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    return {"dir": data_dir.name, "values": values, "focal": focal, "shards": shards, "total": len(table), "filters": FILTERS,
            "meta": META, "detail": DETAIL}


def render(manifest: dict, slice_name: str, prompt_source: str, report_href: str) -> str:
    """The samples page as one HTML string (the manifest embedded as JSON, safe inside <script>)."""
    data = {**manifest, "prompt_source": prompt_source}
    payload = json.dumps(data, ensure_ascii=True, separators=(",", ":")).replace("</", "<\\/").replace("<!--", "<\\u0021--")
    env = Environment(loader=PackageLoader("mirage.report", "templates"), autoescape=select_autoescape(["html", "j2"]))
    return env.get_template("samples.html.j2").render(slice=slice_name, n=manifest["total"], payload=payload, report_href=report_href,
                                                      data_dir=manifest["dir"])


def write(table: pd.DataFrame, texts: Texts, prompts: dict[str, str], models: list[str], page: Path, data_dir: Path,
          slice_name: str, prompt_source: str, report_href: str) -> None:
    """The sample browser: `page` and its shard folder `data_dir`, which must sit beside it (the page loads its files by
    the folder's name)."""
    if data_dir.parent != page.parent:
        raise ValueError(f"{data_dir} must be beside {page}")
    manifest = write_browser(table, prompts, models, data_dir, texts)
    with atomic_write(page) as fh:
        fh.write(render(manifest, slice_name, prompt_source, report_href))
