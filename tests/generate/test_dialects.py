"""Each provider's dialect (mirage/config/dialects.py): request shapes checked against the official SDKs'
own request types, and runs against a real local server that answers as the endpoints do (Gemini's 400 on `seed`,
replies whose thinking spent the budget, empty answers, Anthropic's 400 on an empty turn, `x-should-retry`)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner
from pydantic import TypeAdapter

from mirage.config.dialects import ANTHROPIC, GEMINI, dialect_for, gemini_reasoning
from mirage.config.generate import ModelSpec, default_models
from mirage.generate.cli import generate
from mirage.generate.providers.anthropic import AnthropicProvider
from mirage.generate.providers.base import Sample
from mirage.generate.providers.openai import OpenAIProvider
from mirage.generate.providers.openai_batch import OpenAIBatch
from mirage.generate.runner import EMPTY_FIRST_TURN, GenerationRun, Settings
from mirage.generate.store import Store
from mirage.io import write_jsonl
from tests.generate.conftest import gen_paths, read_views, request_rows, write_params
from tests.generate.fake_server import FakeServer

openai_chat = pytest.importorskip("openai.types.chat.completion_create_params")
openai_text = pytest.importorskip("openai.types.completion_create_params")
anthropic_params = pytest.importorskip("anthropic.types.message_create_params")

S = Sample(key="k", sample_index=0, seed=42, max_tokens=32, temperature=0.7, top_p=0.9,
           messages=({"role": "system", "content": "Be fair."}, {"role": "user", "content": "Decide."}), prompt="Decide.")


def typed(params_type: type, body: dict) -> dict:
    """`body` validated against an SDK request TypedDict: every field it declares has the declared type (messages
    included), and no field it does not declare is sent."""
    keys = params_type.__required_keys__ | params_type.__optional_keys__
    assert set(body) <= keys, f"fields the SDK does not know: {sorted(set(body) - keys)}"
    out = TypeAdapter(params_type).validate_python(body)
    if "messages" in out:
        out["messages"] = list(out["messages"])  # pydantic validates iterables as they are read
    return out


def gemini_spec(url: str = "https://generativelanguage.googleapis.com/v1beta/openai/", **kw) -> ModelSpec:
    return ModelSpec(**{"provider": "openai", "model_id": "gemini-3.5-flash", "revision": "gemini-3.5-flash",
                        "base_url": url, "stream": False, "max_retries": 2, "timeout_s": 5, **kw})


@pytest.mark.parametrize("name", ["gpt-4o", "gpt-4.1", "gemini-1.5-pro", "gemini-3.5-flash"])
def test_openai_and_gemini_bodies_are_valid_sdk_requests(name):
    spec = default_models()[name]
    p = OpenAIProvider.__new__(OpenAIProvider)  # the body needs no key
    p.spec, p.dialect = spec, dialect_for(spec)
    body = typed(openai_chat.CompletionCreateParamsNonStreaming, p.body(S))
    assert body["max_tokens"] == 32 and body["temperature"] == 0.7 and body["top_p"] == 0.9
    assert ("seed" in body) == (not name.startswith("gemini"))
    assert body.get("reasoning_effort") == {"gemini-3.5-flash": "minimal"}.get(name)
    line = OpenAIBatch.line(p, S)
    assert line["url"] == "/v1/chat/completions" and typed(openai_chat.CompletionCreateParamsNonStreaming, line["body"])
    p.spec = ModelSpec.model_validate({**spec.model_dump(), "mode": "completion", "sampling_extra": {}})
    typed(openai_text.CompletionCreateParamsNonStreaming, p.body(S))


def test_reasoning_models_take_max_completion_tokens_and_the_least_effort():
    spec = ModelSpec(provider="openai", model_id="gpt-5.1-2025-11-13", revision="gpt-5.1-2025-11-13")
    p = OpenAIProvider.__new__(OpenAIProvider)
    p.spec, p.dialect = spec, dialect_for(spec)
    body = typed(openai_chat.CompletionCreateParamsNonStreaming, p.body(S))
    assert body["max_completion_tokens"] == 32 and "max_tokens" not in body and body["reasoning_effort"] == "none"


def test_gemini_thinking_is_held_to_the_least_each_model_allows():
    assert [gemini_reasoning(m).get("reasoning_effort") for m in
            ("gemini-1.5-pro-002", "gemini-2.0-flash", "gemini-2.5-flash", "gemini-2.5-pro", "gemini-3-pro-preview",
             "gemini-3.5-flash", "models/gemini-3.1-flash-lite")] == [None, None, "none", "low", "low", "minimal", "minimal"]
    # the registry's own sampling_extra wins, and a proxy in front of Gemini is named by server_kind
    assert gemini_spec(sampling_extra={"reasoning_effort": "low"}).sampling_extra == {"reasoning_effort": "low"}
    proxied = gemini_spec("http://127.0.0.1:9/v1", server_kind="gemini")
    assert dialect_for(proxied).name == "gemini-openai" and proxied.sampling_extra == {"reasoning_effort": "minimal"}
    assert dialect_for(gemini_spec("http://127.0.0.1:9/v1")).seed


def test_anthropic_body_is_a_valid_sdk_request_without_seed_or_thinking():
    spec = default_models()["claude-opus-4.6"]
    p = AnthropicProvider.__new__(AnthropicProvider)
    p.spec, p.dialect = spec, dialect_for(spec)
    body = p.params(S)
    # temperature and top_p are Messages API fields that anthropic 2.x dropped from its typed signature
    typed(anthropic_params.MessageCreateParamsNonStreaming, {k: v for k, v in body.items() if k not in ("temperature", "top_p")})
    assert "seed" not in body and "thinking" not in body and body["system"] == "Be fair."


def records(store: Path) -> list[dict]:
    """Every record in a store's shards, failed ones included."""
    return [json.loads(line) for shard in sorted(store.rglob("*.jsonl")) for line in shard.read_text().splitlines()]


def setup_run(tmp_path: Path, entry: dict, condition: str = "C1", n_rows: int = 3, **generate_params) -> Path:
    rows = request_rows(n_rows, condition, m4_every=1 if condition == "C3" else 0)
    write_jsonl(tmp_path / "requests" / f"{condition}.jsonl", rows)
    return write_params(tmp_path / "params.yaml", {"fake": entry}, n_samples=1, **generate_params)


def run_cli(params: Path, condition: str = "C1"):
    return CliRunner().invoke(generate, ["--model", "fake", "--slice", "full", "--condition", condition,
                                         "--params", str(params), *gen_paths(params.parent, condition)])


def test_gemini_gets_no_seed_and_records_the_deviation(tmp_path):
    """A server that answers `seed` with Gemini's 400: every sample is generated, none carries a seed, each record
    notes why, and what was sent is a valid chat completion request holding thinking low."""
    with FakeServer() as srv:
        srv.rejects_seed = True
        params = setup_run(tmp_path, {"provider": "openai", "model_id": "gemini-3.5-flash", "revision": "gemini-3.5-flash",
                                      "base_url": srv.url + "/v1", "server_kind": "gemini", "stream": False})
        res = run_cli(params)
        assert res.exit_code == 0, res.output
        assert srv.received and all("seed" not in body and body["reasoning_effort"] == "minimal" for _, body in srv.received)
        for _, body in srv.received:
            typed(openai_chat.CompletionCreateParamsNonStreaming, body)
        view = read_views(tmp_path / "gen", "fake", "full", "C1")
        assert len(view) == 3 and all(r["error"] is None and r["seed"] is None for r in view)
        store = Store.open(tmp_path / "gen/fake/store")
        assert {store.done[k]["note"] for k in store.done} == {GEMINI.no_seed}
    # were the seed sent, Gemini's 400 would be final: one call, a failed attempt of this request
    with FakeServer() as srv:
        srv.rejects_seed = True
        p = OpenAIProvider("g", gemini_spec(srv.url + "/v1"))  # the seed-taking dialect of an unknown server
        out = {}
        p.generate([S], lambda s, r: out.__setitem__(s.key, r))
        assert srv.total == 1 and out["k"].cause == "request" and "Unknown name" in out["k"].error


@pytest.mark.parametrize("fault, why", [("thought_out", "budget (1024 tokens, 1024 of them spent thinking) ran out before any visible text"),
                                        ("empty", "empty answer (finish_reason stop)")])
def test_a_reply_without_an_answer_is_a_failed_attempt_never_a_stored_success(tmp_path, fault, why):
    """Thinking that spends the whole budget, or an empty answer, is a failed call: stored as an attempt, sent again
    within the run's retry rounds, and reported (given up, the view's error) once the attempts are spent."""
    with FakeServer() as srv:
        srv.faults = [fault] * 3  # one per request: the first round fails, the retry succeeds
        entry = {"provider": "openai", "model_id": "gemini-2.5-pro", "revision": "gemini-2.5-pro", "stream": False,
                 "base_url": srv.url + "/v1", "server_kind": "gemini"}
        params = setup_run(tmp_path, entry, "C2", retry_rounds=1)
        res = run_cli(params, "C2")
        assert res.exit_code == 0, res.output
        store = Store.open(tmp_path / "gen/fake/store")
        assert len(store.done) == 3 and all(store.attempts[k] == 1 for k in store.done)
        errors = [r for r in records(tmp_path / "gen/fake/store") if r["error"]]
        assert len(errors) == 3 and all(r["cause"] == "reply" and why in r["error"] for r in errors)
        assert all(store.done[k]["text"].startswith("reply-") for k in store.done)
    with FakeServer() as srv:  # never answered: given up after max_attempts and reported
        srv.faults = [fault] * 100
        params = setup_run(tmp_path / "again", entry | {"base_url": srv.url + "/v1"}, "C2", retry_rounds=1, max_attempts=2)
        res = run_cli(params, "C2")
        assert res.exit_code == 0 and srv.total == 6 and "gave up on 3 call(s) after 2 attempts" in res.output
        view = read_views(tmp_path / "again/gen", "fake", "full", "C2")
        assert all(r["text"] == "" and r["error"].startswith("no answer: ") and why in r["error"] for r in view)
        assert not Store.open(tmp_path / "again/gen/fake/store").done


def test_anthropic_m4_sends_no_second_turn_after_an_empty_first(tmp_path):
    """Anthropic refuses a conversation holding an empty assistant turn with a permanent 400. An empty first turn
    is a failed call, so no second turn is built on it; the retried first turn carries the sample through."""
    with FakeServer() as srv:
        srv.faults = ["empty"] * 3
        params = setup_run(tmp_path, {"provider": "anthropic", "model_id": "claude-opus-4-20250514",
                                      "revision": "claude-opus-4-20250514", "base_url": srv.url}, "C3", retry_rounds=1)
        res = run_cli(params, "C3")
        assert res.exit_code == 0, res.output
        turns = [body["messages"] for path, body in srv.received if path.endswith("/messages")]
        assert all(m["content"] for msgs in turns for m in msgs)  # never an empty turn sent (the server would 400)
        assert len(turns) == 3 + 3 + 3  # failed first turns, their retries, the second turns
        view = read_views(tmp_path / "gen", "fake", "full", "C3")
        assert all(r["error"] is None and r["first_turn"] == "Recommendation: review." for r in view)


def test_an_empty_first_turn_stored_by_an_older_version_gets_no_second_turn(tmp_path):
    """A store written before empty answers were failed calls may hold an empty first turn: no second turn is owed
    or sent for it, and the view says why."""
    spec = ModelSpec(provider="anthropic", model_id="claude-opus-4-20250514", revision="claude-opus-4-20250514")
    row = {**request_rows(1, "C3", m4_every=1)[0], "slices": ["full"]}
    st = Settings(n_samples=1, max_tokens=16, temperature=0.7, top_p=1.0, root_seed=1)
    store = Store.open(tmp_path / "store", "full")
    first = GenerationRun("c", spec, st, [row], store)
    (key,) = first.turns()[0]
    store.append({"key": key, "text": "", "finish_reason": "stop", "tokens_in": 1, "tokens_out": 0, "latency_s": 0.0,
                  "error": None, "created": "2025-01-01T00:00:00Z"})
    store.close()
    run = GenerationRun("c", spec, st, [row], Store.open(tmp_path / "store", "full"))
    assert run.owed_calls() == [] and run.turns()[1] == {}
    assert run.view()[0]["error"] == EMPTY_FIRST_TURN


def test_x_should_retry_is_obeyed_both_ways():
    """`x-should-retry: false` makes a 500 final (one request, an outage that stops the run); `true` makes a 400
    worth another try (and the retry succeeds)."""
    spec = ModelSpec(provider="openai", model_id="fake-model", revision="fake-2025-01-01", max_retries=3, timeout_s=5,
                     stream=False)
    for fault, total, cause in (("500-final", 1, "server"), ("400-retry", 2, None)):
        with FakeServer() as srv:
            srv.faults = [fault]
            p = OpenAIProvider("f", spec.model_copy(update={"base_url": srv.url + "/v1"}))
            out = {}
            p.generate([S], lambda s, r: out.__setitem__(s.key, r))
            assert srv.total == total and out["k"].cause == cause, fault
            assert (out["k"].error is None) == (cause is None)


def test_every_dialect_cites_its_sources():
    for dialect in {dialect_for(s).name: dialect_for(s) for s in default_models().values()}.values():
        assert dialect.sources and all(v.strip() for v in dialect.sources.values()), dialect.name
        assert dialect.seed or dialect.no_seed and "seed" in dialect.sources, dialect.name
    assert not ANTHROPIC.seed and "empty_turn" in ANTHROPIC.sources
