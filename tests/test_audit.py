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
