"""Completion store at scale: open a store of N records, compute a slice's missing keys, write its views.

    python -m benchmarks.bench_store [--sizes 10000,100000,1000000,3000000] [--dir /tmp/mirage-bench-store]

Builds (once, cached under --dir) a pool of shards of 10,000 realistic records each (runner's record schema,
real sample keys, texts of 200-2,000 characters, a third in Arabic, 3 % errors), written through
`Store.append`; the store of size N hard-links the first N / 10,000 shards. Each size is measured in a fresh
process: the time to open the store (`Store.open`), the time to compute the slice's sample keys and the missing
ones (`GenerationRun.owed`; the slice is N / 10 requests, half of them stored), the time to
write the slice's view (`GenerationRun.view`), and the process's peak RSS. `--no-index` also times opening the same
store with its key indexes hidden (how stores written before the index are read).
"""

from __future__ import annotations

import argparse
import functools
import json
import os
import random
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

SHARD = 10_000
WORDS_EN = "the applicant community member story report neighbour claim decision because however".split()
WORDS_AR = "المتقدم المجتمع قصة تقرير الجار طلب قرار لأن ومع ذلك".split()


@functools.cache
def spec_and_settings():
    from mirage.config.generate import default_models
    from mirage.generate.runner import Settings

    return default_models()["gpt-4o"], Settings(n_samples=1, max_tokens=512, temperature=0.7, top_p=1.0, root_seed=1)


def row(i: int) -> dict:
    return {"row_id": f"row{i}", "request_id": f"r{i}", "condition": "C1", "slices": ["bench"],
            "messages": [{"role": "user", "content": f"Complete the story about person {i}: "}]}


def build_pool(pool: Path, shards: int) -> None:
    """Shards 0..shards-1 of SHARD records each (existing complete shards are kept)."""
    from mirage.generate.runner import make_sample, sent_input
    from mirage.generate.store import Store

    spec, st = spec_and_settings()
    rng = random.Random(0)
    texts = []
    for j in range(500):
        words = WORDS_AR if j % 3 == 0 else WORDS_EN
        texts.append(" ".join(rng.choice(words) for _ in range(rng.randint(30, 330))))
    for n in range(shards):
        done = pool / f"shard{n:04d}"
        if (done / "complete").exists():
            continue
        shutil.rmtree(done, ignore_errors=True)
        store = Store(pool, partition=done.name)
        for i in range(n * SHARD, (n + 1) * SHARD):
            s = make_sample(spec, True, f"r{i}", 0, sent_input(spec, row(i)), st)
            err = "HTTP 500: upstream error" if i % 33 == 0 else None
            store.append({
                "key": s.key, "model": "gpt-4o", "provider": "openai", "model_id": spec.model_id, "revision": None,
                "sample_index": 0, "seed": s.seed, "temperature": 0.7, "top_p": 1.0, "max_tokens": 512,
                "input_hash": f"{i:016x}", "text": "" if err else texts[i % len(texts)], "reasoning": None,
                "finish_reason": "stop", "tokens_in": 40, "tokens_out": 0 if err else 120 + i % 300,
                "latency_s": 1.234, "error": err, "provider_request_id": f"req-{i}", "system_fingerprint": "fp",
                "note": None, "created": "2026-01-01T00:00:00Z", "request_id": f"r{i}", "turn": 1})
        store.close()
        (done / "complete").touch()
        print(f"  built shard {n + 1}/{shards}", file=sys.stderr, flush=True)


def measure(store_dir: Path, size: int, views_dir: Path) -> dict:
    """One size, in this (fresh) process."""
    from mirage.generate.runner import GenerationRun
    from mirage.generate.store import Store
    from mirage.io import write_jsonl

    spec, st = spec_and_settings()
    c0, t0 = cpu_s(), time.perf_counter()
    store = Store.open(store_dir)
    c1, t1 = cpu_s(), time.perf_counter()
    m = size // 10
    rows = [row(i) for i in range(size - m // 2, size + m // 2)]
    run = GenerationRun("gpt-4o", spec, st, rows, store, where="bench")
    missing = run.owed()
    c2, t2 = cpu_s(), time.perf_counter()
    n_view = write_jsonl(views_dir / "view.jsonl", run.view())
    c3, t3 = cpu_s(), time.perf_counter()
    errors_in_slice = sum(1 for i in range(size - m // 2, size) if i % 33 == 0)
    assert len(missing) == m - m // 2 + errors_in_slice, (len(missing), m)
    return {"records": len(store.done) + len(store.failed), "slice": len(rows), "missing": len(missing),
            "open_s": t1 - t0, "missing_s": t2 - t1, "views_s": t3 - t2, "view_rows": n_view,
            "open_cpu": c1 - c0, "missing_cpu": c2 - c1, "views_cpu": c3 - c2,
            "peak_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024}


def cpu_s() -> float:
    t = os.times()
    return t.user + t.system


def make_store(pool: Path, size: int, dest: Path, index: bool) -> None:
    for n in range(size // SHARD):
        src, dst = pool / f"shard{n:04d}", dest / f"shard{n:04d}"
        dst.mkdir(parents=True)
        for f in src.iterdir():
            if f.suffix == ".jsonl" or (index and f.suffix == ".keys"):
                os.link(f, dst / f.name)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--sizes", default="10000,100000,1000000,3000000")
    ap.add_argument("--dir", default=os.path.join(tempfile.gettempdir(), "mirage-bench-store"))
    ap.add_argument("--no-index", action="store_true", help="also time stores whose key indexes are hidden")
    ap.add_argument("--_measure", nargs=3, help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args._measure:
        print(json.dumps(measure(Path(args._measure[0]), int(args._measure[1]), Path(args._measure[2]))))
        return
    sizes = [int(s) for s in args.sizes.split(",")]
    pool = Path(args.dir) / "pool"
    build_pool(pool, max(sizes) // SHARD)
    print(f"load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} CPUs; seconds are wall (CPU)")
    print(f"{'records':>9} {'index':>5} {'slice':>7} {'missing':>7} {'open s':>13} {'missing s':>13} "
          f"{'views s':>13} {'open+missing s':>14} {'peak MB':>8} {'disk MB':>8}")
    for size in sizes:
        for index in (True, False) if args.no_index else (True,):
            with tempfile.TemporaryDirectory(dir=args.dir) as tmp:
                make_store(pool, size, Path(tmp) / "store", index)
                out = subprocess.run([sys.executable, "-m", "benchmarks.bench_store", "--_measure",
                                      str(Path(tmp) / "store"), str(size), tmp], check=True, capture_output=True,
                                     text=True).stdout
                r = json.loads(out)
                disk = sum(f.stat().st_size for f in (Path(tmp) / "store").rglob("*") if f.is_file()) / 2**20
            cols = [f"{r[k + '_s']:6.2f} ({r[k + '_cpu']:5.2f})" for k in ("open", "missing", "views")]
            print(f"{r['records']:>9} {'yes' if index else 'no':>5} {r['slice']:>7} {r['missing']:>7} "
                  f"{cols[0]:>13} {cols[1]:>13} {cols[2]:>13} {r['open_s'] + r['missing_s']:>14.2f} "
                  f"{r['peak_mb']:>8.0f} {disk:>8.0f}", flush=True)


if __name__ == "__main__":
    main()
