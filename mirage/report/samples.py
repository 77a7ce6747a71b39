"""The sample browser: a second self-contained page listing every sample of a slice (prompt, completion,
reasoning, labels, identity, condition, pool, mitigation) with filters and a matched-pair view.

Rows are embedded as JSON and drawn with textContent by a small inline script, so model text is never
interpreted as HTML and the page needs no network.
"""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
from jinja2 import Environment, PackageLoader, select_autoescape

from mirage.io import read_jsonl
from mirage.protocol import CONDITIONS

COLUMNS = ["key", "model", "condition", "template", "harness", "identity", "focal", "language", "rag_pool", "mitigation",
           "base_id", "sample_index", "request_id", "violent", "violent_reasoning", "decision", "score", "refusal", "error",
           "judge", "text", "reasoning", "first_turn"]
FILTERS = ["model", "condition", "template", "identity", "language", "rag_pool", "mitigation", "label"]


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


def _label(row: pd.Series) -> str:
    if row.get("error") is True:
        return "error"
    v = row.get("violent")
    if v is None or pd.isna(v):
        return "decision" if row.get("condition") == "C3" else "unlabelled"
    return "violent" if int(v) == 1 else "not violent"


def _clean(v: object) -> object:
    if v is None or (isinstance(v, float) and pd.isna(v)):
        return None
    if hasattr(v, "item"):
        return v.item()
    return v


def rows(labels: pd.DataFrame, gens: pd.DataFrame) -> pd.DataFrame:
    """One row per labelled sample with its generation text; label-less generations are kept (unlabelled)."""
    if gens.empty and labels.empty:
        return pd.DataFrame(columns=[*COLUMNS, "label"])
    if labels.empty:
        merged = gens.copy()
    else:
        text_cols = [c for c in ("key", "text", "reasoning", "first_turn") if c in gens.columns]
        merged = labels.drop(columns=[c for c in ("text", "reasoning", "first_turn") if c in labels.columns])
        # one text per store key (variants that share a rendered input share the key and its completion)
        merged = merged.merge(gens[text_cols].drop_duplicates("key"), on="key", how="left") if not gens.empty else merged
    for c in COLUMNS:
        if c not in merged.columns:
            merged[c] = None
    merged["label"] = merged.apply(_label, axis=1)
    return merged[[*COLUMNS, "label"]]


def render(table: pd.DataFrame, prompts: dict[str, str], slice_name: str, prompt_source: str, report_href: str) -> str:
    """The samples page as one HTML string."""
    cols = [*COLUMNS, "label"]
    data = {"columns": cols, "rows": [[_clean(v) for v in r] for r in table[cols].itertuples(index=False)], "prompts": prompts,
            "filters": FILTERS, "prompt_source": prompt_source}
    payload = json.dumps(data, ensure_ascii=False, separators=(",", ":")).replace("</", "<\\/").replace("<!--", "<\\u0021--")
    env = Environment(loader=PackageLoader("mirage.report", "templates"), autoescape=select_autoescape(["html", "j2"]))
    return env.get_template("samples.html.j2").render(slice=slice_name, n=len(table), payload=payload, report_href=report_href)
