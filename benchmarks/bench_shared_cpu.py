"""The local provider on a shared machine: tokens/s of the embedded model alone and beside one competing CPU-bound
process, as a ratio (issue 35's goal: >= 0.4 of the quiet rate; a fair share of two cores is 0.5).

    python -m benchmarks.bench_shared_cpu [--n 16] [--max-tokens 48] [--threads 2] [--no-spinning]

Each measurement is a fresh process (OpenMP reads its settings when torch loads), with OMP_NUM_THREADS set to the
declared cores as Snakemake sets it for a rule's `threads`. Two settings are compared: OMP_WAIT_POLICY=ACTIVE
(spinning thread pools, the behaviour before mirage set PASSIVE) and mirage's default. The competitor is a Python
busy loop. On a machine that others use too, "alone" is not quiet: read the ratios, not the rates.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time


def worker(n: int, max_tokens: int) -> None:
    """Load the embedded model, warm it up, time one batch of `n` samples; print tokens/s as JSON."""
    from mirage.config.generate import default_models
    from mirage.generate.providers.base import Sample
    from mirage.generate.providers.local import LocalProvider

    spec = default_models()["smollm2-135m"].model_copy(update={"batch_size": n})
    p = LocalProvider("smollm2-135m", spec)
    topics = ["a bakery", "a library", "a train station", "a football match", "a school trip", "a city park"]

    def batch(tag: str, size: int, tokens: int) -> list[Sample]:
        return [Sample(key=f"{tag}{i}", sample_index=0, seed=i, max_tokens=tokens, temperature=0.7, top_p=1.0,
                       messages=({"role": "user", "content": f"Write a short story about {topics[i % len(topics)]}."},))
                for i in range(size)]

    p.generate(batch("w", 2, 4), lambda _s, _r: None)
    out = []
    start = time.perf_counter()
    p.generate(batch("b", n, max_tokens), lambda _s, r: out.append(r.tokens_out))
    import torch

    print(json.dumps({"tok_s": sum(out) / (time.perf_counter() - start), "threads": torch.get_num_threads(),
                      "wait_policy": os.environ.get("OMP_WAIT_POLICY")}))


def measure(env: dict[str, str], args: argparse.Namespace, competing: bool) -> dict:
    hog = subprocess.Popen([sys.executable, "-c", "while True: pass"]) if competing else None
    try:
        out = subprocess.run([sys.executable, "-m", "benchmarks.bench_shared_cpu", "--worker", "--n", str(args.n),
                              "--max-tokens", str(args.max_tokens)], env={**os.environ, **env}, capture_output=True,
                             text=True, check=True)
    finally:
        if hog is not None:
            hog.kill()
            hog.wait()
    return json.loads(out.stdout.strip().splitlines()[-1])


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--n", type=int, default=16)
    ap.add_argument("--max-tokens", type=int, default=48)
    ap.add_argument("--threads", type=int, default=2, help="The job's declared cores (OMP_NUM_THREADS).")
    ap.add_argument("--no-spinning", action="store_true", help="Measure mirage's default only (half the time).")
    ap.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.worker:
        return worker(args.n, args.max_tokens)
    base = {k: v for k, v in os.environ.items() if k != "OMP_WAIT_POLICY"}
    os.environ.clear()
    os.environ.update(base)
    settings = [("spinning pools (OMP_WAIT_POLICY=ACTIVE)", {"OMP_WAIT_POLICY": "ACTIVE"}), ("mirage default", {})]
    for name, env in settings[args.no_spinning:]:
        env = {**env, "OMP_NUM_THREADS": str(args.threads)}
        alone, shared = measure(env, args, False), measure(env, args, True)
        print(f"{name}: {alone['threads']} thread(s) alone, {shared['threads']} beside, wait policy {shared['wait_policy']}: alone {alone['tok_s']:.1f} tok/s, "
              f"beside one CPU-bound process {shared['tok_s']:.1f} tok/s, ratio {shared['tok_s'] / alone['tok_s']:.2f} "
              f"(n = {args.n} samples x {args.max_tokens} tokens each; {os.cpu_count()} cores, load average "
              f"{os.getloadavg()[0]:.1f} after)", flush=True)


if __name__ == "__main__":
    main()
