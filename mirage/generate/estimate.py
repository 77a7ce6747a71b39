"""`mirage estimate`: requests, samples, tokens, GPU-hours, API cost and local time, before anything runs.

Input tokens are estimated from the rendered text length (generate.chars_per_token); output tokens
as samples x max_tokens x generate.expected_output_fraction (1.0 = upper bound). M4 requests count
twice (two turns; the second turn's input includes the first answer). GPU-hours = output tokens /
registry throughput_tok_s x gpus; API cost from registry prices per 1M tokens; local time from the
registry throughput, or from a short measured run with --calibrate.
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

from mirage.generate.params import CONDITIONS, ModelSpec
from mirage.generate.runner import read_requests, settings_for
from mirage.io import DataError


def _input_chars(row: dict, mode: str) -> int:
    if mode == "chat":
        return sum(len(m.get("content") or "") for m in row.get("messages") or [])
    return len(row.get("prompt") or "")


def build_estimate(params: Any, slice_name: str, names: list[str], requests_dir: str,
                   measured_tok_s: dict[str, float]) -> dict[str, Any]:
    gen = params.generate
    sl = getattr(params.slices, slice_name)
    by_cond: dict[str, list[dict]] = {}
    for c in CONDITIONS:
        path = Path(requests_dir) / f"{c}.jsonl"
        if not path.exists():
            raise DataError(f"{path}: requests file not found (run `mirage render` first)")
        rows = read_requests(path, slice_name)
        by_cond[c] = list({r["request_id"]: r for r in rows}.values())
    out_rows = []
    for name in names:
        spec: ModelSpec = params.models[name]
        for c in CONDITIONS:
            st = settings_for(gen, sl.n_samples, sl.max_tokens, c)
            reqs = by_cond[c]
            m4 = sum(1 for r in reqs if r.get("followup") or r.get("followup_prompt"))
            samples = st.n_samples * (len(reqs) + m4)
            out_per = st.max_tokens * gen.expected_output_fraction
            chars = sum(_input_chars(r, spec.mode) * (2 if (r.get("followup") or r.get("followup_prompt")) else 1) for r in reqs)
            tokens_in = round(st.n_samples * (chars / gen.chars_per_token + m4 * out_per))
            tokens_out = round(samples * out_per)
            out_rows.append(_costs(name, spec, c, len(reqs), samples, tokens_in, tokens_out, measured_tok_s.get(name)))
    keys = ("requests", "samples", "tokens_in", "tokens_out", "gpu_hours", "api_cost_usd", "local_time_s")
    totals = {k: _sum(r[k] for r in out_rows) for k in keys}
    return {
        "slice": slice_name, "rows": out_rows, "totals": totals,
        "assumptions": {
            "chars_per_token": gen.chars_per_token, "expected_output_fraction": gen.expected_output_fraction,
            "n_samples": sl.n_samples or gen.n_samples,
            "max_tokens": {c: settings_for(gen, sl.n_samples, sl.max_tokens, c).max_tokens for c in CONDITIONS},
            "throughput_tok_s": {n: params.models[n].throughput_tok_s for n in names},
            "measured_tok_s": measured_tok_s,
            "prices_per_mtok": {n: [params.models[n].price_in_per_mtok, params.models[n].price_out_per_mtok] for n in names},
            "note": "tokens_in from text length / chars_per_token; tokens_out = samples x max_tokens x expected_output_fraction; "
                    "requests = distinct request_ids; M4 requests count two samples (two turns)",
        },
    }


def _sum(values: Any) -> float | None:
    vals = [v for v in values if v is not None]
    return round(sum(vals), 4) if vals else None


def _costs(name: str, spec: ModelSpec, cond: str, requests: int, samples: int, tin: int, tout: int,
           measured: float | None) -> dict[str, Any]:
    gpu_hours = api_cost = local_time = None
    if spec.provider == "vllm" and spec.throughput_tok_s:
        gpu_hours = round(tout / spec.throughput_tok_s / 3600 * spec.gpus, 4)
    if spec.provider in ("openai", "anthropic") and spec.price_in_per_mtok is not None and spec.price_out_per_mtok is not None:
        api_cost = round(tin / 1e6 * spec.price_in_per_mtok + tout / 1e6 * spec.price_out_per_mtok, 4)
    if spec.provider == "local" and (measured or spec.throughput_tok_s):
        local_time = round(tout / (measured or spec.throughput_tok_s), 1)
    return {"model": name, "condition": cond, "requests": requests, "samples": samples, "tokens_in": tin,
            "tokens_out": tout, "gpu_hours": gpu_hours, "api_cost_usd": api_cost, "local_time_s": local_time}


def calibrate_local(name: str, spec: ModelSpec, n: int) -> float:
    """Output tokens/s of the local provider on this machine (greedy-free sampling, 64 new tokens, n samples)."""
    from mirage.generate.providers.base import Sample
    from mirage.generate.providers.local import LocalProvider

    provider = LocalProvider(name, spec)
    samples = [Sample(key=f"calib{i}", sample_index=i, seed=i, max_tokens=64, temperature=0.7, top_p=1.0,
                      messages=({"role": "user", "content": f"Write a short paragraph about a town market, number {i}."},),
                      prompt=f"A short paragraph about a town market, number {i}:") for i in range(n)]
    tokens = 0

    def count(_s: Any, r: Any) -> None:
        nonlocal tokens
        tokens += r.tokens_out

    start = time.perf_counter()
    provider.generate(samples, count)
    return round(tokens / (time.perf_counter() - start), 2)


def format_table(result: dict[str, Any]) -> str:
    """Plain-text table of the estimate rows and totals."""
    cols = ("model", "condition", "requests", "samples", "tokens_in", "tokens_out", "gpu_hours", "api_cost_usd", "local_time_s")
    rows = [[str(r[c]) if r[c] is not None else "-" for c in cols] for r in result["rows"]]
    rows.append(["TOTAL", ""] + [str(result["totals"][c]) if result["totals"][c] is not None else "-" for c in cols[2:]])
    widths = [max(len(c), *(len(r[i]) for r in rows)) for i, c in enumerate(cols)]
    fmt = "  ".join(f"{{:<{w}}}" for w in widths)
    return "\n".join([f"slice {result['slice']}", fmt.format(*cols)] + [fmt.format(*r) for r in rows])
