"""Offline judges' speed per text on the real-text gold set, side by side in one run (issue 31: parse-v3 <= 25 ms per
text on 2 CPU cores).

    python -m benchmarks.bench_judge_speed [--n 800] [--repeat 3]

Each judge is loaded and warmed up before timing, then labels the same texts `--repeat` times; the median wall and
CPU ms per text are printed with the ratio to lexicon-v1 (word counting) and parse-v2 in the same run. Timings on a
shared machine are noisy: read the ratios, and the absolute figure as an upper bound.
"""

from __future__ import annotations

import argparse
import json
import statistics
import time
from pathlib import Path

from mirage import artefacts


def main() -> None:
    from mirage.judges.registry import build_judge

    ap = argparse.ArgumentParser()
    ap.add_argument("--n", type=int, default=800)
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args()
    rows = [json.loads(line) for line in Path(artefacts.judge_real()).read_text(encoding="utf-8").splitlines()]
    texts = [r["text"] for r in rows[: args.n]]
    results = {}
    for name in ("lexicon-v1", "parse-v2", "parse-v3"):
        judge = build_judge(name, None)
        judge.label_violence([(None, "Warm-up.", False)])
        walls, cpus = [], []
        for _ in range(args.repeat):
            start, cpu = time.perf_counter(), time.process_time()
            judge.label_violence([(None, t, False) for t in texts])
            walls.append(1000 * (time.perf_counter() - start) / len(texts))
            cpus.append(1000 * (time.process_time() - cpu) / len(texts))
        results[name] = (statistics.median(walls), statistics.median(cpus))
    for name, (wall, cpu) in results.items():
        print(f"{name:11s} {wall:7.2f} ms wall {cpu:7.2f} ms CPU per text ({len(texts)} real texts, median of "
              f"{args.repeat}); x{wall / results['lexicon-v1'][0]:.0f} lexicon-v1, x{wall / results['parse-v2'][0]:.2f} parse-v2")


if __name__ == "__main__":
    main()
