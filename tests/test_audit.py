"""`mirage audit` against a real local OpenAI-protocol server: no params.yaml edit, the same stages and store."""

from __future__ import annotations

import json

from click.testing import CliRunner

from mirage.audit import audit, ephemeral_spec
from mirage.io import write_jsonl
from tests.generate.conftest import request_rows
from tests.generate.fake_server import FakeServer


def test_ephemeral_name_changes_with_everything_that_matters():
    a, _ = ephemeral_spec("openai:m", "http://127.0.0.1:1/v1", None, None, "chat", None)
    assert a == ephemeral_spec("openai:m", "http://127.0.0.1:1/v1", None, None, "chat", None)[0]
    for other in (ephemeral_spec("openai:m", "http://127.0.0.1:2/v1", None, None, "chat", None),
                  ephemeral_spec("openai:m", "http://127.0.0.1:1/v1", "m-2026", None, "chat", None),
                  ephemeral_spec("openai:m", "http://127.0.0.1:1/v1", None, None, "completion", None),
                  ephemeral_spec("openai:n", "http://127.0.0.1:1/v1", None, None, "chat", None)):
        assert other[0] != a


def test_audit_runs_every_stage_through_the_store_and_ends_with_the_report(tmp_path, root):
    req = tmp_path / "requests"
    for cond, n, m4 in (("C1", 10, 0), ("C2", 10, 0), ("C3", 10, 3)):
        rows = request_rows(n, cond, m4_every=m4)
        for r in rows:
            r["harness"] = "H1" if cond == "C3" else None
        write_jsonl(req / f"{cond}.jsonl", rows)
    params = tmp_path / "params.yaml"
    params.write_text("slices:\n  demo:\n    models: []\n    n_samples: 2\nmetrics:\n  n_boot: 200\n  n_perm: 200\n")
    with FakeServer() as srv:
        args = ["--model", "openai:fake-model", "--base-url", srv.url + "/v1", "--slice", "demo", "--limit", "3",
                "--requests-dir", str(req), "--store", str(tmp_path / "store"), "--out-dir", str(tmp_path / "audit"),
                "--params", str(params)]
        res = CliRunner().invoke(audit, args)
        assert res.exit_code == 0, res.output
        sent = srv.total
        assert sent > 0 and (tmp_path / "audit" / "report" / "index.html").exists()
        assert f"report: {tmp_path / 'audit' / 'report' / 'index.html'}" in res.output
        labels = [json.loads(line) for line in (tmp_path / "audit" / "labels.jsonl").read_text().splitlines()]
        assert {r["condition"] for r in labels} == {"C1", "C2", "C3"} and all(r["model"].startswith("audit-openai-fake-model-") for r in labels)
        assert params.read_text().count("models: []") == 1, "the user's params.yaml is never edited"
        again = CliRunner().invoke(audit, args)
        assert again.exit_code == 0 and srv.total == sent, "a repeated audit is served from the store"


def test_audit_without_the_key_it_needs_is_refused_before_anything_is_sent(tmp_path, monkeypatch):
    """Readiness in `mirage audit` (issue 24): a model with an unset key variable and an empty store stops before the
    first condition, naming the model, the missing samples and the key; nothing reaches the server."""
    monkeypatch.delenv("AUDIT_TEST_KEY", raising=False)
    req = tmp_path / "requests"
    for cond in ("C1", "C2", "C3"):
        write_jsonl(req / f"{cond}.jsonl", request_rows(4, cond))
    params = tmp_path / "params.yaml"
    params.write_text("slices:\n  demo:\n    models: []\n    n_samples: 2\n")
    with FakeServer() as srv:
        res = CliRunner().invoke(audit, ["--model", "openai:fake-model", "--base-url", srv.url + "/v1", "--api-key-env",
                                         "AUDIT_TEST_KEY", "--slice", "demo", "--requests-dir", str(req), "--store",
                                         str(tmp_path / "store"), "--out-dir", str(tmp_path / "audit"), "--params", str(params)])
        assert res.exit_code == 1, res.output
        assert "would have to send requests they cannot send" in res.output and "set AUDIT_TEST_KEY" in res.output
        assert "on demo: 12 of 12 samples missing from its store (C1 4/4, C2 4/4, C3 4/4)" in res.output
        assert srv.total == 0 and not (tmp_path / "audit" / "labels.jsonl").exists()


def _requests(req):
    for cond in ("C1", "C2", "C3"):
        rows = request_rows(4, cond)
        for r in rows:
            r["harness"] = "H1" if cond == "C3" else None
        write_jsonl(req / f"{cond}.jsonl", rows)


def test_audit_against_a_server_that_streams_as_llama_cpp_python_does(tmp_path):
    """A server that cuts streams and leaves out their usage (llama-cpp-python's): `mirage audit` with nothing but
    --base-url drops streaming by itself and every call succeeds (issue 35: 40 of 40 C1 calls used to fail)."""
    _requests(tmp_path / "requests")
    params = tmp_path / "params.yaml"
    params.write_text("slices:\n  demo:\n    models: []\n    n_samples: 2\nmetrics:\n  n_boot: 100\n  n_perm: 100\n")
    with FakeServer() as srv:
        srv.stream_usage, srv.cut_streams = False, True
        res = CliRunner().invoke(audit, ["--model", "openai:llama-like", "--base-url", srv.url + "/v1", "--slice", "demo",
                                         "--requests-dir", str(tmp_path / "requests"), "--store", str(tmp_path / "store"),
                                         "--out-dir", str(tmp_path / "audit"), "--params", str(params)])
        assert res.exit_code == 0, res.output
        assert 1 <= res.output.count("sending it plain (non-streamed) requests") <= 3  # at most once per job
    views = [json.loads(line) for f in (tmp_path / "audit" / "views").rglob("*.jsonl") for line in f.read_text().splitlines()]
    assert len(views) == 3 * 2 * 2 and all(v["error"] is None and v["tokens_out"] == 3 for v in views)


def test_server_kind_and_stream_options(tmp_path):
    """--server-kind llama.cpp sends the neutral sampler values (and names the model apart); --no-stream sends
    plain requests from the first call on and leaves the name alone (an operational setting)."""
    plain, _ = ephemeral_spec("openai:m", "http://127.0.0.1:1/v1", None, None, "chat", None)
    kind, spec = ephemeral_spec("openai:m", "http://127.0.0.1:1/v1", None, None, "chat", None, "llama.cpp")
    assert kind != plain and spec.sampling_extra["top_k"] == 0 and not spec.streams
    assert ephemeral_spec("openai:m", "http://127.0.0.1:1/v1", None, None, "chat", None, stream=False)[0] == plain
    _requests(tmp_path / "requests")
    params = tmp_path / "params.yaml"
    params.write_text("slices:\n  demo:\n    models: []\n    n_samples: 1\nmetrics:\n  n_boot: 100\n  n_perm: 100\n")
    with FakeServer() as srv:
        srv.stream_usage, srv.cut_streams = False, True
        bodies = []
        srv.count = lambda body, count=srv.count: bodies.append(body) or count(body)
        res = CliRunner().invoke(audit, ["--model", "openai:llama-like", "--base-url", srv.url + "/v1", "--server-kind",
                                         "llama.cpp", "--stream", "--limit", "2", "--slice", "demo", "--requests-dir",
                                         str(tmp_path / "requests"), "--store", str(tmp_path / "store"), "--out-dir",
                                         str(tmp_path / "audit"), "--params", str(params)])
        assert res.exit_code == 0, res.output
    assert bodies and all(b["top_k"] == 0 and b["repeat_penalty"] == 1.0 for b in bodies)
    assert bodies[0].get("stream") is True and not bodies[-1].get("stream")  # --stream tried, then dropped
    res = CliRunner().invoke(audit, ["--model", "vllm:m", "--server-kind", "llama.cpp"])
    assert res.exit_code == 2 and "server_kind describes OpenAI-compatible servers only" in res.output
