"""Peak memory of `mirage report` on a large slice (issue 35: 500,000 samples in at most 1.5 GB).

    python -m benchmarks.bench_report_memory [--samples 500000] [--models 6] [--dir /tmp/mirage-bench-report]

Synthesises (once, cached under --dir) a slice in the pipeline's own file formats: label files, generation views,
rendered requests, metrics.csv, estimate and judge evaluation (`bench_browser.build_slice`: matched variants over
every template, harness, language, pool and mitigation; 100-3,000-character texts). Then runs the real
`mirage report` on it in a fresh process and prints its wall time, CPU time and peak RSS (`ru_maxrss` of the
child).

Measured on a shared 2-core machine (23 GB RAM, load average about 15 from other jobs), 500,000 samples over
6 models (1.5 GB of JSONL), the two versions run side by side under /usr/bin/time:

| date       | code                                                                  | peak RSS | CPU  | wall   |
|------------|-----------------------------------------------------------------------|----------|------|--------|
| 2026-11-29 | before: labels and views as lists of row dicts, every text in memory  | 3,295 MB | 86 s | 13 min |
| 2026-11-29 | after: texts read back by byte offset, frames built column by column  |   817 MB | 79 s | 13 min |

Their outputs (page, tables, figures, the sample browser's 1,798 shard files) are byte-identical, the output paths
named in the page aside.
"""

from __future__ import annotations

import argparse
import json
import resource
import sys
import tempfile
import time
from pathlib import Path

from benchmarks.bench_browser import build_slice, run_report

LIMIT_MB = 1536  # the target: 1.5 GB


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--samples", type=int, default=500_000)
    ap.add_argument("--models", type=int, default=6)
    ap.add_argument("--dir", type=Path, default=Path(tempfile.gettempdir()) / "mirage-bench-report")
    ap.add_argument("--json", type=Path, help="also write the result here")
    args = ap.parse_args()
    t0 = time.perf_counter()
    build_slice(args.dir, args.samples, args.models)
    print(f"slice: {args.samples:,} samples, {args.models} models ({time.perf_counter() - t0:.0f} s to build or reuse)", flush=True)
    result = {"samples": args.samples, "models": args.models, **run_report(args.dir)}
    child = resource.getrusage(resource.RUSAGE_CHILDREN)  # the report is this process's only child
    result["report_cpu_s"] = child.ru_utime + child.ru_stime
    verdict = "within" if result["report_peak_rss_mb"] <= LIMIT_MB else "OVER"
    print(f"mirage report: {result['report_s']:.0f} s ({result['report_cpu_s']:.0f} CPU s), peak RSS {result['report_peak_rss_mb']:,.0f} MB "
          f"({verdict} the {LIMIT_MB:,} MB target)", flush=True)
    if args.json:
        args.json.write_text(json.dumps(result, indent=2) + "\n", encoding="utf-8")
    sys.exit(0 if verdict == "within" else 1)


if __name__ == "__main__":
    main()
