"""Queue-aware requests: tokens a one-slot server decodes vs tokens the store keeps, streaming and AIMD on/off.

    python -m benchmarks.bench_queue [--n 24] [--tokens 16] [--token-ms 5] [--timeout 0.4] [--concurrency 8]
                                     [--max-retries 3] [--retry-rounds 2]

The server (tests/generate/one_slot_server.py) serves one request at a time and decodes `--tokens` tokens at
`--token-ms` each; it finishes a plain request even when the client has gone, and stops a streamed one at the
first token it cannot write. `mirage`'s runner sends `--n` samples with `--concurrency` in flight and a timeout of
`--timeout` s (counted from the first token when streaming). Prints, for each combination, samples stored, tokens
kept and decoded, decoded / kept (target <= 1.1), requests the server received, wall seconds and the largest
recorded queue_s. Not a timed test.
"""

from __future__ import annotations

import argparse
import os
import tempfile
import time

from mirage.config.generate import ModelSpec
from mirage.generate.runner import GenerationRun, Settings
from mirage.generate.store import Store
from tests.generate.one_slot_server import OneSlotServer


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--n", type=int, default=24)
    ap.add_argument("--tokens", type=int, default=16)
    ap.add_argument("--token-ms", type=float, default=5.0)
    ap.add_argument("--timeout", type=float, default=0.4)
    ap.add_argument("--concurrency", type=int, default=8)
    ap.add_argument("--max-retries", type=int, default=3)
    ap.add_argument("--retry-rounds", type=int, default=2)
    args = ap.parse_args()
    print(f"one-slot server: {args.tokens} tokens x {args.token_ms:g} ms a request; n = {args.n}, concurrency "
          f"{args.concurrency}, timeout {args.timeout:g} s, max_retries {args.max_retries}, retry_rounds "
          f"{args.retry_rounds}; load average {os.getloadavg()[0]:.2f}")
    print(f"{'stream':>6} {'adaptive':>8} {'stored':>6} {'kept':>6} {'decoded':>7} {'ratio':>6} {'requests':>8} "
          f"{'wall s':>6} {'max queue_s':>11}")
    rows = [{"row_id": f"q{i}", "request_id": f"r{i}", "condition": "C1",
             "messages": [{"role": "user", "content": f"prompt {i}"}]} for i in range(args.n)]
    st = Settings(n_samples=1, max_tokens=args.tokens, temperature=0.7, top_p=1.0, root_seed=1)
    with tempfile.TemporaryDirectory() as tmp:
        for stream in (False, True):
            for adaptive in (False, True):
                with OneSlotServer(args.token_ms / 1000) as srv:
                    spec = ModelSpec(provider="openai", model_id="slot", revision="slot-1", base_url=srv.url + "/v1",
                                     max_concurrency=args.concurrency, timeout_s=args.timeout,
                                     max_retries=args.max_retries, stream=stream, adaptive_concurrency=adaptive)
                    with Store.open(f"{tmp}/{stream}-{adaptive}") as store:
                        t0 = time.perf_counter()
                        run = GenerationRun("slot", spec, st, rows, store)
                        run.run(retry_rounds=args.retry_rounds)
                        run.close()
                        wall = time.perf_counter() - t0
                        srv.wait_idle(120)
                        recs = [store.done[k] for k in store.done]
                kept = sum(r["tokens_out"] for r in recs)
                queue = max((r.get("queue_s") or 0.0 for r in recs), default=0.0)
                ratio = f"{srv.decoded / kept:6.2f}" if kept else f"{'inf':>6}"
                print(f"{stream!s:>6} {adaptive!s:>8} {len(recs):>6} {kept:>6} {srv.decoded:>7} {ratio} "
                      f"{srv.requests:>8} {wall:>6.1f} {queue if stream else float('nan'):>11.2f}", flush=True)
    print(f"load average after: {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main()
