"""`mirage estimate --calibrate`: a registry model's measured output tokens/s, kept in a calibration file that
later estimates reuse.

A calibration sends generate.calibration_samples short requests (MAX_TOKENS new tokens each, the protocol's
temperature and top_p) through the model's real provider, as `mirage generate` does, at the model's own
concurrency (API and servers: max_concurrency; local: batch_size; vllm: one offline batch), and stores nothing
in the completion store. It records the aggregate tokens/s (all output tokens / wall time from the first request's
start, its end less its latency, to the last one's end: model loading and client start-up excluded) and the mean
per-stream tokens/s (one request's output tokens / its latency). A measurement holds for
the provider, model id, revision and base_url it was taken with; when one of them changes, estimates fall back
to the registry's throughput_tok_s.
"""

from __future__ import annotations

import datetime as dt
import json
import os
import platform
import socket
import time
from pathlib import Path
from typing import Any

from mirage import secrets
from mirage.config.generate import GenerateParams, ModelSpec
from mirage.generate.providers import build_provider
from mirage.generate.providers.base import Result, Sample
from mirage.io import DataError, read_text, write_json

MAX_TOKENS = 64
#: The most tokens/s a measurement may claim (the bound of the registry's throughput_tok_s); more is a lying server.
MAX_TOK_S = 1e9
#: The registry fields a measurement was taken with; it applies while they are unchanged.
MEASURED_WITH = ("provider", "model_id", "revision", "base_url")


def calibration_samples(n: int, gen: GenerateParams, seeded: bool) -> list[Sample]:
    """n distinct short requests (distinct texts, so no server answers one from another's prefix cache)."""
    return [Sample(key=f"calibration-{i}", sample_index=i, seed=i if seeded else None, max_tokens=MAX_TOKENS,
                   temperature=gen.temperature, top_p=gen.top_p,
                   messages=({"role": "user", "content": f"Write a short paragraph about the market in town number {i}."},),
                   prompt=f"A short paragraph about the market in town number {i}:") for i in range(n)]


def concurrency(spec: ModelSpec, n: int) -> int:
    """Requests in flight at once during a calibration of n requests."""
    if spec.provider == "local":
        return min(spec.batch_size, n)
    return n if spec.provider == "vllm" else min(spec.max_concurrency, n)


def measure(name: str, spec: ModelSpec, gen: GenerateParams) -> dict[str, Any]:
    """One calibration entry for model `name`; RuntimeError (one line) when a request fails or no tokens come back."""
    n = gen.calibration_samples
    provider = build_provider(name, spec.model_copy(update={"use_batch_api": False}))  # live requests only
    samples = calibration_samples(n, gen, provider.seeded)
    done: list[tuple[float, Result]] = []
    try:
        provider.generate(samples, lambda _s, r: done.append((time.perf_counter(), r)))
    finally:
        provider.close()
    results = [r for _, r in done]
    failed = [r.error for r in results if r.error is not None]
    if failed or len(results) < n:
        first = (failed or ["no result"])[0].splitlines()[0]
        raise RuntimeError(f"{name}: {len(failed) + n - len(results)} of {n} calibration requests failed (first: {first})")
    impossible = [r.tokens_out for r in results if not 0 <= r.tokens_out <= MAX_TOKENS]
    if impossible:
        raise RuntimeError(f"{name}: a calibration reply reported {impossible[0]} output tokens for a limit of {MAX_TOKENS}: "
                           "the server's token counts cannot be trusted, nothing measured")
    tokens = sum(r.tokens_out for r in results)
    if not tokens:
        raise RuntimeError(f"{name}: the {n} calibration requests reported 0 output tokens (no usage in the responses?)")
    wall = max(t for t, _ in done) - min(t - r.latency_s for t, r in done)
    streams = [r.tokens_out / r.latency_s for r in results if r.latency_s > 0]
    if not wall > 0 or not 0 < tokens / wall <= MAX_TOK_S:
        raise RuntimeError(f"{name}: calibration measured {tokens} tokens in {wall:.6f} s, an impossible throughput "
                           f"(over {MAX_TOK_S:g} tok/s); nothing measured")
    return {
        **measured_with(spec),
        "tok_s": round(tokens / wall, 2), "per_stream_tok_s": round(sum(streams) / len(streams), 2) if streams else None,
        "n": n, "concurrency": concurrency(spec, n), "max_tokens": MAX_TOKENS, "tokens_out": tokens, "wall_s": round(wall, 4),
        "measured_at": dt.datetime.now(dt.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ"),
        "host": socket.gethostname(), "machine": f"{platform.machine()}, {os.cpu_count()} CPUs",
    }


def read_calibration(path: str | os.PathLike) -> dict[str, dict[str, Any]]:
    """Model name -> measurement; empty when the file does not exist."""
    if not Path(path).exists():
        return {}
    try:
        data = json.loads(read_text(path, "calibration file"))
    except json.JSONDecodeError as exc:
        raise DataError(f"{path}:{exc.lineno}: not valid JSON ({exc.msg})") from None
    if not isinstance(data, dict) or not all(isinstance(v, dict) and "tok_s" in v for v in data.values()):
        raise DataError(f"{path}: expected an object model -> measurement with tok_s (written by `mirage estimate --calibrate`)")
    return data


def write_calibration(path: str | os.PathLike, measured: dict[str, dict[str, Any]]) -> None:
    """Add (or replace) the measurements of `measured`, keeping the file's other models; one atomic write."""
    write_json(path, {**read_calibration(path), **measured})


def applicable(entry: dict[str, Any] | None, spec: ModelSpec) -> bool:
    """Whether a measurement was taken with the registry entry as it is now."""
    return entry is not None and all(entry.get(k) == v for k, v in measured_with(spec).items())


def measured_with(spec: ModelSpec) -> dict[str, Any]:
    """The MEASURED_WITH fields of `spec` as the calibration file keeps them (a key in base_url never written)."""
    return secrets.public(spec.model_dump(mode="json", include=set(MEASURED_WITH)))
