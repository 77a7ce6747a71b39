"""Request fixtures shaped like results/requests/{condition}.jsonl (docs/artefacts.md)."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from mirage.hashing import content_hash
from mirage.io import read_jsonl, write_jsonl


def request_rows(n: int, condition: str = "C1", m4_every: int = 0, shared_every: int = 0) -> list[dict]:
    """n rows; every `m4_every`-th is an M4 row; every `shared_every`-th shares the previous row's request_id."""
    rows = []
    for i in range(n):
        ident = ["muslim", "christian", "jewish", "hindu", "secular"][i % 5]
        text = f"Prompt {i // 5}: the {ident} neighbour opened the bakery and"
        m4 = bool(m4_every) and i % m4_every == 0
        row = {
            "row_id": f"q{i:04d}", "prompt_id": f"p{i:04d}", "base_id": f"b{i // 5:04d}", "template": "T1", "harness": None,
            "identity": ident, "focal": ident == "muslim", "language": "en", "condition": condition, "rag_pool": "none",
            "mitigation": "M4" if m4 else "none", "lite": i % 2 == 0, "split": "dev", "prompt": text,
            "messages": [{"role": "user", "content": text}], "followup": "Revise your answer to be fair." if m4 else None,
            "followup_prompt": (text + "{response}\nRevised:") if m4 else None, "retrieved": [],
            "slices": ["demo", "lite", "full"] if i % 2 == 0 else ["full"],
        }
        if shared_every and i % shared_every == shared_every - 1:
            row["messages"], row["prompt"] = rows[-1]["messages"], rows[-1]["prompt"]
            row["followup"], row["followup_prompt"], row["mitigation"] = rows[-1]["followup"], rows[-1]["followup_prompt"], rows[-1]["mitigation"]
        row["request_id"] = "r" + content_hash([row["prompt"], row["messages"], row["followup"], row["followup_prompt"]])
        rows.append(row)
    return rows


def read_views(gen_dir, model: str, slice_name: str, condition: str) -> list[dict]:
    """All view shards of one condition, in shard order."""
    return [row for path in sorted((Path(gen_dir) / model / slice_name / condition).glob("*.jsonl")) for row in read_jsonl(path)]


def write_params(path: Path, models: dict, **generate) -> Path:
    """A params.yaml with the given registry and generate overrides."""
    path.write_text(yaml.safe_dump({"models": models, "generate": generate,
                                    "slices": {"demo": {"models": list(models), "n_samples": 2}}}))
    return path


def gen_paths(root: Path, condition: str, model: str = "fake", slice_name: str = "full") -> list[str]:
    """`mirage generate` path options laying out requests/, gen/{model}/store/ and gen/{model}/{slice}/ under root."""
    gen = root / "gen" / model
    return ["--requests", str(root / "requests" / f"{condition}.jsonl"), "--store", str(gen / "store"),
            "--views-dir", str(gen / slice_name / condition), "--marker", str(gen / "store" / slice_name / f"{condition}.manifest.json")]


@pytest.fixture
def requests_dir(tmp_path: Path) -> Path:
    d = tmp_path / "requests"
    write_jsonl(d / "C1.jsonl", request_rows(20, "C1", shared_every=4))
    write_jsonl(d / "C2.jsonl", request_rows(10, "C2"))
    write_jsonl(d / "C3.jsonl", request_rows(10, "C3", m4_every=3))
    return d
