import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from click.testing import CliRunner

from mirage.config.generate import ModelSpec
from mirage.generate.cli import generate
from mirage.generate.providers.base import Sample
from mirage.generate.providers.openai import OpenAIProvider
from mirage.generate.providers.openai_batch import batch_lines, ingest
from mirage.generate.providers.openai_reply import parse_response
from mirage.io import write_jsonl
from tests.generate.conftest import gen_paths, read_views, request_rows, write_params
from tests.generate.fake_server import FakeServer


def spec(url: str, **kw) -> ModelSpec:
    return ModelSpec(**{"provider": "openai", "model_id": "fake-model", "revision": "fake-2025-01-01",
                        "base_url": url + "/v1", "max_retries": 3, "timeout_s": 0.5, "max_concurrency": 4, **kw})


def samples(n: int) -> list[Sample]:
    return [Sample(key=f"k{i}", sample_index=0, seed=100 + i, max_tokens=16, temperature=0.7, top_p=1.0,
                   messages=({"role": "user", "content": f"hi {i}"},), prompt=f"hi {i}") for i in range(n)]


def run(provider, items):
    out = {}
    provider.generate(items, lambda s, r: out.__setitem__(s.key, r))
    return out


@pytest.mark.parametrize("stream", [False, True])
def test_retries_429_500_timeout_then_records_malformed_as_error(stream):
    with FakeServer() as srv:
        p = OpenAIProvider("fake", spec(srv.url, stream=stream))
        srv.faults = ["429", "500", "timeout"]
        out = run(p, samples(1))
        r = out["k0"]
        assert r.error is None and r.text.startswith("reply-") and "seed=100" in r.text
        assert r.system_fingerprint == "fp_test" and r.provider_request_id.startswith("req_")
        assert r.tokens_in == 7 and r.tokens_out == 3 and r.finish_reason == "stop"
        assert srv.total == 4  # three faults retried (a streamed timeout stalls mid-generation), then success
        srv.faults = ["malformed"]
        bad = run(p, samples(1))["k0"]
        assert bad.error and "malformed" in bad.error and bad.finish_reason == "error"
        srv.faults = ["500"] * 10
        failed = run(OpenAIProvider("fake", spec(srv.url, stream=stream, max_retries=1)), samples(1))["k0"]
        assert failed.error == "HTTP 500: boom" and srv.total == 7
        assert (r.queue_s is not None) == stream and (r.generation_s is not None) == stream


@pytest.mark.parametrize("mode", ["chat", "completion"])
def test_streamed_result_equals_plain_result(mode):
    with FakeServer() as srv:
        got = {stream: run(OpenAIProvider("fake", spec(srv.url, mode=mode, stream=stream)), samples(3))
               for stream in (False, True)}
    for key, plain in got[False].items():
        streamed = got[True][key]
        assert plain.error is None and plain.tokens_out == 3
        for field in ("text", "reasoning", "finish_reason", "tokens_in", "tokens_out", "provider_request_id",
                      "system_fingerprint", "extra"):
            assert getattr(streamed, field) == getattr(plain, field), field
        assert streamed.queue_s >= 0 and streamed.generation_s >= 0 and plain.queue_s is None
    assert spec("http://x").streams and not spec("http://x", stream=False).streams
    assert not ModelSpec(provider="openai", model_id="gpt-x").streams  # api.openai.com: plain requests
    assert not spec("http://x", server_kind="llama.cpp").streams  # llama-cpp-python: cut streams, no usage
    assert spec("http://x", server_kind="llama.cpp", stream=True).streams


def test_a_stream_without_usage_switches_the_endpoint_to_plain_requests(capsys):
    """The first streamed reply without usage is sent again plain; every later call goes plain at once."""
    with FakeServer() as srv:
        srv.stream_usage = False
        p = OpenAIProvider("fake", spec(srv.url, stream=True, max_concurrency=1))
        out = run(p, samples(3))
        assert all(r.error is None and r.tokens_out == 3 and r.queue_s is None for r in out.values())
        assert srv.total == 4 and not p.streaming  # one streamed attempt, then three plain requests
    err = capsys.readouterr().err
    assert err.count("stream carried no usage") == 1 and "sending it plain (non-streamed) requests" in err


@pytest.mark.parametrize("mode", ["chat", "completion"])
def test_streams_cut_short_as_llama_cpp_python_does_fall_back_to_plain_requests(mode, capsys):
    """A server that cuts the stream in flight when the next request arrives (TransferEncodingError): every sample
    still comes back, equal to the plain reply, with concurrency 4 and no retries at all."""
    with FakeServer() as srv:
        srv.stream_usage, srv.cut_streams = False, True
        got = run(OpenAIProvider("fake", spec(srv.url, mode=mode, stream=True, max_retries=0, max_concurrency=4)), samples(8))
        plain = run(OpenAIProvider("fake", spec(srv.url, mode=mode, stream=False)), samples(8))
    assert all(got[k].error is None and got[k].text == plain[k].text and got[k].tokens_out == 3 for k in plain)
    err = capsys.readouterr().err
    assert err.count("sending it plain") == 1 and ("cut a streamed reply short" in err or "carried no usage" in err)


def test_completion_mode_and_api_key_from_env(monkeypatch):
    with FakeServer() as srv:
        monkeypatch.setenv("FAKE_KEY", "sk-test")
        p = OpenAIProvider("fake", spec(srv.url, mode="completion", api_key_env="FAKE_KEY"))
        r = run(p, samples(2))
        assert r["k1"].finish_reason == "length" and r["k1"].text.startswith("reply-")
        monkeypatch.delenv("FAKE_KEY")
        try:
            OpenAIProvider("fake", spec(srv.url, api_key_env="FAKE_KEY"))
        except RuntimeError as exc:
            assert "FAKE_KEY" in str(exc)
        else:
            raise AssertionError("missing key accepted")


def test_parse_refusal_and_native_reasoning():
    data = {"id": "c1", "choices": [{"finish_reason": "stop", "message": {"content": None, "refusal": "I can't help."}}]}
    assert parse_response(data).finish_reason == "refusal"
    data = {"id": "c2", "choices": [{"finish_reason": "stop", "message": {"content": "ans", "reasoning_content": "think"}}]}
    assert parse_response(data).reasoning == "think"


def test_batch_file_building_and_ingestion():
    with FakeServer() as srv:
        p = OpenAIProvider("fake", spec(srv.url))
        items = samples(3)
        lines = [json.loads(x) for x in batch_lines(p, items)]
        assert [x["custom_id"] for x in lines] == ["k0", "k1", "k2"]
        assert lines[0]["url"] == "/v1/chat/completions" and lines[0]["body"]["seed"] == 100
        ok = {"custom_id": "k0", "response": {"status_code": 200, "request_id": "rq0", "body": {
            "id": "b0", "choices": [{"finish_reason": "stop", "message": {"content": "done"}}], "usage": {"prompt_tokens": 1, "completion_tokens": 1}}}}
        err = {"custom_id": "k1", "response": {"status_code": 500, "request_id": "rq1", "body": {"error": {"message": "x"}}}}
        got = {}
        seen = ingest(json.dumps(ok) + "\n" + json.dumps(err) + "\n", None, {s.key: s for s in items}, lambda s, r: got.__setitem__(s.key, r))
        assert seen == {"k0", "k1"} and got["k0"].text == "done" and got["k1"].error


def _params(tmp_path: Path, url: str, concurrency: int = 4) -> Path:
    return write_params(tmp_path / "params.yaml", {"fake": {
        "provider": "openai", "model_id": "fake-model", "revision": "fake-2025-01-01", "base_url": url + "/v1",
        "max_concurrency": concurrency, "max_retries": 2, "timeout_s": 5}}, n_samples=2)


def test_generate_cli_views_m4_and_cache(tmp_path):
    req = tmp_path / "requests"
    write_jsonl(req / "C3.jsonl", request_rows(12, "C3", m4_every=3, shared_every=4))
    with FakeServer() as srv:
        params = _params(tmp_path, srv.url)
        res = CliRunner().invoke(generate, ["--model", "fake", "--slice", "full", "--condition", "C3", "--params", str(params),
                                                  *gen_paths(tmp_path, "C3")])
        assert res.exit_code == 0, res.output
        view = read_views(tmp_path / "gen", "fake", "full", "C3")
        assert len(view) == 24
        rids = {r["request_id"] for r in request_rows(12, "C3", m4_every=3, shared_every=4)}
        m4 = {r["request_id"] for r in request_rows(12, "C3", m4_every=3, shared_every=4) if r["followup"]}
        assert srv.total == 2 * (len(rids) + len(m4))  # shared request ids share samples; M4 has two turns
        for row in view:
            assert row["error"] is None and row["answer"] == row["text"]
            assert (row["first_turn"] is not None) == (row["mitigation"] == "M4")
        first = next(r for r in view if r["mitigation"] == "M4")
        assert first["first_turn"] != first["text"]
        before = srv.total
        res = CliRunner().invoke(generate, ["--model", "fake", "--slice", "full", "--condition", "C3", "--params", str(params),
                                                  *gen_paths(tmp_path, "C3")])
        assert res.exit_code == 0 and srv.total == before and "sent 0 call(s)" in res.output


def test_kill9_and_resume_sends_no_stored_sample_twice(tmp_path):
    req = tmp_path / "requests"
    rows = request_rows(60, "C1")
    write_jsonl(req / "C1.jsonl", rows)
    total = 2 * len({r["request_id"] for r in rows})
    counts, url_file = tmp_path / "counts.txt", tmp_path / "url.txt"
    server = subprocess.Popen([sys.executable, "-m", "tests.generate.fake_server", "0.05", str(counts), str(url_file)],
                              cwd=Path(__file__).parents[2])
    try:
        for _ in range(100):
            if url_file.exists() and url_file.read_text():
                break
            time.sleep(0.1)
        url = url_file.read_text()
        params = _params(tmp_path, url, concurrency=4)
        cmd = [sys.executable, "-m", "mirage", "generate", "--model", "fake", "--slice", "full", "--condition", "C1",
               *gen_paths(tmp_path, "C1"), "--params", str(params)]
        env = {**os.environ, "PYTHONPATH": str(Path(__file__).parents[2])}
        proc = subprocess.Popen(cmd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        while not counts.exists() or len(counts.read_text().split()) < total // 3:
            time.sleep(0.02)
        proc.send_signal(signal.SIGKILL)
        proc.wait()
        time.sleep(0.3)  # in-flight requests finish at the server
        from mirage.generate.store import Store

        stored = len(Store.open(tmp_path / "gen/fake/store").done)
        sent_first = len(counts.read_text().split())
        assert 0 < stored < total
        subprocess.run(cmd, env=env, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        digests = counts.read_text().split()
        resent = len(digests) - sent_first
        assert resent == total - stored  # exactly the missing samples, none of the stored ones
        assert len(set(digests)) == total  # nothing lost
        assert len(digests) - total <= 4  # duplicates only for requests in flight at the kill (<= concurrency)
        view = {r["key"]: r["text"] for r in read_views(tmp_path / "gen", "fake", "full", "C1")}
        # uninterrupted run into a fresh store (higher concurrency) gives the same content
        (tmp_path / "p2").mkdir()
        params2 = write_params(tmp_path / "p2" / "params.yaml", {"fake": {
            "provider": "openai", "model_id": "fake-model", "revision": "fake-2025-01-01", "base_url": url + "/v1",
            "max_concurrency": 16}}, n_samples=2)
        cmd2 = [*cmd[:10], *gen_paths(tmp_path / "p2", "C1"), "--requests", str(req / "C1.jsonl"), "--params", str(params2)]
        subprocess.run(cmd2, env=env, check=True,
                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        fresh = {r["key"]: r["text"] for r in read_views(tmp_path / "p2/gen", "fake", "full", "C1")}
        assert fresh == view and len(view) == total
        n_before = len(counts.read_text().split())
        subprocess.run(cmd, env=env, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        assert len(counts.read_text().split()) == n_before  # nothing left to do: nothing sent
    finally:
        server.kill()
        server.wait()


def test_sampling_extra_is_sent_in_the_body_and_enters_the_key_only_when_set():
    from mirage.generate.runner import Settings, make_sample
    from tests.generate.fake_server import digest_of

    with FakeServer() as srv:
        p = OpenAIProvider("fake", spec(srv.url, sampling_extra={"top_k": 40, "min_p": 0.05}))
        (s,) = samples(1)
        body = p.body(s)
        assert (body["top_k"], body["min_p"]) == (40, 0.05)
        r = run(p, [s])["k0"]
        assert r.error is None and r.text.startswith(f"reply-{digest_of(body)} ")  # the server got the extras
    st = Settings(1, 16, 0.7, 1.0, 1)
    sent = {"messages": [{"role": "user", "content": "x"}]}
    plain, extra = spec("http://x"), spec("http://x", sampling_extra={"top_k": 40})
    key = make_sample(plain, True, "r", 0, sent, st).key
    assert make_sample(spec("http://x", sampling_extra={}), True, "r", 0, sent, st).key == key
    assert make_sample(extra, True, "r", 0, sent, st).key != key
    with pytest.raises(ValueError, match="temperature"):
        spec("http://x", sampling_extra={"temperature": 0.1})
    with pytest.raises(ValueError, match="openai"):
        ModelSpec(provider="anthropic", sampling_extra={"top_k": 5})


def test_server_kind_sends_neutral_sampling_and_keys_exactly_what_is_sent():
    from mirage.config.generate import NEUTRAL_EXTRAS
    from mirage.generate.runner import Settings, make_sample

    st = Settings(1, 16, 0.7, 1.0, 1)
    sent = {"messages": [{"role": "user", "content": "x"}]}

    def key(s: ModelSpec) -> str:
        return make_sample(s, True, "r", 0, sent, st).key

    plain = spec("http://x")
    assert key(spec("http://x", server_kind="openai")) == key(plain)  # nothing added, key unchanged
    llama = spec("http://x", server_kind="llama.cpp", sampling_extra={"top_k": 20})
    assert llama.sampling_extra == {**NEUTRAL_EXTRAS["llama.cpp"], "top_k": 20}  # explicit values override
    assert key(llama) != key(plain)
    # the key follows what is sent, not the label: the same body under another server kind is the same call
    assert key(llama) == key(spec("http://x", sampling_extra=dict(llama.sampling_extra)))
    assert ModelSpec.model_validate(llama.model_dump()) == llama  # validating the effective values again changes nothing
    vllm = spec("http://x", server_kind="vllm")
    assert vllm.sampling_extra == {"top_k": -1, "min_p": 0.0, "repetition_penalty": 1.0}
    with FakeServer() as srv:
        p = OpenAIProvider("fake", spec(srv.url, server_kind="llama.cpp"))
        (s,) = samples(1)
        body = p.body(s)
        assert {k: body[k] for k in ("top_k", "min_p", "typical_p", "repeat_penalty")} == {
            "top_k": 0, "min_p": 0.0, "typical_p": 1.0, "repeat_penalty": 1.0}
        assert run(p, [s])["k0"].error is None and srv.total == 1
    with pytest.raises(ValueError, match="server_kind"):
        ModelSpec(provider="local", server_kind="llama.cpp")
