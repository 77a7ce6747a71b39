"""A local failure (disk full, a file-size limit, out of memory) is never a model's failed attempt (issue 25 item 5):
no call starts after it, the calls in flight finish on the open HTTP session, nothing is stored as an error,
the command says so in one line and exits 1, and the rerun sends exactly what is missing."""

from __future__ import annotations

import asyncio
import errno
import json
import os
import resource
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from mirage.generate.providers._async import run_bounded
from mirage.generate.providers.base import Result, Sample
from mirage.io import write_jsonl
from tests.generate.conftest import gen_paths, request_rows, write_params
from tests.generate.fake_server import FakeServer

ROOT = Path(__file__).resolve().parents[2]


def _samples(n: int) -> list[Sample]:
    return [Sample(key=f"k{i}", sample_index=0, seed=i, max_tokens=8, temperature=0.7, top_p=1.0, prompt=f"p{i}")
            for i in range(n)]


class Client:
    def __init__(self) -> None:
        self.in_flight = self.started = 0
        self.closed_with_in_flight: int | None = None

    async def close(self) -> None:
        self.closed_with_in_flight = self.in_flight


def test_disk_full_stops_new_calls_and_lets_in_flight_ones_finish():
    client, stored = Client(), []

    async def call(c: Client, s: Sample) -> Result:
        c.started += 1
        c.in_flight += 1
        await asyncio.sleep(0.05)
        c.in_flight -= 1
        return Result(text=f"ok {s.key}")

    def on_result(s: Sample, r: Result) -> None:
        if len(stored) == 3:
            raise OSError(errno.ENOSPC, "No space left on device", "store/x.jsonl")
        stored.append((s.key, r.error))

    with pytest.raises(OSError) as err:
        run_bounded(_samples(40), lambda: client, call, on_result, concurrency=4, per_minute=None, max_retries=2)
    assert err.value.errno == errno.ENOSPC
    assert client.closed_with_in_flight == 0, "the session is closed only after the calls in flight finished"
    assert client.started <= 8, "no call starts after the local failure (the ones already in flight may finish)"
    assert all(e is None for _, e in stored), "nothing is recorded as a failed attempt"


def test_a_local_error_inside_a_call_is_not_recorded_as_the_models_failure():
    recorded: list[Result] = []

    async def call(c: Client, s: Sample) -> Result:
        if s.key == "k2":
            raise MemoryError()
        await asyncio.sleep(0.01)
        return Result(text="ok")

    with pytest.raises(MemoryError):
        run_bounded(_samples(6), Client, call, lambda s, r: recorded.append(r), concurrency=2, per_minute=None)
    assert all(r.error is None for r in recorded)


def _no_bigger_than(limit: int):
    def preexec() -> None:
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # a write past the limit fails with EFBIG, as on a full disk
        resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit))
    return preexec


def test_generate_on_a_full_disk_exits_1_in_one_line_and_the_rerun_sends_only_the_rest(tmp_path):
    n = 60
    write_jsonl(tmp_path / "requests" / "C1.jsonl", request_rows(n, "C1"))
    with FakeServer(latency_s=0.02) as srv:
        params = write_params(tmp_path / "params.yaml", {"fake": {
            "provider": "openai", "model_id": "fake-model", "revision": "fake-2025-01-01", "base_url": srv.url + "/v1",
            "max_retries": 0, "timeout_s": 10, "stream": False, "max_concurrency": 4}}, n_samples=1, max_attempts=1)
        argv = [sys.executable, "-m", "mirage", "generate", "--model", "fake", "--slice", "full", "--condition", "C1",
                "--params", str(params), *gen_paths(tmp_path, "C1")]
        env = {**os.environ, "PYTHONPATH": str(ROOT), "PYTHONDONTWRITEBYTECODE": "1"}
        full = subprocess.run(argv, capture_output=True, text=True, env=env, cwd=ROOT, timeout=300,
                              preexec_fn=_no_bigger_than(8 * 1024))
        sent_first = srv.total
        errors = [line for line in full.stderr.splitlines() if line.startswith("Error:")]
        assert full.returncode == 1, full.stderr
        assert "Traceback" not in full.stderr
        assert len(errors) == 1 and errors[0].endswith("File too large (environment failure; fix it and rerun: "
                                                       "completions already stored are kept)"), full.stderr
        store = tmp_path / "gen" / "fake" / "store" / "full"
        records = [json.loads(line) for p in store.glob("*.jsonl") for line in p.read_text().splitlines()]
        assert records and len(records) < n and all(r["error"] is None for r in records), "no failed attempt stored"
        assert sent_first < n, "no call started after the disk filled up"
        again = subprocess.run(argv, capture_output=True, text=True, env=env, cwd=ROOT, timeout=300)
        assert again.returncode == 0, again.stderr
        assert srv.total - sent_first == n - len(records), "the rerun sends exactly what is missing"
        assert f"sent {n - len(records)} call(s)" in again.stderr
