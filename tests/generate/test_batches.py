"""`mirage generate` through the OpenAI Batch and Anthropic Message Batches APIs, end to end against the
local fake server: submission, polling, ingestion, resume after a kill, per-request errors, chunking."""

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from click.testing import CliRunner

from mirage.config.dialects import ANTHROPIC
from mirage.generate.cli import generate
from mirage.generate.memory import input_bound
from mirage.generate.providers.anthropic import AnthropicBatch
from mirage.generate.providers.openai_batch import OpenAIBatch
from mirage.generate.store import Store
from mirage.io import write_jsonl
from tests.generate.conftest import gen_paths, read_views, request_rows, write_params
from tests.generate.fake_server import FakeServer, digest_of

ROOT = Path(__file__).parents[2]
PROVIDERS = ["openai", "anthropic"]
JOBS = {"openai": OpenAIBatch, "anthropic": AnthropicBatch}


def setup(tmp_path: Path, url: str, provider: str, n_rows: int = 6, **entry_extra) -> Path:
    """C1 and C2 requests and a params.yaml whose model `fake` always uses the batch API, polling fast."""
    write_jsonl(tmp_path / "requests/C1.jsonl", request_rows(n_rows, "C1"))
    write_jsonl(tmp_path / "requests/C2.jsonl", request_rows(4, "C2"))
    entry = {"provider": provider, "model_id": "fake-model", "revision": "fake-2025-01-01", "max_retries": 1,
             "timeout_s": 5, "use_batch_api": True, "batch_min_requests": 1, "batch_poll_s": 0.01,
             "base_url": url + "/v1" if provider == "openai" else url, **entry_extra}
    return write_params(tmp_path / "params.yaml", {"fake": entry}, n_samples=2)


def cli(params: Path, condition: str = "C1") -> list[str]:
    return ["generate", "--model", "fake", "--slice", "full", "--condition", condition, "--params", str(params),
            *gen_paths(params.parent, condition)]


def invoke(params: Path, condition: str = "C1") -> str:
    res = CliRunner().invoke(generate, cli(params, condition)[1:])
    assert res.exit_code == 0, res.output
    return res.output


def state_files(tmp_path: Path) -> list[str]:
    return sorted(p.name for p in (tmp_path / "gen/fake/store/full/batches").iterdir())


def expected_text(provider: str, request: dict) -> str:
    """What the fake server answers for one submitted batch request."""
    if provider == "openai":
        return f"reply-{digest_of(request['body'])} seed={request['body']['seed']}"
    return f"reply-{digest_of(request['params'])}"


def check_views(tmp_path: Path, srv: FakeServer, provider: str, condition: str = "C1") -> list[dict]:
    """Every view row answered by the batch request submitted under its key, with the provider's metadata."""
    submitted = {r["custom_id"]: r for reqs in srv.batch_inputs.values() for r in reqs}
    view = read_views(tmp_path / "gen", "fake", "full", condition)
    for row in view:
        assert row["error"] is None and row["finish_reason"] == "stop"
        assert row["text"] == row["answer"] == expected_text(provider, submitted[row["key"]])
        if provider == "anthropic":
            assert row["seed"] is None and row["reasoning"].startswith("The case file") and row["tokens_out"] == 57
            assert submitted[row["key"]]["params"]["temperature"] == 0.7
        else:
            assert row["seed"] == submitted[row["key"]]["body"]["seed"] and row["tokens_in"] == 7
    return view


@pytest.mark.parametrize("provider", PROVIDERS)
def test_batch_path_end_to_end(tmp_path, provider):
    with FakeServer(batch_polls=2) as srv:
        params = setup(tmp_path, srv.url, provider)
        assert "sent 12 call(s)" in invoke(params)
        (batch_id,) = srv.batches  # one batch for the whole job
        assert srv.polls[batch_id] >= 3  # unfinished twice, then finished
        assert srv.total == 12 and list(srv.executed.values()) == [1] * 12  # each sample run once, nothing sent live
        view = check_views(tmp_path, srv, provider)
        assert len(view) == 12 and {r["key"] for r in view} == {r["custom_id"] for r in srv.batch_inputs[batch_id]}
        assert state_files(tmp_path) == [f"{provider}-{batch_id}.ingested"]
        if provider == "anthropic":
            stored = Store.open(tmp_path / "gen/fake/store").done.values()
            assert {r["note"] for r in stored} == {ANTHROPIC.no_seed}
        assert "sent 0 call(s)" in invoke(params)  # all cached: no second batch
        assert len(srv.batches) == 1 and srv.total == 12


@pytest.mark.parametrize("provider", PROVIDERS)
def test_killed_while_polling_resumes_the_same_batch(tmp_path, provider):
    with FakeServer(batch_polls=0) as srv:
        params = setup(tmp_path, srv.url, provider)
        srv.hold_batches = True
        env = {**os.environ, "PYTHONPATH": str(ROOT)}
        proc = subprocess.Popen([sys.executable, "-m", "mirage", *cli(params)], env=env, cwd=tmp_path,
                                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        try:
            deadline = time.monotonic() + 60
            while not any(n >= 3 for n in srv.polls.values()):
                assert proc.poll() is None and time.monotonic() < deadline, "run ended before polling its batch"
                time.sleep(0.02)
        finally:
            proc.send_signal(signal.SIGKILL)
            proc.wait()
        (batch_id,) = srv.batches
        assert state_files(tmp_path) == [f"{provider}-{batch_id}.json"]  # recorded before polling
        assert srv.total == 0 and not Store.open(tmp_path / "gen/fake/store").done
        srv.hold_batches = False
        polls = srv.polls[batch_id]
        invoke(params, "C2")  # another condition leaves the C1 batch alone
        assert len(srv.batches) == 2 and srv.polls[batch_id] == polls
        assert f"{provider}-{batch_id}.json" in state_files(tmp_path)
        assert "sent 12 call(s)" in invoke(params)
        assert len(srv.batches) == 2 and srv.polls[batch_id] > polls  # re-polled, nothing bought again
        assert srv.total == 12 + 8 and list(srv.executed.values()) == [1] * 20
        assert len(check_views(tmp_path, srv, provider)) == 12
        assert all(name.endswith(".ingested") for name in state_files(tmp_path))


@pytest.mark.parametrize("provider", PROVIDERS)
def test_a_per_request_server_error_waits_and_the_next_run_resubmits_only_it(tmp_path, provider):
    """A provider's failure inside a batch uses up no attempt: the job stores what succeeded, stops with the cause
    and exits 1; the next run sends only the waiting key."""
    with FakeServer(batch_polls=1) as srv:
        params = setup(tmp_path, srv.url, provider)
        srv.batch_errors = 1
        res = CliRunner().invoke(generate, cli(params)[1:])
        assert res.exit_code == 1 and "(1 failed)" in res.output and "error: stopped: the server kept failing" in res.output
        assert "1 of 12 sample(s) wait" in res.output
        (first,) = srv.batches
        store = Store.open(tmp_path / "gen/fake/store")
        (bad,) = [r["custom_id"] for r in srv.batch_inputs[first] if r["custom_id"] not in store.done]
        assert len(store.done) == 11 and not store.failed and not store.attempts
        assert not (tmp_path / "gen/fake/store/full/C1.manifest.json").exists()  # an incomplete job leaves no marker
        assert "(0 failed)" in invoke(params) and len(srv.batches) == 2
        second = next(b for b in srv.batches if b != first)
        assert [r["custom_id"] for r in srv.batch_inputs[second]] == [bad]  # only the waiting key is resubmitted
        assert srv.total == 13 and sorted(srv.executed.values()) == [1] * 11 + [2]
        assert (tmp_path / "gen/fake/store/full/C1.manifest.json").exists()


@pytest.mark.parametrize("provider", PROVIDERS)
def test_a_rejected_request_is_recorded_and_retried_within_the_run(tmp_path, provider):
    with FakeServer(batch_polls=1) as srv:
        params = setup(tmp_path, srv.url, provider)
        srv.batch_errors, srv.batch_error_status = 1, 400
        out = invoke(params)
        assert "(0 failed)" in out and len(srv.batches) == 2 and srv.total == 13
        store = Store.open(tmp_path / "gen/fake/store")
        (bad,) = store.attempts
        assert store.attempts[bad] == 1 and bad in store.done
        check_views(tmp_path, srv, provider)


@pytest.mark.parametrize("provider", PROVIDERS)
def test_large_job_is_split_into_batches_within_limits(tmp_path, provider, monkeypatch):
    monkeypatch.setattr(JOBS[provider], "max_requests", 5)
    with FakeServer(batch_polls=0) as srv:
        params = setup(tmp_path, srv.url, provider)
        assert "sent 12 call(s)" in invoke(params)
        assert sorted(len(reqs) for reqs in srv.batch_inputs.values()) == [2, 5, 5]
        assert srv.total == 12 and list(srv.executed.values()) == [1] * 12
        assert len(check_views(tmp_path, srv, provider)) == 12
        assert len(state_files(tmp_path)) == 3 and all(n.endswith(".ingested") for n in state_files(tmp_path))


def test_openai_batches_stay_within_the_enqueued_token_limit(tmp_path):
    """A job larger than the account's enqueued-token limit goes out in parts, each submitted only when the batches
    in flight leave room: the server (which fails a batch past its limit whole, as OpenAI does) never fails one."""
    rows = request_rows(6, "C1")
    cost = max(input_bound(r["messages"]) for r in rows) + 256  # the client's estimate of one request (C1: 256)
    limit = 3 * cost
    with FakeServer(batch_polls=1) as srv:
        srv.enqueued_limit = limit
        params = setup(tmp_path, srv.url, "openai", batch_enqueued_tokens=limit)
        assert "sent 12 call(s)" in invoke(params)
        assert all(b["status"] == "completed" for b in srv.batches.values())
        assert len(srv.batches) >= 4 and 0 < srv.peak_enqueued <= limit
        assert len(check_views(tmp_path, srv, "openai")) == 12


def test_a_batch_past_the_enqueued_token_limit_stops_the_run_and_waits(tmp_path):
    """Told a larger limit than the account has, the run learns it from the failed batch: an outage (nothing
    counted against the samples), no further part submitted, and the rerun within the true limit completes."""
    with FakeServer(batch_polls=1) as srv:
        srv.enqueued_limit = 1000
        params = setup(tmp_path, srv.url, "openai", batch_enqueued_tokens=10**6)
        res = CliRunner().invoke(generate, cli(params)[1:])
        assert res.exit_code == 1 and "Enqueued token limit reached" in res.output
        assert len(srv.batches) == 1 and "12 of 12 sample(s) wait" in res.output
        store = Store.open(tmp_path / "gen/fake/store")
        assert not store.done and not store.attempts
