"""The paper's protocol for real audits (issue 31 item 4): the judge is a per-slice setting (lite and full default to
an LLM judge, the demo keeps the offline one); the LLM judge answers through its completion store, partition
`judge-SLICE`, so a run without its key labels from stored replies and sends nothing; one that lacks replies is
refused before any call, naming the judge's model and how many judge calls are missing; `mirage estimate` counts them."""

from __future__ import annotations

import datetime as dt
import shutil
from pathlib import Path

import pytest
import yaml
from click.testing import CliRunner

from mirage import artefacts
from mirage.config.slices import LLM_JUDGE
from mirage.estimate import build_estimate
from mirage.generate.readiness import NotReady
from mirage.io import write_jsonl
from mirage.judges.cli import judge
from mirage.label.cli import label
from mirage.params import ParamsError, load_params, validate_params
from mirage.protocol import DEFAULT_JUDGE
from mirage.readiness import check_slice
from tests.generate.fake_server import FakeServer

KEY = "MIRAGE_TEST_JUDGE_KEY"
TODAY = dt.date(2026, 11, 23)


def test_the_judge_is_a_per_slice_setting_validated_by_name():
    params = load_params("params.yaml")
    assert params.judge_of("demo") == params.label.judge == DEFAULT_JUDGE, "the demo keeps the offline judge"
    assert params.judge_of("lite") == params.judge_of("full") == LLM_JUDGE
    assert params.judge_of("test") == params.label.judge, "the leaderboard's split: the judge its verifier recomputes with"
    spec = params.models[LLM_JUDGE]
    assert spec.provider == "openai" and spec.pinned and spec.api_key_env == "OPENAI_API_KEY", "a pinned current snapshot"
    assert validate_params({"slices": {"lite": {}}}).judge_of("lite") == LLM_JUDGE, "left out: the LLM judge"
    assert validate_params({"slices": {"lite": {"judge": None}}}).judge_of("lite") == DEFAULT_JUDGE, "null: label.judge"
    assert validate_params({"slices": {"full": {"judge": "jury:gpt-4o,gpt-4.1"}}}).judge_of("full") == "jury:gpt-4o,gpt-4.1"
    assert validate_params({"slices": {"demo": {"judge": "lexicon-v1"}}}).judge_of("demo") == "lexicon-v1"
    for bad, words in ((("no-such-model"), "slices.lite.judge: unknown model(s) no-such-model"),
                       ("jury:gpt-4.1", "slices.lite.judge: judge 'jury:gpt-4.1': a jury needs >= 2 members"),
                       (["gpt-4.1", "nope"], "slices.lite.judge: unknown model(s) nope"), ("../x", "slices.lite.judge")):
        with pytest.raises(ParamsError) as err:
            validate_params({"slices": {"lite": {"judge": bad}}}, "p.yaml")
        assert words in str(err.value) and str(err.value).startswith("p.yaml"), err.value


VIEW_BASE = {"prompt_id": "p", "base_id": "b", "template": "T1", "harness": None, "focal": True, "language": "en",
             "rag_pool": "none", "mitigation": "none", "lite": True, "split": "dev", "sample_index": 0, "reasoning": None,
             "error": None, "finish_reason": "stop"}


def _project(root: Path, url: str, texts: list[str]) -> None:
    """A project folder: params with a keyed LLM judge behind the local server as the demo's judge, and the views of one
    generating model (one shard per condition) holding `texts` as C1 answers."""
    params = {
        "render": {"rag": {"conditions": []}, "mitigations": {"which": [], "conditions": []}},
        "models": {"gen": {"provider": "openai", "model_id": "g", "revision": "g-2025", "base_url": url + "/v1"},
                   "judge-api": {"provider": "openai", "model_id": "j", "revision": "j-2025-01-01", "base_url": url + "/v1",
                                 "api_key_env": KEY, "max_retries": 0, "price_in_per_mtok": 2.0, "price_out_per_mtok": 8.0}},
        "slices": {"demo": {"models": ["gen"], "n_samples": 1, "judge": "judge-api"}},
    }
    (root / "params.yaml").write_text(yaml.safe_dump(params), encoding="utf-8")
    p = load_params(root / "params.yaml")
    for path in artefacts.views(p.render, "gen", "demo"):
        cond = Path(path).parent.name
        rows = [{**VIEW_BASE, "key": f"k{cond}{i}", "row_id": f"q{i}", "request_id": f"r{cond}{i}", "identity": "muslim",
                 "condition": cond, "model": "gen", "text": t, "answer": t} for i, t in enumerate(texts)] if cond == "C1" else []
        write_jsonl(root / path, rows)


def _label(root: Path):
    return CliRunner().invoke(label, ["--model", "gen", "--slice", "demo", "--params", str(root / "params.yaml"),
                                      "--out", str(root / "labels.jsonl")])


def _data(root: Path, tmp_path: Path) -> None:
    """The project's data folder, each gold set cut to its first rows."""
    shutil.copytree(root / artefacts.DATA, tmp_path / artefacts.DATA, ignore=shutil.ignore_patterns("judge"))
    for path in artefacts.judge_gold_sets():
        (tmp_path / path).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / path).write_text("".join((root / path).read_text(encoding="utf-8").splitlines(keepends=True)[:2]),
                                     encoding="utf-8")


def _judge_eval():
    return CliRunner().invoke(judge, ["eval", "--judge", "judge-api", "--params", "params.yaml", "--out", "eval"])


def test_stored_judge_replies_label_without_a_key_and_a_missing_reply_is_refused(root, tmp_path, monkeypatch):
    _data(root, tmp_path)
    monkeypatch.chdir(tmp_path)
    texts = ["He opened the bakery at dawn.", "She thanked the neighbours.", "They planted a garden."]
    with FakeServer() as srv:
        _project(tmp_path, srv.url, texts)
        monkeypatch.setenv(KEY, "k" * 20)
        res = _label(tmp_path)
        assert res.exit_code == 0, res.output
        assert srv.total == len(texts) and "(judge-api)" in res.output
        res = _judge_eval()  # the judge stage: the gold sets, through the same store (partition `judge`)
        assert res.exit_code == 0, res.output
        sent = srv.total
        partition = tmp_path / artefacts.store_partition("judge-api", artefacts.judge_partition("demo"))
        assert list(partition.glob("*.jsonl")), "the judge's replies are in the slice's partition (what a release carries)"

        monkeypatch.delenv(KEY)
        params = load_params("params.yaml")
        (need,) = [n for n in check_slice(params, ["gen"], "demo", judges=True, today=TODAY, environ={}) if n.name == "judge judge-api"]
        gold = need.by_condition["gold sets"][1]
        assert need.by_condition == {"gold sets": (0, gold), "label": (0, len(texts))} and not need.refused
        assert gold == sent - len(texts), "every gold-set call counted (the warm-up included)"
        assert _judge_eval().exit_code == 0 and srv.total == sent, "remeasured from the store without a key"
        first = (tmp_path / "labels.jsonl").read_bytes()
        res = _label(tmp_path)
        assert res.exit_code == 0, res.output
        assert srv.total == sent and (tmp_path / "labels.jsonl").read_bytes() == first, "relabelled from the store, no request"
        rows = {r["condition"]: r for r in build_estimate(params, "demo", ["gen"], "requests", {}, environ={}, today=TODAY)["rows"]}
        j = rows["judge"]
        assert (j["model"], j["status"], j["stored"], j["to_send"], j["api_cost_usd"]) == ("judge-api", "cached", 3, 0, 0.0)

        _project(tmp_path, srv.url, [*texts, "He answered the phone."])  # a new sample: its judge call is not stored
        params = load_params("params.yaml")
        with pytest.raises(NotReady) as err:
            check_slice(params, ["gen"], "demo", judges=True, today=TODAY, environ={})
        msg = str(err.value)
        assert "1 model(s) would have to send requests they cannot send" in msg
        assert f"judge judge-api on demo: 1 of {gold + len(texts) + 1} judge calls missing from its store (label 1/4)" in msg
        assert f"set the environment variable {KEY}" in msg and "dvc pull --with-deps demo" in msg
        rows = {r["condition"]: r for r in build_estimate(params, "demo", ["gen"], "requests", {}, environ={}, today=TODAY)["rows"]}
        j = rows["judge"]
        assert (j["status"], j["stored"], j["to_send"], j["tokens_out"]) == ("needs key", 3, 1, params.label.judge_max_tokens)
        assert j["api_cost_usd"] > 0
        whole = build_estimate(params, "demo", ["gen"], "requests", {}, whole_slice=True)
        assert {r["condition"]: r for r in whole["rows"]}["judge"]["calls"] >= 1 and "judge" in whole["assumptions"]
        res = _label(tmp_path)
        assert res.exit_code != 0 and "judge-api" in res.output and KEY in res.output, res.output
        assert srv.total == sent, "refused before any call"
