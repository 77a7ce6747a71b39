"""`mirage leaderboard submit`: one model's run on one split -> a submission bundle."""

from __future__ import annotations

import json
import shutil
import tempfile
from contextlib import ExitStack
from pathlib import Path

from mirage.artefacts import DATA
from mirage.hashing import file_sha256
from mirage.io import DataError, atomic_write, read_jsonl, write_json, write_jsonl
from mirage.judges.eval import quality
from mirage.leaderboard import recompute as rc
from mirage.leaderboard.bundle import (
    COMPLETION_FIELDS,
    COMPLETIONS,
    LABELS,
    MANIFEST,
    METRICS,
    REPORT,
    SCHEMA,
    JudgeInfo,
    Manifest,
    ModelSpec,
    pack,
    parse_manifest,
    split_hash,
)
from mirage.names import judge_name as canonical_judge
from mirage.params import Params, section_hash

PARAMS_SECTIONS = ("generate", "label", "metrics")  # what a bundle's params_hash covers
from mirage.provenance import code_version


def read_views(folder: Path) -> list[dict]:
    """Every generation view row under {folder}/{C1,C2,C3}/*.jsonl, in a canonical order."""
    paths = [p for c in rc.CONDITIONS for p in sorted((folder / c).glob("*.jsonl"))]
    if not paths:
        raise DataError(f"{folder}: no generation views ({{C1,C2,C3}}/*.jsonl); run `mirage generate` for this split first")
    rows = [row for path in paths for row in read_jsonl(path, required=COMPLETION_FIELDS)]
    return sorted(rows, key=lambda r: (r["condition"], r["rag_pool"], r["mitigation"], r["row_id"], r["sample_index"]))


def judge_scores(path: Path) -> dict[str, dict | None]:
    """The judge's evaluation as the manifest carries it, when `mirage judge eval` wrote one: `gold` (n, overall,
    invariance over every evaluated set), `heldout` (the held-out realistic split) and `sets` (each named set)."""
    if not path.exists():
        return {"gold": None, "heldout": None, "sets": None}
    doc = json.loads(path.read_text(encoding="utf-8"))
    return {"gold": {k: doc[k] for k in ("judge", "n", "overall", "invariance") if k in doc},
            "heldout": quality.manifest_heldout(doc, str(path)), "sets": doc.get("by_set")}


def make_bundle(params: Params, params_path: str, model: str, split: str, views: Path, requests_dir: Path,
                out: Path, judge_eval_dir: Path, report: Path | None = None) -> Manifest:
    """Label and score the run exactly as `verify` will, check it, and write the bundle to `out`."""
    if model not in params.models:
        raise DataError(f"{params_path}: unknown model {model!r} (registry: {', '.join(sorted(params.models))})")
    spec = params.models[model]
    requests = rc.load_requests(requests_dir, split)
    completions = read_views(views)
    judge_name = canonical_judge(params.label.judge)
    jp = rc.judge_params(params, judge_name)
    stats = rc.statistics(params)
    with ExitStack() as stack:
        judge = rc.make_judge(judge_name, jp, params, params_path, stack)
        labels, table = rc.recompute(completions, judge, DATA, stats, str(views))
    manifest = {
        "schema": SCHEMA, "model": model, "split": split,
        "model_spec": {k: getattr(spec, k) for k in ModelSpec.model_fields if getattr(spec, k, None) is not None},
        "settings": rc.split_settings(params, split).model_dump(mode="json"),
        "code_version": code_version(), "params_hash": section_hash(params, *PARAMS_SECTIONS),
        "split_hash": split_hash(requests), "n_requests": len(requests), "n_completions": len(completions),
        "judge": JudgeInfo(name=judge.name, params=jp, **judge_scores(judge_eval_dir / judge.name / "judge_eval.json")).model_dump(),
        "statistics": stats, "headline": rc.headline(table), "files": {},
        # when the newest completion was generated: a property of the data, so a rebuild writes the same bundle
        "created": max((str(c.get("created") or "") for c in completions), default=""),
    }
    m = parse_manifest(manifest, f"manifest of {model} on {split}")
    rc.check_completions(completions, m, requests, str(views))
    out.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=".bundle-", dir=out.parent))
    try:
        write_jsonl(tmp / COMPLETIONS, completions)
        write_jsonl(tmp / LABELS, labels)
        with atomic_write(tmp / METRICS) as fh:
            fh.write(rc.metrics_csv(table))
        if report is not None:
            shutil.copyfile(report, tmp / REPORT)
        manifest["files"] = {p.name: {"sha256": file_sha256(p), "bytes": p.stat().st_size} for p in sorted(tmp.iterdir())}
        write_json(tmp / MANIFEST, manifest)
        if out.name.endswith(".tar.gz"):
            pack(tmp, out)
        else:
            if out.exists():
                shutil.rmtree(out)
            tmp.rename(out)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return parse_manifest(manifest, "manifest")
