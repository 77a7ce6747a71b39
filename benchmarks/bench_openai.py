"""OpenAI provider requests/s against a local server with fixed latency, at several concurrency limits.

    python -m benchmarks.bench_openai [--latency 0.05] [--n 200]

Prints req/s per limit and its ratio to the ideal concurrency / latency.
"""

from __future__ import annotations

import argparse
import time


def main() -> None:
    from mirage.config.generate import ModelSpec
    from mirage.generate.providers.base import Sample
    from mirage.generate.providers.openai import OpenAIProvider
    from tests.generate.fake_server import FakeServer

    ap = argparse.ArgumentParser()
    ap.add_argument("--latency", type=float, default=0.05)
    ap.add_argument("--n", type=int, default=200)
    args = ap.parse_args()
    with FakeServer(latency_s=args.latency) as srv:
        for conc in (1, 4, 16, 64):
            spec = ModelSpec(provider="openai", model_id="bench", base_url=srv.url + "/v1", max_concurrency=conc)
            p = OpenAIProvider("bench", spec)
            n = min(args.n, max(20, conc * 10))
            samples = [Sample(key=f"c{conc}-{i}", sample_index=0, seed=i, max_tokens=8, temperature=0.7, top_p=1.0,
                              messages=({"role": "user", "content": f"bench {conc} {i}"},)) for i in range(n)]
            errors = 0

            def count(_s, r) -> None:
                nonlocal errors
                errors += r.error is not None

            start = time.perf_counter()
            p.generate(samples, count)
            rate = n / (time.perf_counter() - start)
            ideal = conc / args.latency
            print(f"concurrency {conc:>3}: {rate:7.1f} req/s (ideal {ideal:7.1f}, ratio {rate / ideal:.2f}), errors {errors}")


if __name__ == "__main__":
    main()
