"""Where generation views live: one file per (condition, retrieval pool, mitigation) shard.

`mirage generate` writes `{generations_dir}/{model}/{slice}/{condition}/{pool}-{mitigation}.jsonl`
for every shard of the matrix that `render:` defines; the workflow declares the same files, so a
dry run lists the full matrix. Readers (label, validation, report) take every shard of a condition.
"""

from __future__ import annotations

from pathlib import Path

from mirage.generate.params import CONDITIONS
from mirage.render.params import RenderParams


def request_shards(render: RenderParams, condition: str) -> list[str]:
    """Shard names `{rag_pool}-{mitigation}` that `mirage render` produces for `condition`."""
    shards = ["none-none"]
    if condition in render.rag.conditions:
        shards += [f"{pool}-none" for pool in render.rag.pools]
    if condition in render.mitigations.conditions:
        shards += [f"none-{m}" for m in render.mitigations.which if m != "structural" or condition == "C3"]
    return shards


def shard_of(row: dict) -> str:
    return f"{row['rag_pool']}-{row['mitigation']}"


def generation_views(generations_dir: str | Path, model: str, slice_name: str, conditions=CONDITIONS) -> list[Path]:
    """Every existing view file of a model x slice, in condition then shard order."""
    folder = Path(generations_dir) / model / slice_name
    return [p for c in conditions for p in sorted((folder / c).glob("*.jsonl"))]
