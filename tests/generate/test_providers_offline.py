import json
from types import SimpleNamespace

import pytest

from mirage.config.dialects import ANTHROPIC, dialect_for
from mirage.config.generate import UNPINNED, ModelSpec, default_models
from mirage.generate.providers.anthropic import AnthropicProvider, parse_batch_result
from mirage.generate.providers.base import Sample
from mirage.generate.providers.vllm import (
    UnpinnedRevision,
    VLLMProvider,
    check_pinned,
    engine_kwargs,
    parse_output,
    sampling_kwargs,
)
from mirage.generate.runner import Settings, make_sample
from mirage.generate.split import split_reasoning
from tests.generate.fake_server import FIXTURES, FakeServer

S = Sample(key="k", sample_index=1, seed=42, max_tokens=32, temperature=0.7, top_p=0.9,
           messages=({"role": "system", "content": "Be fair."}, {"role": "user", "content": "Decide."}))


def test_anthropic_replays_recorded_message_and_has_no_seed():
    assert make_sample(default_models()["claude-opus-4"], dialect_for(default_models()["claude-opus-4"]).seed, "r", 0, {"messages": []},
                       Settings(1, 8, 0.7, 1.0, 3)).seed is None
    with FakeServer() as srv:
        spec = ModelSpec(provider="anthropic", model_id="claude-opus-4-20250514", revision="claude-opus-4-20250514",
                         base_url=srv.url, max_retries=2, timeout_s=5)
        p = AnthropicProvider("claude", spec)
        body = p.params(S)
        assert body["system"] == "Be fair." and body["messages"] == [{"role": "user", "content": "Decide."}] and body["top_p"] == 0.9
        srv.faults = ["429"]
        out = {}
        p.generate([S], lambda s, r: out.__setitem__(s.key, r))
        r = out["k"]
        assert srv.total == 2  # 429 retried
        assert r.text == "Recommendation: review." and r.reasoning.startswith("The case file")
        assert (r.tokens_in, r.tokens_out, r.finish_reason, r.note) == (412, 57, "stop", ANTHROPIC.no_seed)
        assert r.provider_request_id == "req_anthropic_1"


def test_anthropic_batch_result_parsing():
    msg = json.loads((FIXTURES / "anthropic_message.json").read_text())
    assert parse_batch_result({"type": "succeeded", "message": msg}).text == "Recommendation: review."
    err = parse_batch_result({"type": "errored", "error": {"type": "overloaded_error"}})
    assert err.error and "overloaded" in err.error


def test_vllm_refuses_unpinned_and_builds_requests_without_vllm():
    spec = default_models()["llama-3.3-70b"].model_copy(update={"revision": UNPINNED})
    with pytest.raises(UnpinnedRevision, match="REPLACE_WITH_COMMIT_SHA"):
        VLLMProvider("llama-3.3-70b", spec)
    check_pinned("x", spec.model_copy(update={"allow_unpinned": True}))
    pinned = default_models()["qwen2.5-72b-awq"].model_copy(update={"revision": "a" * 40})
    kw = engine_kwargs(pinned)
    assert kw["revision"] == "a" * 40 and kw["quantization"] == "awq_marlin" and kw["tensor_parallel_size"] == 1
    assert engine_kwargs(spec.model_copy(update={"allow_unpinned": True})).get("revision") is None
    assert sampling_kwargs(S) == {"n": 1, "temperature": 0.7, "top_p": 0.9, "max_tokens": 32, "seed": 42}
    out = SimpleNamespace(request_id=3, prompt_token_ids=[1, 2, 3],
                          outputs=[SimpleNamespace(text="hello", finish_reason="length", token_ids=[5, 6])])
    r = parse_output(out, 1.5)
    assert (r.text, r.finish_reason, r.tokens_in, r.tokens_out) == ("hello", "length", 3, 2)
    out.outputs[0].text = " \n"  # an end-of-sequence at once: no answer, a failed call (cause reply), not a success
    r = parse_output(out, 1.5, 32)
    assert r.error == "no answer: the output budget (32 tokens) ran out before any visible text" and r.cause == "reply"


def test_vllm_absent_gives_clear_error():
    spec = default_models()["llama-3.3-70b"].model_copy(update={"revision": "b" * 40})
    try:
        import vllm  # noqa: F401
    except ImportError:
        with pytest.raises(RuntimeError, match="vllm"):
            VLLMProvider("llama", spec)


@pytest.mark.parametrize("text,native,expected", [
    ("Step 1: weigh.\nStep 2: decide.\nFinal answer: He walked home.", None, ("Step 1: weigh.\nStep 2: decide.", "He walked home.")),
    ("First.\n\n**Final Answer:** done", None, ("First.", "done")),
    ("Answering takes care.\n\nSo he left.", None, ("Answering takes care.", "So he left.")),
    ("only one paragraph", None, (None, "only one paragraph")),
    ("the answer", "native trace", ("native trace", "the answer")),
])
def test_split_reasoning(text, native, expected):
    assert split_reasoning(text, native) == expected
