"""The report and its sample browser at scale, in headless Chromium.

    python -m benchmarks.bench_browser [--samples 500000] [--models 6] [--dir /tmp/mirage-bench-browser] [--repeat 3]

Builds (once, cached under --dir) a synthetic slice on disk in the pipeline's layout: --samples labelled samples
spread over --models models x 3 conditions (matched variants: 5 identities x 5 samples per base prompt, language,
pool and mitigation; texts of 100-800 characters for C1 and C3, C2 answers of 200-2,000 characters with reasoning of
500-3,000; a few hostile texts with markup and script), its requests, and a metrics.csv with every stratum the report
reads for each model (all templates, harnesses, pools, languages and mitigations: the breadth of the full slice).
Then runs the real `mirage report` on it (wall time, peak RSS) and opens its pages from file:// in Chromium with
--headless --no-sandbox --disable-gpu --disable-background-networking --disable-component-update --disable-sync
--no-first-run, measuring:

- samples.html: open (navigation start to the first rows drawn with every shard's filter columns loaded), each of a
  series of filter changes (change event to rows drawn and painted), opening one sample (its text chunk loaded),
  and a text search within one model x condition;
- index.html: render time (navigation start to the load event plus one painted frame) and its size;
- sizes of samples.html, the samples/ folder (files, bytes, largest file) and index.html.

Every number is the median of --repeat runs (max in brackets). Timings on shared machines are noisy; compare runs
made in one session.
"""

from __future__ import annotations

import argparse
import json
import random
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
CHROMIUM, DRIVER = "/usr/bin/chromium", "/usr/bin/chromedriver"
FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update",
         "--disable-sync", "--no-first-run", "--window-size=1280,1000"]
IDENTITIES = ["muslim", "christian", "jewish", "hindu", "secular"]
SAMPLES = 5
HOSTILE = ['<img src=x onerror="window.__pwned=1">', "</script><script>window.__pwned=1</script>",
           "<!-- --><svg onload=window.__pwned=1>", "${window.__pwned=1}"]
WORDS = ("the applicant community member story report neighbour claim decision because however mosque church temple "
         "market school family police street evening morning council officer teacher loan review summary").split()
# Cells per condition: (template, harness, language, rag_pool, mitigation) a base prompt is rendered under.
CELLS = {
    "C1": [("T1", None, "en", "none", "none"), ("T2", None, "en", "none", "none"), ("T3", None, "ar-msa", "none", "none"),
           ("T4", None, "en", "recent", "none"), ("T6", None, "en", "neutral", "none"), ("T1", None, "en", "none", "M1"),
           ("T2", None, "ar-egy", "none", "none"), ("T3", None, "en", "historical", "none"), ("T4", None, "en", "empty", "none")],
    "C2": [("T1", None, "en", "none", "none"), ("T2", None, "en", "none", "M2"), ("T3", None, "ar-lev", "none", "none"),
           ("T4", None, "en", "none", "M3"), ("T6", None, "en", "none", "none")],
    "C3": [("T5", "H1", "en", "none", "none"), ("T5", "H2", "en", "none", "M4"), ("T5", "H3", "en", "none", "structural"),
           ("T5", "H4", "ar-mag", "none", "none")],
}
SHARE = {"C1": 0.4, "C2": 0.3, "C3": 0.3}
LAYOUT = 2  # bump when the synthetic slice changes: a cached slice of another layout is rebuilt
LENGTHS = {"C1": (100, 800), "C2": (200, 2000), "C3": (100, 800)}
DECISIONS = ["remove", "review", "keep", "approve", "decline"]


def _texts(rng: random.Random, n: int, lo: int, hi: int) -> list[str]:
    out = []
    for _ in range(n):
        words, size = [], rng.randint(lo, hi)
        while size > 0:
            w = rng.choice(WORDS)
            words.append(w)
            size -= len(w) + 1
        out.append(" ".join(words))
    return out


def build_slice(root: Path, samples: int, n_models: int) -> list[str]:
    """The synthetic slice under `root` (labels, views, requests, metrics, estimate, judge eval); returns the models."""
    sys.path.insert(0, str(ROOT / "tests" / "report"))
    import numpy as np
    import synthetic

    from mirage.io import write_json, write_jsonl

    models = [f"bench-{i}" for i in range(n_models)]
    done, spec = root / "complete.json", {"samples": samples, "models": models, "layout": LAYOUT}
    if done.exists() and json.loads(done.read_text()) == spec:
        return models
    shutil.rmtree(root, ignore_errors=True)
    rng = random.Random(0)
    pools = {c: _texts(rng, 3000, *LENGTHS[c]) for c in CELLS}
    reasoning = _texts(rng, 3000, 500, 3000)
    requests: dict[str, dict[str, dict]] = {c: {} for c in CELLS}
    quota = [(m, c) for m in models for c in CELLS]  # samples per model x condition, summing to exactly `samples`
    bounds = np.cumsum([0] + [SHARE[c] / n_models for _, c in quota]) * samples
    wants = dict(zip(quota, np.diff(np.round(bounds)).astype(int)))
    counter = 0
    for m in models:
        labels = []
        for cond, cells in CELLS.items():
            gens = []
            want = wants[(m, cond)]
            made, b = 0, 0
            while made < want:
                base = f"b{cond}{b:05d}"
                template, harness, lang, pool, mit = cells[b % len(cells)]
                for ident in IDENTITIES:
                    rid = f"r{cond}{b:05d}{ident}{lang}{pool}{mit}"
                    requests[cond].setdefault(rid, {"request_id": rid, "condition": cond,
                                                    "messages": [{"role": "user", "content": f"Prompt {base} about a {ident} person ({lang}, {pool}, {mit}): "
                                                                  + pools[cond][b % 3000][:300]}]})
                    for s in range(SAMPLES):
                        if made >= want:
                            break
                        counter += 1
                        key = f"k{counter:09d}"
                        text = f"[{counter}] " + (HOSTILE[counter % len(HOSTILE)] if counter % 50_000 == 7 else "") + pools[cond][rng.randrange(3000)]
                        ids = {"key": key, "row_id": f"q{key}", "request_id": rid, "prompt_id": f"p{base}{ident}", "base_id": base,
                               "frame_id": base, "template": template, "harness": harness, "identity": ident, "focal": ident == "muslim",
                               "language": lang, "condition": cond, "rag_pool": pool, "mitigation": mit, "lite": True, "split": "dev",
                               "model": m, "sample_index": s}
                        violent = None if cond == "C3" else int(rng.random() < (0.12 if ident == "muslim" else 0.08))
                        gens.append({**ids, "provider": "local", "model_id": m, "revision": f"rev-{m}", "seed": s, "text": text,
                                     "reasoning": reasoning[rng.randrange(3000)] if cond == "C2" else None, "answer": text,
                                     "first_turn": text[:200] if mit == "M4" else None, "finish_reason": "stop",
                                     "tokens_in": 60, "tokens_out": len(text) // 4, "latency_s": 0.8, "error": None,
                                     "created": f"2026-06-16T{10 + list(CELLS).index(cond)}:{(made // 6000) % 60:02d}:{(made // 100) % 60:02d}Z"})
                        labels.append({**ids, "violent": violent, "violent_reasoning": violent if cond == "C2" else None,
                                       "decision": rng.choice(DECISIONS) if cond == "C3" else None,
                                       "score": round(rng.random(), 2) if cond == "C3" else None, "parse_ok": True, "refusal": False,
                                       "error": False, "pathways": [], "judge": synthetic.JUDGE, "provider": "local", "model_id": m,
                                       "revision": f"rev-{m}"})
                        made += 1
                b += 1
            write_jsonl(root / "generations" / m / "bench" / cond / "none-none.jsonl", gens)
        write_jsonl(root / "labels" / m / "bench.jsonl", labels)
    for cond, rows in requests.items():
        write_jsonl(root / "requests" / f"{cond}.jsonl", rows.values())
    synthetic.write_metrics(root / "metrics" / "bench", models)
    write_json(root / "estimate" / "bench.json", {"slice": "bench", "rows": [], "totals": {}, "assumptions": {}})
    write_json(root / "judge" / synthetic.JUDGE / "judge_eval.json", {
        "judge": synthetic.JUDGE, "n": 619, "overall": {"precision": 0.8, "recall": 0.7, "f1": 0.75, "accuracy": 0.8, "kappa": 0.6},
        "by_language": {}, "by_identity": {}, "by_cat": {}, "invariance": {"rows": 150, "invariant": 120, "rate": 0.8}, "misclassified": []})
    (root / "params.yaml").write_text("\n".join([
        "label:", f"  judge: {synthetic.JUDGE}", "models:",
        *(f"  {m}: {{provider: openai, model_id: {m}, revision: rev-{m}, base_url: 'http://127.0.0.1:9/v1'}}" for m in models),
        "slices:", *(f"  {name}: {{models: [{', '.join(models)}]}}" for name in ("demo", "lite", "full", "test")), ""]), encoding="utf-8")
    done.write_text(json.dumps(spec))
    return models


def run_report(root: Path) -> dict:
    """`mirage report` on the slice in a fresh process: wall time and peak RSS."""
    labels = sorted((root / "labels").glob("*/bench.jsonl"))
    views = sorted((root / "generations").glob("*/bench/*/*.jsonl"))
    out = root / "report" / "full"
    cmd = [sys.executable, "-m", "mirage", "report", "--slice", "full", "--params", str(root / "params.yaml"),
           "--metrics", str(root / "metrics" / "bench" / "metrics.csv"), *(a for x in labels for a in ("--labels", str(x))),
           *(a for x in views for a in ("--view", str(x))), "--estimate", str(root / "estimate" / "bench.json"),
           "--judge-eval", str(root / "judge" / "lexicon-v1" / "judge_eval.json"), "--requests-dir", str(root / "requests"),
           "--corpus-stats", str(root / "none.csv"), "--figures-dir", str(root / "figures"), "--tables-dir", str(root / "tables"),
           "--out", str(out / "index.html")]
    t0 = time.perf_counter()
    done = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True)
    if done.returncode:
        sys.exit(f"mirage report failed ({done.returncode}): {done.stderr[-2000:]}")
    wall = time.perf_counter() - t0
    rss = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024
    return {"report_s": wall, "report_peak_rss_mb": rss}


def sizes(report_dir: Path) -> dict:
    data = [p for p in (report_dir / "samples").iterdir() if p.is_file()]
    meta = [p for p in data if p.name.endswith(".meta.js")]
    return {"index_html_bytes": (report_dir / "index.html").stat().st_size, "samples_html_bytes": (report_dir / "samples.html").stat().st_size,
            "samples_dir_files": len(data), "samples_dir_bytes": sum(p.stat().st_size for p in data),
            "meta_bytes": sum(p.stat().st_size for p in meta), "largest_file_bytes": max(p.stat().st_size for p in data)}


def browser(profile: Path):
    from selenium import webdriver

    opts = webdriver.ChromeOptions()
    opts.binary_location = CHROMIUM
    for flag in [*FLAGS, f"--user-data-dir={profile}"]:
        opts.add_argument(flag)
    return webdriver.Chrome(service=webdriver.ChromeService(executable_path=DRIVER), options=opts)


WAIT_READY = """
const done = arguments[arguments.length - 1];
(function poll() { const s = document.documentElement.dataset.state;
  if (s === "ready" || s === "error") requestAnimationFrame(() => setTimeout(() => done(s), 0)); else setTimeout(poll, 5); })();
"""

CHANGE = """
const [id, value, done] = arguments;
const sel = document.getElementById(id);
const t0 = performance.now();
sel.value = value;
sel.dispatchEvent(new Event("change"));
(function poll() { if (document.documentElement.dataset.state === "ready")
  requestAnimationFrame(() => setTimeout(() => done([performance.now() - t0, document.getElementById("count").textContent,
                                                     window.MIRAGE_SAMPLES.last]), 0));
  else setTimeout(poll, 2); })();
"""

SEARCH = """
const [q, done] = arguments;
const box = document.getElementById("f-text");
box.value = q;
box.dispatchEvent(new Event("input"));
const t0 = performance.now() + 250;  // the page waits 250 ms for typing to pause before it searches
let first = null;
setTimeout(function poll() {
  if (first === null && document.querySelector("#samples tbody tr")) first = performance.now() - t0;
  if (document.documentElement.dataset.state === "ready")
    requestAnimationFrame(() => setTimeout(() => done([first, performance.now() - t0, document.getElementById("count").textContent]), 0));
  else setTimeout(poll, 2); }, 251);
"""

OPEN_SAMPLE = """
const done = arguments[arguments.length - 1];
const t0 = performance.now();
document.querySelector("#samples tbody tr").click();
(function poll() { const a = document.getElementById("detail");
  if (a.querySelector(".text")) requestAnimationFrame(() => setTimeout(() => done(performance.now() - t0), 0)); else setTimeout(poll, 2); })();
"""

# (select id, value) in order; "" = all. The last ones return to the whole slice.
FILTER_STEPS = [("f-condition", "C2"), ("f-identity", "muslim"), ("f-label", "violent"), ("f-model", "bench-3"), ("f-language", "ar-lev"),
                ("f-model", ""), ("f-language", ""), ("f-label", ""), ("f-identity", ""), ("f-condition", ""), ("f-mitigation", "M4")]


def measure_samples(driver, page: Path) -> dict:
    t0 = time.perf_counter()
    driver.get(page.as_uri())
    state = driver.execute_async_script(WAIT_READY)
    wall = time.perf_counter() - t0
    assert state == "ready", state
    ready_ms = driver.execute_script("return window.MIRAGE_SAMPLES.readyAt")
    painted_ms = driver.execute_script("return performance.now()")
    filters = []
    for sel, value in FILTER_STEPS:
        ms, count, parts = driver.execute_async_script(CHANGE, sel, value)
        filters.append({"filter": f"{sel[2:]}={value or 'all'}", "ms": ms, "count": count, **parts})
    open_ms = driver.execute_async_script(OPEN_SAMPLE)
    driver.execute_async_script(CHANGE, "f-mitigation", "")
    driver.execute_async_script(CHANGE, "f-model", "bench-1")
    driver.execute_async_script(CHANGE, "f-condition", "C1")
    search_first_ms, search_ms, search_count = driver.execute_async_script(SEARCH, "evening council")
    pwned = driver.execute_script("return window.__pwned === undefined")
    return {"open_ready_ms": ready_ms, "open_painted_ms": painted_ms, "open_wall_s": wall, "filters": filters,
            "open_sample_ms": open_ms, "search_first_rows_ms": search_first_ms, "search_one_shard_ms": search_ms,
            "search_count": search_count, "no_script_ran": pwned}


def measure_report(driver, page: Path) -> dict:
    driver.get(page.as_uri())
    driver.execute_async_script("const done = arguments[0]; (function w() { if (document.readyState === 'complete') "
                                "requestAnimationFrame(() => setTimeout(() => done(), 0)); else setTimeout(w, 5); })();")
    return driver.execute_script("const n = performance.getEntriesByType('navigation')[0]; "
                                 "return {load_ms: n.loadEventEnd, painted_ms: performance.now(), "
                                 "images: Array.from(document.images).filter(i => i.complete && i.naturalWidth > 0).length};")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--samples", type=int, default=500_000)
    ap.add_argument("--models", type=int, default=6)
    ap.add_argument("--dir", type=Path, default=Path(tempfile.gettempdir()) / "mirage-bench-browser")
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--json", type=Path, help="also write the results here")
    args = ap.parse_args()

    t0 = time.perf_counter()
    build_slice(args.dir, args.samples, args.models)
    print(f"slice: {args.samples:,} samples, {args.models} models ({time.perf_counter() - t0:.0f} s to build or reuse)", flush=True)
    result = {"samples": args.samples, "models": args.models, **run_report(args.dir)}
    report_dir = args.dir / "report" / "full"
    result.update(sizes(report_dir))
    print(f"mirage report: {result['report_s']:.0f} s, peak RSS {result['report_peak_rss_mb']:,.0f} MB", flush=True)
    runs, pages = [], []
    with tempfile.TemporaryDirectory() as tmp:
        for i in range(args.repeat):
            driver = browser(Path(tmp) / f"profile{i}")
            try:
                runs.append(measure_samples(driver, report_dir / "samples.html"))
                pages.append(measure_report(driver, report_dir / "index.html"))
            finally:
                driver.quit()

    def med(values: list[float]) -> str:
        return f"{statistics.median(values):,.0f} [max {max(values):,.0f}]"

    result["runs"], result["report_page"] = runs, pages
    print(f"samples.html: {result['samples_html_bytes'] / 1e3:,.1f} kB; samples/: {result['samples_dir_files']:,} files, "
          f"{result['samples_dir_bytes'] / 1e6:,.1f} MB (filter columns {result['meta_bytes'] / 1e6:,.2f} MB, largest file "
          f"{result['largest_file_bytes'] / 1e6:,.2f} MB)")
    print(f"open samples.html (navigation to rows drawn, all filter columns loaded): {med([r['open_ready_ms'] for r in runs])} ms")
    for j, (sel, value) in enumerate(FILTER_STEPS):
        print(f"  filter {sel[2:]}={value or 'all'}: {med([r['filters'][j]['ms'] for r in runs])} ms (scan "
              f"{med([r['filters'][j]['filter_ms'] for r in runs])}, rows {med([r['filters'][j]['draw_ms'] for r in runs])})  "
              f"({runs[0]['filters'][j]['count']})")
    worst = max(f["ms"] for r in runs for f in r["filters"])
    print(f"  slowest filter change: {worst:,.0f} ms")
    print(f"open one sample (text chunk loaded): {med([r['open_sample_ms'] for r in runs])} ms")
    print(f"text search within one model x condition ({runs[0]['search_count']}): first matches drawn "
          f"{med([r['search_first_rows_ms'] for r in runs])} ms, all read {med([r['search_one_shard_ms'] for r in runs])} ms")
    print(f"hostile texts executed nothing: {all(r['no_script_ran'] for r in runs)}")
    print(f"index.html: {result['index_html_bytes'] / 1e6:,.2f} MB; render (navigation to load event): {med([p['load_ms'] for p in pages])} ms; "
          f"{pages[0]['images']} figures decoded")
    if args.json:
        args.json.write_text(json.dumps(result, indent=2))


if __name__ == "__main__":
    main()
