"""Readiness is judged on what a run must send (issue 24 item 1): a model whose store holds every sample runs without
a key and even when retired; one that must send and cannot is refused before any call, naming what it lacks."""

from __future__ import annotations

import datetime as dt
import json
import re

import pytest
from click.testing import CliRunner

from mirage.config.generate import HUB_REVISIONS, UNPINNED, default_models
from mirage.estimate import estimate
from mirage.generate.cli import generate
from mirage.generate.readiness import NEEDS_KEY, RETIRED, NotReady, send_blockers
from mirage.generate.readiness import UNPINNED as NOT_PINNED
from mirage.params import load_params
from mirage.readiness import check_slice
from tests.generate.conftest import gen_paths, read_views, write_params
from tests.generate.fake_server import FakeServer

TODAY = dt.date(2026, 11, 23)
KEYS = {"OPENAI_API_KEY": "sk-x" * 4, "ANTHROPIC_API_KEY": "sk-y" * 4, "GEMINI_API_KEY": "g" * 16}


def test_open_models_are_pinned_to_full_commit_shas():
    models = default_models()
    for name, spec in models.items():
        if spec.provider == "vllm":
            assert re.fullmatch(r"[0-9a-f]{40}", spec.revision), name
            assert spec.revision == HUB_REVISIONS[spec.model_id]
    assert load_params("params.yaml").models == models, "params.yaml and default_models() agree"


def test_model_sets_keep_the_paper_six_and_name_a_successor_for_each():
    params = load_params("params.yaml")
    paper, current = params.model_sets["paper"], params.model_sets["current"]
    assert params.slices.lite.models == params.slices.full.models == paper and params.model_set_of("lite") == "paper"
    assert params.model_set_of("demo") is None
    assert len(paper) == len(current) == 6 and not set(paper) & set(current)
    providers = [params.models[m].provider for m in paper]
    assert [params.models[m].provider for m in current] == providers, "one successor per paper model, same provider"
    assert all(params.models[m].pinned for m in [*paper, *current])
    assert load_params("params.yaml", model_set="current").slices.lite.models == current


def test_send_blockers_retired_unpinned_keyless():
    models = default_models()
    opus = models["claude-opus-4"]
    assert send_blockers("claude-opus-4", opus, dt.date(2026, 6, 14), KEYS) == {}
    assert set(send_blockers("claude-opus-4", opus, dt.date(2026, 6, 15), KEYS)) == {RETIRED}
    assert "2026-06-15" in send_blockers("claude-opus-4", opus, dt.date(2026, 6, 15), {})[RETIRED]
    assert send_blockers("gpt-4o", models["gpt-4o"], TODAY, KEYS) == {}
    assert set(send_blockers("gpt-4o", models["gpt-4o"], dt.date(2027, 1, 14), KEYS)) == {RETIRED}
    unpinned = models["llama-3.3-70b"].model_copy(update={"revision": UNPINNED})
    assert set(send_blockers("llama", unpinned, TODAY, {})) == {NOT_PINNED}
    assert send_blockers("llama", unpinned.model_copy(update={"allow_unpinned": True}), TODAY, {}) == {}
    assert "OPENAI_API_KEY" in send_blockers("gpt-4o", models["gpt-4o"], TODAY, {})[NEEDS_KEY]
    assert send_blockers("gpt-4o", models["gpt-4o"], TODAY, {"OPENAI_API_KEY": "  "}), "a blank key is no key"
    official = models["gpt-4o"].model_copy(update={"api_key_env": None})
    assert "api_key_env" in send_blockers("gpt-4o", official, TODAY, KEYS)[NEEDS_KEY], "the official endpoint needs a key"
    local_server = official.model_copy(update={"base_url": "http://127.0.0.1:8000/v1"})
    assert send_blockers("srv", local_server, TODAY, {}) == {}, "a local OpenAI-compatible server needs none"
    assert send_blockers("smollm2-135m", models["smollm2-135m"], TODAY, {}) == {}


def _registry(url: str) -> dict:
    """A keyed API model and a retired one, both behind the local fake server."""
    return {
        "keyed": {"provider": "openai", "model_id": "m", "revision": "m-2025", "base_url": url + "/v1",
                  "api_key_env": "MIRAGE_TEST_KEY", "max_retries": 0},
        "old": {"provider": "openai", "model_id": "o", "revision": "o-2024", "base_url": url + "/v1", "retires": "2030-01-01",
                "max_retries": 0},
    }


def _generate(tmp_path, params, model: str, condition: str = "C3"):
    return CliRunner().invoke(generate, ["--model", model, "--slice", "demo", "--condition", condition,
                                         *gen_paths(tmp_path, condition, model, "demo"), "--params", str(params)])


def test_a_stored_model_runs_without_key_or_when_retired_and_a_missing_sample_is_refused(tmp_path, requests_dir, monkeypatch):
    """The reviewer's path in one process: completions made while the model could send; then, with no key and the
    snapshot retired, the same job sends nothing; one sample deleted from the store: refused before any call."""
    monkeypatch.setenv("MIRAGE_TEST_KEY", "k" * 20)
    with FakeServer() as srv:
        params = write_params(tmp_path / "params.yaml", _registry(srv.url))
        for model in ("keyed", "old"):
            for c in ("C1", "C3"):
                res = _generate(tmp_path, params, model, c)
                assert res.exit_code == 0, res.output
        sent = srv.total
        assert sent > 0
        first_views = read_views(tmp_path / "gen", "old", "demo", "C3")

        monkeypatch.delenv("MIRAGE_TEST_KEY")
        registry = _registry(srv.url)
        registry["old"]["retires"] = "2020-01-01"
        params = write_params(tmp_path / "params.yaml", registry)
        for model in ("keyed", "old"):
            res = _generate(tmp_path, params, model)
            assert res.exit_code == 0, res.output
            assert "sent 0 call(s)" in res.output
        assert srv.total == sent, "nothing reached the server"
        assert read_views(tmp_path / "gen", "old", "demo", "C3") == first_views

        # one sample deleted (record and key-index line) from each job's shard of both stores
        for model in ("old", "keyed"):
            for shard in (tmp_path / f"gen/{model}/store/demo").glob("*.jsonl"):
                for path in (shard, shard.with_suffix(".keys")):
                    path.write_bytes(b"".join(path.read_bytes().splitlines(keepends=True)[:-1]))
        for model, why in (("old", "o was retired on 2020-01-01"), ("keyed", "set the environment variable MIRAGE_TEST_KEY")):
            res = _generate(tmp_path, params, model, "C1")
            assert res.exit_code == 1, res.output
            msg = res.output
            assert f"{model} on demo: 1 of " in msg and "samples missing from its store" in msg and why in msg, msg
            assert "dvc pull --with-deps demo" in msg and "model_set=current" in msg
            assert "sent 0 call(s)" not in msg
        assert srv.total == sent, "refused before any call"


def test_check_slice_counts_missing_samples_from_the_key_index(tmp_path, requests_dir, monkeypatch):
    monkeypatch.setenv("MIRAGE_TEST_KEY", "k" * 20)
    with FakeServer() as srv:
        params_path = write_params(tmp_path / "params.yaml", _registry(srv.url))
        for c in ("C1", "C2", "C3"):
            assert _generate(tmp_path, params_path, "keyed", c).exit_code == 0
    params = load_params(params_path)
    store_of = lambda name: str(tmp_path / "gen" / name / "store")  # noqa: E731
    # with the key every model may send: nothing is counted, nothing refused
    assert all(n.by_condition is None for n in check_slice(params, ["keyed", "old"], "demo", requests_dir, store_of,
                                                          environ={"MIRAGE_TEST_KEY": "k" * 20}))
    needs = check_slice(params, ["keyed"], "demo", requests_dir, store_of, environ={})
    assert needs[0].missing == 0 and needs[0].total == (10 + 5 + 5) * 2, "demo rows of C1/C2/C3 x 2 samples"
    with pytest.raises(NotReady) as err:
        check_slice(params, ["keyed", "old"], "demo", requests_dir, store_of, environ={}, today=dt.date(2030, 1, 1))
    msg = str(err.value)
    assert msg.startswith("params.yaml: 1 model(s) would have to send requests they cannot send; nothing was started")
    assert "old on demo: 40 of 40 samples missing" in msg and "o was retired on 2030-01-01" in msg and "keyed" not in msg
    # before the requests are rendered: an empty store is refused without rendering anything; a filled one is counted
    # against the requests rendered in memory from the shipped data (this fixture store holds none of them)
    with pytest.raises(NotReady, match="old on demo: its store holds no completions"):
        check_slice(params, ["old"], "demo", tmp_path / "none", store_of, environ={}, today=dt.date(2030, 1, 1))
    with pytest.raises(NotReady) as err:
        check_slice(params, ["keyed"], "demo", tmp_path / "none", store_of, environ={})
    assert re.search(r"keyed on demo: (\d+) of \1 samples missing", str(err.value)), str(err.value)


def test_estimate_never_refuses_and_marks_each_row(tmp_path, requests_dir, monkeypatch):
    for var in ("OPENAI_API_KEY", "MIRAGE_TEST_KEY"):
        monkeypatch.delenv(var, raising=False)
    monkeypatch.setenv("MIRAGE_TEST_KEY", "k" * 20)
    with FakeServer() as srv:
        registry = {**_registry(srv.url), "gone": {"provider": "anthropic", "model_id": "c", "revision": "c-1", "retires": "2020-01-01",
                                                    "price_in_per_mtok": 1.0, "price_out_per_mtok": 1.0},
                    "official": {"provider": "openai", "model_id": "g", "revision": "g-1", "api_key_env": "NOPE_KEY",
                                 "price_in_per_mtok": 1.0, "price_out_per_mtok": 2.0}}
        params = write_params(tmp_path / "params.yaml", registry)
        assert _generate(tmp_path, params, "keyed", "C1").exit_code == 0
    out = tmp_path / "e.json"
    res = CliRunner().invoke(estimate, ["--slice", "demo", "--params", str(params), "--requests-dir", str(requests_dir),
                                        "--stores", str(tmp_path / "gen"), "--calibration", str(tmp_path / "cal.json"),
                                        "--out", str(out), *(a for m in registry for a in ("--models", m))])
    assert res.exit_code == 0, res.output
    rows = {(r["model"], r["condition"]): r for r in json.loads(out.read_text())["rows"]}
    assert rows["keyed", "C1"]["status"] == "cached" and rows["keyed", "C1"]["to_send"] == 0
    assert rows["keyed", "C1"]["tokens_out"] == 0 and rows["keyed", "C1"]["stored"] == rows["keyed", "C1"]["calls"]
    assert rows["keyed", "C2"]["status"] == "sendable" and rows["keyed", "C2"]["to_send"] == rows["keyed", "C2"]["calls"]
    assert rows["gone", "C1"]["status"] == "retired: release only" and rows["gone", "C1"]["api_cost_usd"] is None
    assert rows["official", "C1"]["status"] == "needs key" and rows["official", "C1"]["api_cost_usd"] > 0
    for word in ("cached", "sendable", "needs key", "retired: release only"):
        assert word in res.output
    whole = CliRunner().invoke(estimate, ["--slice", "demo", "--params", str(params), "--requests-dir", str(requests_dir),
                                          "--stores", str(tmp_path / "gen"), "--calibration", str(tmp_path / "cal.json"),
                                          "--whole-slice", "--models", "keyed", "--out", str(out)])
    assert whole.exit_code == 0, whole.output
    row = json.loads(out.read_text())["rows"][0]
    assert row["status"] is None and row["to_send"] == row["calls"] and row["tokens_out"] > 0


def test_shipped_slices_estimate_without_keys(tmp_path, requests_dir, monkeypatch):
    """`mirage estimate --slice lite|full` on the shipped params with no key set: exit 0, all six paper models listed."""
    for var in ("OPENAI_API_KEY", "ANTHROPIC_API_KEY", "GEMINI_API_KEY"):
        monkeypatch.delenv(var, raising=False)
    for slice_name in ("lite", "full"):
        out = tmp_path / f"{slice_name}.json"
        res = CliRunner().invoke(estimate, ["--slice", slice_name, "--requests-dir", str(requests_dir), "--stores", str(tmp_path),
                                            "--calibration", str(tmp_path / "cal.json"), "--out", str(out)])
        assert res.exit_code == 0, res.output
        rows = json.loads(out.read_text())["rows"]
        statuses = {r["model"]: r["status"] for r in rows}
        assert statuses == {"gpt-4o": "needs key", "claude-opus-4": "retired: release only",
                            "gemini-1.5-pro": "retired: release only", "llama-3.3-70b": "sendable", "qwen2.5-72b": "sendable",
                            "deepseek-v3": "sendable", "gpt-4.1": "needs key"}  # the last: the LLM judge (slices.SLICE.judge)
        judge = next(r for r in rows if r["model"] == "gpt-4.1")
        assert judge["condition"] == "judge" and judge["to_send"] == judge["calls"] > 0 and judge["api_cost_usd"] > 0
