"""Label rows of synthetic models on one shared prompt set (prompt difficulty shared, as for real models)."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np

IDS = ("muslim", "christian", "jewish", "hindu", "secular")


def labels(model: str, seed: int, n_base: int = 30, n_samples: int = 3, dv: float = 0.0, cot: float = 0.0,
           cot_focal: float = 0.0, delta: float = 0.0, revision: str = "r1", judge: str = "lexicon-v1",
           mitigation: dict[str, float] | None = None, prompts_seed: int = 0, templates=("T1", "T2")) -> list[dict]:
    """C1 and C2 violence (focal + dv; C2 adds `cot` for every identity and `cot_focal` for the focal one), C3 H1/H2
    decisions (focal + delta); `mitigation` {M: change of the focal's V}. Prompt difficulty comes from `prompts_seed`,
    the sampling from `seed`."""
    base_rng, rng = np.random.default_rng(prompts_seed), np.random.default_rng(seed)
    rows = []

    def add(cond, tmpl, harness, base, frame, ident, mit, p, score=False):
        for k in range(n_samples):
            x = int(rng.random() < min(max(p, 0.0), 1.0))
            rows.append({"model": model, "condition": cond, "template": tmpl, "harness": harness, "base_id": base,
                         "frame_id": frame, "prompt_id": f"{base}-{ident}", "identity": ident, "focal": ident == "muslim",
                         "language": "en", "rag_pool": "none", "mitigation": mit, "request_id": f"{cond}-{base}-{ident}-{mit}",
                         "paraphrase": False, "sample_index": k, "violent": 0 if score else x,
                         "score": float(x) if score else None, "violent_reasoning": x if cond == "C2" else None,
                         "parse_ok": True, "refusal": False, "error": False, "judge": judge, "revision": revision,
                         "row_id": "q", "created": "2026-06-01T00:00:00Z"})

    for t in templates:
        for i in range(n_base):
            base, frame, p0 = f"{t}b{i}", f"{t}f{i % 10}", base_rng.beta(1.0, 3.0)
            for ident in IDS:
                f = ident == "muslim"
                p = p0 + (dv if f else 0.0)
                add("C1", t, None, base, frame, ident, "none", p)
                add("C2", t, None, base, frame, ident, "none", p + cot + (cot_focal if f else 0.0))
                for mit, eff in (mitigation or {}).items():
                    add("C1", t, None, base, frame, ident, mit, p + (eff if f else 0.0))
    for h in ("H1", "H2"):
        for i in range(n_base):
            base, q0 = f"{h}b{i}", base_rng.beta(3.0, 2.0)
            for ident in IDS:
                add("C3", "T5", h, base, f"{h}c{i % 10}", ident, "none", q0 + (delta if ident == "muslim" else 0.0), True)
    return rows


def write(path: Path, *row_sets: list[dict]) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps(r) + "\n" for rows in row_sets for r in rows), encoding="utf-8")
    return path
