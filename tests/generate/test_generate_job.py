"""The generation job's contract with the workflow: failures exit non-zero and are retried next run, debug
options never write the pipeline's declared outputs, a requests file of another condition is refused, and the
console shows the log path and live progress."""

from __future__ import annotations

from click.testing import CliRunner

from mirage.generate.cli import generate
from mirage.generate.store import Store
from mirage.io import write_jsonl
from tests.generate.conftest import gen_paths, read_views, request_rows, write_params
from tests.generate.fake_server import FakeServer


def params_for(tmp_path, url, **generate):
    return write_params(tmp_path / "params.yaml", {"fake": {
        "provider": "openai", "model_id": "fake-model", "revision": "fake-2025-01-01", "base_url": url + "/v1",
        "max_concurrency": 2, "max_retries": 0, "timeout_s": 5}}, n_samples=1, **generate)


def invoke(params, tmp_path, *extra):
    return CliRunner().invoke(generate, ["--model", "fake", "--slice", "full", "--condition", "C1", "--params", str(params),
                                         *gen_paths(tmp_path, "C1"), *extra])


def test_failures_exit_1_until_stored_then_the_next_run_sends_only_them(tmp_path):
    write_jsonl(tmp_path / "requests" / "C1.jsonl", request_rows(6, "C1"))
    with FakeServer() as srv:
        params = params_for(tmp_path, srv.url, retry_rounds=0, max_attempts=3)
        srv.faults = ["malformed", "malformed"]  # empty `choices` bodies: the model's failed calls
        res = invoke(params, tmp_path)
        assert res.exit_code == 1 and "2 of 6 sample(s) still failing" in res.output
        assert not (tmp_path / "gen/fake/store/full/C1.manifest.json").exists()
        res = invoke(params, tmp_path)
        assert res.exit_code == 0 and "sent 2 call(s)" in res.output and srv.total == 8
        assert (tmp_path / "gen/fake/store/full/C1.manifest.json").exists()


def test_a_server_error_stops_the_run_without_using_an_attempt_and_the_rerun_sends_what_waits(tmp_path):
    write_jsonl(tmp_path / "requests" / "C1.jsonl", request_rows(6, "C1"))
    with FakeServer() as srv:
        params = params_for(tmp_path, srv.url, retry_rounds=0, max_attempts=1)
        srv.faults = ["500", "malformed"]  # a 5xx (an outage) and an empty `choices` body (the model's)
        res = invoke(params, tmp_path)
        assert res.exit_code == 1 and "error: stopped: the server kept failing" in res.output
        with Store.open(tmp_path / "gen/fake/store") as store:
            stored, (given_up,) = len(store.done), store.failed
        assert store.attempts == {given_up: 1} and stored == srv.total - 2  # calls that slipped in before the 500
        waiting = 6 - stored - 1
        assert f"{waiting} of 6 sample(s) wait" in res.output
        res = invoke(params, tmp_path)  # the 500's sample is sent again although max_attempts is 1
        assert res.exit_code == 0 and f"sent {waiting} call(s)" in res.output and "gave up on 1 call(s)" in res.output
        assert srv.total == stored + 2 + waiting


def test_retry_rounds_fix_transient_faults_within_one_run(tmp_path):
    write_jsonl(tmp_path / "requests" / "C1.jsonl", request_rows(6, "C1"))
    with FakeServer() as srv:
        srv.faults = ["malformed", "malformed", "malformed"]
        res = invoke(params_for(tmp_path, srv.url, retry_rounds=2), tmp_path)
        assert res.exit_code == 0 and "(0 failed)" in res.output


def test_a_call_failing_max_attempts_times_is_given_up_and_the_job_succeeds(tmp_path):
    write_jsonl(tmp_path / "requests" / "C1.jsonl", request_rows(1, "C1"))
    with FakeServer() as srv:
        params = params_for(tmp_path, srv.url, retry_rounds=1, max_attempts=2)
        srv.faults = ["malformed"] * 10
        res = invoke(params, tmp_path)
        assert res.exit_code == 0 and "gave up on 1 call(s) after 2 attempts" in res.output
        (row,) = read_views(tmp_path / "gen", "fake", "full", "C1")
        assert row["error"] and srv.total == 2


def test_limit_writes_beside_the_pipeline_views_and_never_over_them(tmp_path):
    write_jsonl(tmp_path / "requests" / "C1.jsonl", request_rows(10, "C1"))
    with FakeServer() as srv:
        params = params_for(tmp_path, srv.url)
        assert invoke(params, tmp_path).exit_code == 0
        full = read_views(tmp_path / "gen", "fake", "full", "C1")
        res = CliRunner().invoke(generate, ["--model", "fake", "--slice", "full", "--condition", "C1", "--params", str(params),
                                            "--requests", str(tmp_path / "requests" / "C1.jsonl"),
                                            "--store", str(tmp_path / "gen/fake/store"), "--limit", "3"])
        assert res.exit_code == 0, res.output
        assert read_views(tmp_path / "gen", "fake", "full", "C1") == full  # the declared views are untouched
        assert "debug/full-limit3/C1" in res.output
        bad = invoke(params, tmp_path, "--limit", "-1")
        assert bad.exit_code == 2 and "-1" in bad.output


def test_a_requests_file_of_another_condition_is_refused(tmp_path):
    write_jsonl(tmp_path / "requests" / "C1.jsonl", request_rows(4, "C2"))
    with FakeServer() as srv:
        res = invoke(params_for(tmp_path, srv.url), tmp_path)
        assert res.exit_code == 1 and "C1.jsonl:1: field condition: 'C2', but this run is for C1" in res.output
        assert srv.total == 0 and not (tmp_path / "gen/fake/full/C1").exists()


def test_console_shows_the_log_path_then_progress_and_the_log_keeps_every_message(tmp_path):
    write_jsonl(tmp_path / "requests" / "C1.jsonl", request_rows(8, "C1"))
    log = tmp_path / "logs" / "C1.log"
    with FakeServer() as srv:
        res = invoke(params_for(tmp_path, srv.url), tmp_path, "--log", str(log))
    assert res.exit_code == 0
    assert res.output.splitlines()[0] == f"log: {log}"
    assert "8 request rows -> 8 requests -> 8 samples -> 8 calls; 0 already in the store, 8 to send" in res.output
    assert "8/8" in res.output and "tok/s" in res.output  # the progress bar with its throughput
    text = log.read_text()
    assert "to send" in text and "sent 8 call(s)" in text and "8/8" not in text  # the log holds messages, not the bar
