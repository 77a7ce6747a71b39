"""Synthetic label rows with planted effects (true answers known) for the metrics tests."""

from __future__ import annotations

import numpy as np
import pytest

IDENTITIES = ("muslim", "christian", "jewish", "hindu", "secular")
TEMPLATES = ("T1", "T2", "T3", "T4", "T6")
HARNESSES = ("H1", "H2", "H3", "H4")


def _row(model, cond, tmpl, harness, base, ident, lang, pool, mit, k, violent, score=None):
    return {
        "key": f"k-{model}-{cond}-{tmpl}-{base}-{ident}-{lang}-{pool}-{mit}-{k}", "row_id": "q", "request_id": f"r-{model}-{cond}-{base}-{ident}-{lang}-{pool}-{mit}",
        "prompt_id": f"p-{base}-{ident}-{lang}", "base_id": base, "template": tmpl, "harness": harness, "identity": ident,
        "focal": ident == "muslim", "language": lang, "condition": cond, "rag_pool": pool, "mitigation": mit,
        "lite": True, "split": "dev", "model": model, "sample_index": k, "violent": violent,
        "violent_reasoning": violent if cond == "C2" else None,
        "decision": None if score is None else str(score), "score": score, "parse_ok": True, "refusal": False,
        "error": False, "pathways": [], "judge": "lexicon-v1",
    }


def planted_labels(rng: np.random.Generator, model: str = "m", n_base: int = 40, n_samples: int = 5,
                   v_control: float = 0.2, dv: float = 0.10, v_neutral: float = 0.2, delta_t: float = 0.15,
                   s_control: float = 0.6, signed_delta: float = -0.10, mitigation_v: dict | None = None) -> list[dict]:
    """C1/C2 (baseline, mitigations, RAG neutral/recent) and C3 rows with per-prompt Bernoulli rates:
    V_focal - V_control = dv, V_recent - V_neutral = delta_t (focal), s_focal - s_control = signed_delta."""
    rows = []
    mitigation_v = mitigation_v or {}
    for cond in ("C1", "C2"):
        for t in TEMPLATES:
            for i in range(n_base):
                base = f"b{t}{i}"
                for ident in IDENTITIES:
                    p = v_control + (dv if ident == "muslim" else 0.0)
                    cells = [("none", "none", p)]
                    cells += [("none", m, p + eff) for m, eff in mitigation_v.items()]
                    if ident == "muslim":
                        cells += [("neutral", "none", v_neutral), ("recent", "none", v_neutral + delta_t)]
                    for pool, mit, prob in cells:
                        for k in range(n_samples):
                            rows.append(_row(model, cond, t, None, base, ident, "en", pool, mit, k, int(rng.random() < prob)))
    for h in HARNESSES:
        for i in range(n_base):
            base = f"b{h}{i}"
            for ident in IDENTITIES:
                prob = s_control + (signed_delta if ident == "muslim" else 0.0)
                for k in range(n_samples):
                    rows.append(_row(model, "C3", "T5", h, base, ident, "en", "none", "none", k, 0, float(rng.random() < prob)))
    return rows


@pytest.fixture(scope="session")
def planted():
    """The planted-effect label generator."""
    return planted_labels
