"""Paid-for samples across real `mirage generate` processes (issue 32, deliverables 1 and 2): two writers of one
store partition at once, a writer killed with SIGKILL, outages over several runs, a bad key. Each scenario counts
what the local server was paid for: zero samples lost, zero paid twice (beyond the calls in flight at a kill)."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import yaml

from mirage.generate.providers.base import OUTAGES
from mirage.generate.store import Store
from mirage.io import write_jsonl
from tests.generate.conftest import gen_paths, request_rows
from tests.generate.fake_server import FakeServer
from tests.hostile.openai_server import HostileServer

ROOT = Path(__file__).resolve().parents[2]
KEY_ENV = "MIRAGE_HOSTILE_KEY"


def write_params(root: Path, url: str, **model) -> Path:
    path = root / "params.yaml"
    spec = {"provider": "openai", "model_id": "fake-model", "revision": "r1", "base_url": url, "max_concurrency": 2,
            "max_retries": 0, "timeout_s": 10, "stream": False, **model}
    path.write_text(yaml.safe_dump({"models": {"fake": spec}, "generate": {"n_samples": 2, "max_attempts": 2, "retry_rounds": 0},
                                    "slices": {"demo": {"models": ["fake"]}}}))
    return path


def start(root: Path, key: str | None = None) -> subprocess.Popen:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    env.pop(KEY_ENV, None)
    if key is not None:
        env[KEY_ENV] = key
    argv = [sys.executable, "-m", "mirage", "generate", "--model", "fake", "--slice", "full", "--condition", "C1",
            "--params", str(root / "params.yaml"), *gen_paths(root, "C1")]
    return subprocess.Popen(argv, cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)


def finish(proc: subprocess.Popen) -> tuple[int, str]:
    out, _ = proc.communicate(timeout=300)
    assert "Traceback" not in out, out
    return proc.returncode, out


def run(root: Path, key: str | None = None) -> tuple[int, str]:
    return finish(start(root, key))


def wait_for(predicate, timeout_s: float = 120) -> None:
    deadline = time.monotonic() + timeout_s
    while not predicate():
        assert time.monotonic() < deadline, "timed out"
        time.sleep(0.02)


def views(root: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in sorted((root / "gen/fake/full/C1").glob("*.jsonl"))}


def stored(root: Path) -> int:
    with Store.open(root / "gen/fake/store") as store:
        return len(store.done)


def test_two_writers_at_once_pay_each_call_once_and_their_views_are_the_store(tmp_path):
    write_jsonl(tmp_path / "requests" / "C1.jsonl", request_rows(30, "C1"))
    with FakeServer(latency_s=0.05) as srv:
        write_params(tmp_path, srv.url + "/v1")
        first = start(tmp_path)
        wait_for(lambda: srv.total > 0)  # the first holds the partition's lock and is sending
        second = start(tmp_path)
        (code1, out1), (code2, out2) = finish(first), finish(second)
        assert code1 == code2 == 0, out1 + out2
        assert srv.total == 60 and max(srv.bodies.values()) == 1  # 30 requests x 2 samples, each paid once
        assert "waiting for" in out2 and "sent 0 call(s)" in out2
        written = views(tmp_path)
        code, out = run(tmp_path)  # a later no-op run derives the very same views from the store
        assert code == 0 and "sent 0 call(s)" in out and views(tmp_path) == written and srv.total == 60


def test_a_killed_writer_leaves_no_lock_and_the_next_run_sends_only_what_is_missing(tmp_path):
    write_jsonl(tmp_path / "requests" / "C1.jsonl", request_rows(20, "C1"))
    with FakeServer(latency_s=0.2) as srv:
        write_params(tmp_path, srv.url + "/v1")
        proc = start(tmp_path)
        wait_for(lambda: srv.total >= 8)
        proc.send_signal(signal.SIGKILL)
        proc.wait(timeout=30)
        proc.stdout.close()
        kept, paid = stored(tmp_path), srv.total
        assert (tmp_path / "gen/fake/store/full/.C1.lock").exists()  # the file stays; the kernel dropped the lock
        start_s = time.monotonic()
        code, out = run(tmp_path)
        assert code == 0 and "waiting for" not in out and time.monotonic() - start_s < 60
        assert f"sent {40 - kept} call(s)" in out
        assert srv.total == paid + 40 - kept and paid - kept <= 2  # lost: at most the calls in flight at the kill


def test_outages_over_several_runs_use_no_attempt_and_the_fixed_run_sends_exactly_what_waits(tmp_path):
    write_jsonl(tmp_path / "requests" / "C1.jsonl", request_rows(5, "C1"))
    marker = tmp_path / "gen/fake/store/full/C1.manifest.json"
    with FakeServer() as srv:
        write_params(tmp_path, srv.url + "/v1")
        assert run(tmp_path)[0] == 0 and json.loads(marker.read_text())["missing"] == 0
        write_jsonl(tmp_path / "requests" / "C1.jsonl", request_rows(15, "C1"))  # 10 new requests: 20 samples owed
        import socket

        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            down = f"http://127.0.0.1:{s.getsockname()[1]}/v1"
        write_params(tmp_path, down)
        for _ in range(3):  # more runs than max_attempts (2): an outage never uses one up
            code, out = run(tmp_path)
            assert code == 1 and not marker.exists()  # the earlier marker no longer claims a complete partition
            assert out.strip().splitlines()[-1].startswith(f"error: stopped: {OUTAGES['transport']}")
            assert "20 of 30 sample(s) wait" in out
        write_params(tmp_path, srv.url + "/v1")
        before = srv.total
        code, out = run(tmp_path)
        assert code == 0 and "sent 20 call(s)" in out and srv.total - before == 20 and max(srv.bodies.values()) == 1
        assert json.loads(marker.read_text())["missing"] == 0


def test_a_bad_key_fails_at_the_first_401_and_the_run_with_the_right_key_sends_everything_once(tmp_path):
    write_jsonl(tmp_path / "requests" / "C1.jsonl", request_rows(20, "C1"))
    good, bad = "sk-good-0123456789abcdef", "sk-bad-0123456789abcdef"

    def check_key(h, _n, body):
        if h.headers.get("Authorization") != f"Bearer {good}":
            return h.send(401, json.dumps({"error": {"message": f"Incorrect API key provided: {bad}"}}).encode())
        h.send(200, json.dumps(h.good(body)).encode())

    with HostileServer() as srv:
        srv.reset(check_key)
        write_params(tmp_path, srv.url, api_key_env=KEY_ENV, max_retries=3)
        code, out = run(tmp_path, bad)
        assert code == 1 and srv.requests <= 2  # the first answers (one per slot in flight), no retries
        assert out.strip().splitlines()[-1].startswith(f"error: stopped: {OUTAGES['auth']}")
        assert "40 of 40 sample(s) wait" in out and bad not in out and f"[REDACTED:{KEY_ENV}]" in out
        assert stored(tmp_path) == 0
        srv.reset(check_key)
        code, out = run(tmp_path, good)
        assert code == 0 and srv.requests == 40 and srv.paid_twice == 0
