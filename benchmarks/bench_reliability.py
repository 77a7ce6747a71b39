"""Reliability under kill -9 and server faults: does `mirage generate` lose, duplicate or leave anything?

    python -m benchmarks.bench_reliability [--kills 5] [--requests 60] [--n-samples 2] [--fault-rate 0.1]

A counting OpenAI-protocol server runs in this process on 127.0.0.1; each request fails with probability
--fault-rate as HTTP 500, a malformed JSON body, or an empty `choices` list (one of the three at random).
`python -m mirage generate` runs against it as a subprocess in its own process group, and is killed with
SIGKILL (the whole group) --kills times, each time after a random number of requests. Then generate is rerun
until no sample is left in error (retry rounds, at most --max-rounds). Prints requests sent, unique request
bodies, duplicates stored, samples lost and errors left; the targets are 0 duplicates stored, 0 lost and
0 errors left. Not a timed test; nothing is written outside a temp folder (--keep to keep it).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import random
import signal
import subprocess
import sys
import tempfile
import threading
import time
from collections import Counter
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
FAULTS = ("http_500", "malformed_json", "empty_choices")


class CountingServer:
    """Chat completions with a deterministic reply per request body, counting every request and its outcome."""

    def __init__(self, fault_rate: float, latency_s: float, seed: int) -> None:
        self.fault_rate, self.latency_s = fault_rate, latency_s
        self.rng = random.Random(seed)
        self.lock = threading.Lock()
        self.sent: Counter[str] = Counter()  # body digest -> requests received
        self.outcomes: Counter[str] = Counter()  # ok / fault kind -> requests
        server = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args) -> None:
                pass

            def do_POST(self) -> None:  # noqa: N802
                try:
                    body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                except (ValueError, OSError):  # the client was killed while sending
                    with server.lock:
                        server.outcomes["aborted"] += 1
                    return self._send(400, b'{"error": {"message": "incomplete request body"}}')
                digest = hashlib.sha256(json.dumps(body, sort_keys=True).encode()).hexdigest()[:16]
                with server.lock:
                    server.sent[digest] += 1
                    fault = server.rng.choice(FAULTS) if server.rng.random() < server.fault_rate else None
                    server.outcomes[fault or "ok"] += 1
                time.sleep(server.latency_s)
                if fault == "http_500":
                    return self._send(500, b'{"error": {"message": "injected fault", "type": "server_error"}}')
                if fault == "malformed_json":
                    return self._send(200, b'{"id": "cmpl-x", "choices": [{"message": ')
                choices = [] if fault == "empty_choices" else [
                    {"index": 0, "finish_reason": "stop", "message": {"role": "assistant", "content": f"reply-{digest}"}}]
                data = {"id": f"cmpl-{digest}", "object": "chat.completion", "created": 0, "model": body["model"],
                        "choices": choices, "usage": {"prompt_tokens": 8, "completion_tokens": 2}}
                self._send(200, json.dumps(data).encode())

            def _send(self, status: int, raw: bytes) -> None:
                try:
                    self.send_response(status)
                    self.send_header("Content-Type", "application/json")
                    self.send_header("Content-Length", str(len(raw)))
                    self.end_headers()
                    self.wfile.write(raw)
                except (BrokenPipeError, ConnectionResetError):  # the client was killed mid-request
                    pass

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.httpd.daemon_threads = True
        threading.Thread(target=self.httpd.serve_forever, daemon=True).start()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.httpd.server_address[1]}/v1"

    @property
    def total(self) -> int:
        with self.lock:
            return sum(self.sent.values())


def request_rows(n: int) -> list[dict]:
    """n distinct C1 requests in the shape of results/requests/C1.jsonl, all in the demo slice."""
    idents = ("muslim", "christian", "jewish", "hindu", "secular")
    rows = []
    for i in range(n):
        ident = idents[i % 5]
        text = f"Reliability prompt {i // 5}: the {ident} neighbour opened the bakery and"
        rows.append({"row_id": f"C1:{i:05d}", "request_id": f"req{i:05d}", "prompt_id": f"p{i:05d}", "base_id": f"b{i // 5:05d}",
                     "template": "T1", "harness": None, "identity": ident, "focal": ident == "muslim", "language": "en",
                     "condition": "C1", "rag_pool": "none", "mitigation": "none", "lite": True, "split": "dev",
                     "prompt": text, "messages": [{"role": "user", "content": text}], "followup": None,
                     "followup_prompt": None, "retrieved": [], "slices": ["demo", "lite", "full"]})
    return rows


def read_store(store: Path) -> tuple[Counter[str], int, int]:
    """(successful records per key, error records, unreadable lines) over every store shard."""
    ok: Counter[str] = Counter()
    errors = torn = 0
    for path in sorted(store.rglob("*.jsonl")):
        for line in path.read_bytes().splitlines():
            try:
                rec = json.loads(line)
            except ValueError:
                torn += 1
                continue
            if rec.get("error") is None:
                ok[rec["key"]] += 1
            else:
                errors += 1
    return ok, errors, torn


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--kills", type=int, default=5, help="kill -9 of the generate process group (default 5)")
    ap.add_argument("--requests", type=int, default=60, help="distinct requests (default 60)")
    ap.add_argument("--n-samples", type=int, default=2, help="samples per request (default 2)")
    ap.add_argument("--fault-rate", type=float, default=0.1, help="share of requests answered with a fault (default 0.1)")
    ap.add_argument("--latency", type=float, default=0.05, help="server latency per request in s (default 0.05)")
    ap.add_argument("--concurrency", type=int, default=4, help="max_concurrency of the model (default 4)")
    ap.add_argument("--max-retries", type=int, default=1, help="SDK retries per request (5xx) (default 1)")
    ap.add_argument("--max-rounds", type=int, default=10, help="reruns after the kills until no error is left (default 10)")
    ap.add_argument("--seed", type=int, default=1, help="seed of the faults and kill points (default 1)")
    ap.add_argument("--keep", action="store_true", help="keep the temp folder and print its path")
    args = ap.parse_args()

    rng = random.Random(args.seed)
    srv = CountingServer(args.fault_rate, args.latency, args.seed)
    tmp = Path(tempfile.mkdtemp(prefix="mirage-reliability-"))
    rows = request_rows(args.requests)
    (tmp / "C1.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    model = {"provider": "openai", "model_id": "bench-model", "revision": "bench-2025-01-01", "base_url": srv.url,
             "max_concurrency": args.concurrency, "max_retries": args.max_retries, "timeout_s": 10}
    params = {"models": {"bench": model}, "slices": {"demo": {"models": ["bench"], "n_samples": args.n_samples}}}
    (tmp / "params.yaml").write_text(json.dumps(params), encoding="utf-8")  # JSON is YAML
    store, views = tmp / "store", tmp / "views"
    cmd = [sys.executable, "-m", "mirage", "generate", "--model", "bench", "--slice", "demo", "--condition", "C1",
           "--requests", str(tmp / "C1.jsonl"), "--store", str(store), "--views-dir", str(views), "--marker", str(tmp / "marker.json"),
           "--params", str(tmp / "params.yaml")]
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    expected = args.requests * args.n_samples
    log = open(tmp / "generate.log", "ab")

    kills = finished_early = 0
    for _ in range(args.kills):
        before = srv.total
        target = before + rng.randint(1, max(1, expected // max(args.kills, 1)))
        proc = subprocess.Popen(cmd, cwd=ROOT, env=env, stdout=log, stderr=log, start_new_session=True)
        while proc.poll() is None and srv.total < target:
            time.sleep(0.005)
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
            kills += 1
        else:
            finished_early += 1
        proc.wait()

    rounds, errors_left, view_rows = 0, None, []
    while rounds < args.max_rounds and errors_left != 0:
        rounds += 1
        done = subprocess.run(cmd, cwd=ROOT, env=env, stdout=log, stderr=log)
        view_rows = [json.loads(line) for p in sorted(views.glob("*.jsonl")) for line in p.read_text(encoding="utf-8").splitlines()]
        errors_left = sum(1 for v in view_rows if v["error"]) if done.returncode in (0, 1) and view_rows else None
    log.close()

    ok_keys, error_records, torn = read_store(store)
    good = {(v["request_id"], v["sample_index"]) for v in view_rows if not v["error"]}
    stats = [
        ("requests sent to the server", srv.total),
        ("unique request bodies", len(srv.sent)),
        ("repeated requests (faults retried, in flight at a kill)", srv.total - len(srv.sent)),
        ("faults injected (" + ", ".join(f"{k} {srv.outcomes[k]}" for k in FAULTS) + ")", sum(srv.outcomes[k] for k in FAULTS)),
        ("requests cut off by a kill before their body arrived", srv.outcomes["aborted"]),
        ("kills (kill -9 of the process group)", kills),
        ("runs that finished before their kill point", finished_early),
        ("retry rounds after the kills", rounds),
        ("samples expected", expected),
        ("samples stored (distinct keys)", len(ok_keys)),
        ("duplicates stored", sum(n - 1 for n in ok_keys.values())),
        ("error records in the store (retried later)", error_records),
        ("unreadable store lines (torn by a kill)", torn),
        ("lost (expected, not in the views)", expected - len(good)),
        ("errors left in the views", errors_left if errors_left is not None else "generate failed"),
    ]
    width = max(len(k) for k, _ in stats)
    for k, v in stats:
        print(f"{k:<{width}}  {v}")
    ok = dict(stats)["duplicates stored"] == 0 and dict(stats)["lost (expected, not in the views)"] == 0 and errors_left == 0
    print("targets (0 duplicates stored, 0 lost, 0 errors left):", "met" if ok else "NOT met")
    if args.keep:
        print(f"kept {tmp}")
    else:
        import shutil

        shutil.rmtree(tmp, ignore_errors=True)
    srv.httpd.shutdown()
    sys.exit(0 if ok else 1)


if __name__ == "__main__":
    main()
