"""Hostile replies and outages against the real `mirage generate` (issue 32, deliverables 1 and 3): one table.

Each case points a model at a hostile OpenAI-compatible server on 127.0.0.1 (tests/hostile/openai_server.py) that
answers every request of a first run its own way (a malformed field, an oversized or compressed-bomb body, a slow
drip, a refused key, an empty account, a server down, ...). The run is the console entry point in a forked child
with bounded memory (tests/hostile/forkserver.py), and each case asserts:

- no traceback, exit 1, and a last line that names the outcome: the model's failure ("still failing", counted,
  its record in the store with its cause) or an outage ("stopped: <cause>", nothing stored, no attempt used, no
  call started after the first outage beyond those in flight and their retries);
- nothing from the bad reply is stored as a completion and no marker is written;
- the child's memory grew by at most MAX_GROWTH_MB (a 200 MB reply or a gzip bomb included);
- then the server is fixed: the rerun sends exactly the samples that wait, each once, and completes.
"""

from __future__ import annotations

import gzip
import json
import os
import time
import zlib
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import pytest
import yaml

from mirage.generate.providers.base import OUTAGES
from mirage.generate.store import Store
from mirage.io import read_jsonl, write_jsonl
from tests.generate.conftest import gen_paths, request_rows
from tests.hostile.openai_server import Handler, HostileServer

ROWS = 3  # samples (one call each) of every case
CONCURRENCY, MAX_RETRIES, TIMEOUT_S, MAX_TOKENS = 2, 1, 1.5, 8
MAX_GROWTH_MB = 512
MB = 1 << 20


# --- behaviours: how the server answers one request ---------------------------------------------------------------

def mutated(edit: Callable[[dict], object]) -> Callable[[Handler, int, dict], None]:
    """The correct reply with `edit` applied (it may return raw JSON text to send instead)."""

    def behave(h: Handler, _n: int, body: dict) -> None:
        data = h.good(body)
        out = edit(data)
        h.send(200, out.encode("utf-8", "surrogatepass") if isinstance(out, str) else json.dumps(data).encode())
    return behave


def message(**fields) -> Callable[[Handler, int, dict], None]:
    return mutated(lambda d: d["choices"][0]["message"].update(fields))


def usage(**fields) -> Callable[[Handler, int, dict], None]:
    return mutated(lambda d: d["usage"].update(fields))


def raw_json(text: str) -> Callable[[Handler, int, dict], None]:
    """A reply whose JSON text is written by hand (Infinity, NaN, 1e400, escapes)."""
    return lambda h, _n, _b: h.send(200, text.encode("utf-8"))


def status(code: int, error: dict, headers: dict | None = None) -> Callable[[Handler, int, dict], None]:
    return lambda h, _n, _b: h.send(code, json.dumps({"error": error}).encode(), headers)


def body_bytes(payload: bytes, headers: dict | None = None) -> Callable[[Handler, int, dict], None]:
    return lambda h, _n, _b: h.send(200, payload, headers)


def huge(total: int) -> Callable[[Handler, int, dict], None]:
    """A `total`-byte reply, streamed (never held in memory), cut when the client stops reading."""

    def behave(h: Handler, _n: int, _b: dict) -> None:
        h.send_response(200)
        h.send_header("Content-Type", "application/json")
        h.send_header("Content-Length", str(total))
        h.end_headers()
        head = b'{"choices": [{"finish_reason": "stop", "message": {"content": "'
        chunk = b"a" * MB
        try:
            h.wfile.write(head)
            for _ in range(total // MB):
                h.wfile.write(chunk)
        except OSError:
            h.close_connection = True
    return behave


_BOMB: list[bytes] = []


def gzip_bomb() -> bytes:
    """200 MB of JSON text compressed to a few hundred kilobytes (built once)."""
    if not _BOMB:
        z = zlib.compressobj(9, zlib.DEFLATED, 16 + zlib.MAX_WBITS)
        parts = [z.compress(b'{"choices": [{"finish_reason": "stop", "message": {"content": "')]
        block = b"a" * MB
        parts += [z.compress(block) for _ in range(200)]
        parts.append(z.compress(b'"}}], "usage": {}}') + z.flush())
        _BOMB.append(b"".join(parts))
    return _BOMB[0]


def drip(h: Handler, _n: int, _b: dict) -> None:
    """Headers at once, then one byte of the body every 0.2 s: never done within the deadline."""
    h.send_response(200)
    h.send_header("Content-Type", "application/json")
    h.send_header("Content-Length", "100000")
    h.end_headers()
    try:
        for _ in range(int(4 * TIMEOUT_S / 0.2)):
            h.wfile.write(b" ")
            h.wfile.flush()
            time.sleep(0.2)
    except OSError:
        pass
    h.close_connection = True


def sse(events: Callable[[dict], list], forever: bool = False, pause_s: float = 0.0) -> Callable[[Handler, int, dict], None]:
    """A server-sent event stream of `events(correct reply)` (dicts or raw strings), then [DONE]; `forever`: the
    events repeat (every `pause_s`) and [DONE] never comes."""

    def behave(h: Handler, _n: int, body: dict) -> None:
        h.send_response(200)
        h.send_header("Content-Type", "text/event-stream")
        h.send_header("Connection", "close")
        h.end_headers()
        h.close_connection = True
        evs = [e if isinstance(e, str) else json.dumps(e) for e in events(h.good(body))]
        try:
            while True:
                for e in evs:
                    h.wfile.write(f"data: {e}\n\n".encode("utf-8", "surrogatepass"))
                    h.wfile.flush()
                if not forever:
                    break
                time.sleep(pause_s)
            h.wfile.write(b"data: [DONE]\n\n")
        except OSError:
            pass
    return behave


def chunk(data: dict, **delta) -> dict:
    return {"id": data["id"], "model": data["model"], "object": "chat.completion.chunk",
            "choices": [{"index": 0, "delta": delta, "finish_reason": "stop"}]}


USAGE = {"choices": [], "usage": {"prompt_tokens": 7, "completion_tokens": 3}}


# --- the table ------------------------------------------------------------------------------------------------------

@dataclass(frozen=True)
class Case:
    id: str
    behaviour: Callable[[Handler, int, dict], None] | None
    cause: str  # "reply"/"request" (the model's, counted) or a key of OUTAGES
    error: str = ""  # in the stored error (counted causes)
    stream: bool = False
    refused: bool = False  # the first run's base_url is a closed port
    model: dict | None = None  # registry overrides


CASES = [
    # replies whose fields break the protocol: one failed call each, counted, never a crash
    Case("content-lone-surrogate", raw_json('{"choices": [{"finish_reason": "stop", "message": {"content": "a\\ud800b"}}]}'),
         "reply", "choices[0].message.content holds a lone surrogate"),
    Case("content-not-string", message(content=["a", "b"]), "reply", "choices[0].message.content is an array, not a string"),
    Case("content-number", message(content=7), "reply", "content is an integer, not a string"),
    Case("message-array", mutated(lambda d: d["choices"][0].update(message=[])), "reply",
         "choices[0].message is an array, not an object"),
    Case("message-null", mutated(lambda d: d["choices"][0].update(message=None)), "reply", "message is null, not an object"),
    Case("choices-object", mutated(lambda d: d.update(choices={"0": 1})), "reply", "choices is an object, not an array"),
    Case("choices-empty", mutated(lambda d: d.update(choices=[])), "reply", "choices is empty"),
    Case("choices-missing", mutated(lambda d: d.pop("choices")), "reply", "choices is null, not an array"),
    Case("usage-string", mutated(lambda d: d.update(usage="lots")), "reply", "usage is a string, not an object"),
    Case("usage-list", mutated(lambda d: d.update(usage=[1, 2])), "reply", "usage is an array, not an object"),
    Case("usage-infinity", raw_json('{"choices": [{"finish_reason": "stop", "message": {"content": "x"}}], "usage": Infinity}'),
         "reply", "usage is a number, not an object"),
    Case("tokens-nan", raw_json('{"choices": [{"finish_reason": "stop", "message": {"content": "x"}}], '
                                '"usage": {"prompt_tokens": NaN, "completion_tokens": 1}}'), "reply", "usage.prompt_tokens is NaN"),
    Case("tokens-1e400", raw_json('{"choices": [{"finish_reason": "stop", "message": {"content": "x"}}], '
                                  '"usage": {"prompt_tokens": 1, "completion_tokens": 1e400}}'),
         "reply", "usage.completion_tokens is a number, not an integer"),
    Case("tokens-text", usage(completion_tokens="many"), "reply", "usage.completion_tokens is a string, not an integer"),
    Case("tokens-negative", usage(completion_tokens=-241439), "reply", "usage.completion_tokens is -241439, outside 0.."),
    Case("tokens-absurd", usage(prompt_tokens=10**15), "reply", "usage.prompt_tokens is 1000000000000000, outside 0.."),
    Case("tokens-float", usage(completion_tokens=3.5), "reply", "usage.completion_tokens is a number, not an integer"),
    Case("tokens-bool", usage(completion_tokens=True), "reply", "usage.completion_tokens is a boolean, not an integer"),
    Case("finish-reason-number", mutated(lambda d: d["choices"][0].update(finish_reason=7)), "reply",
         "choices[0].finish_reason is an integer, not a string"),
    Case("id-not-string", mutated(lambda d: d.update(id={"a": 1})), "reply", "reply.id is an object, not a string"),
    Case("model-not-string", mutated(lambda d: d.update(model=["gpt"])), "reply", "reply.model is an array, not a string"),
    Case("fingerprint-number", mutated(lambda d: d.update(system_fingerprint=1.5)), "reply",
         "reply.system_fingerprint is a number, not a string"),
    Case("reasoning-object", message(reasoning_content={"x": 1}), "reply", "reasoning_content is an object, not a string"),
    Case("text-over-budget", message(content="word " * 200), "reply", "reply of 1,000 characters for max_tokens 8"),
    Case("body-200mb", huge(200 * MB), "reply", "body over"),
    Case("gzip-bomb", lambda h, _n, _b: h.send(200, gzip_bomb(), {"Content-Encoding": "gzip"}), "reply", "body over"),
    Case("gzip-corrupt", body_bytes(gzip.compress(b"")[:10] + b"\xff" * 20, {"Content-Encoding": "gzip"}), "server"),
    Case("encoding-unknown", body_bytes(b"{}", {"Content-Encoding": "br"}), "server"),
    Case("http-400", status(400, {"message": "context too long", "type": "invalid_request_error"}), "request",
         "HTTP 400: context too long"),
    # streamed replies
    Case("sse-delta-content-list", sse(lambda d: [chunk(d, content=["x"]), USAGE]), "reply",
         "chunk 0.delta.content is an array, not a string", stream=True),
    Case("sse-choices-string", sse(lambda d: [{"id": "x", "choices": "abc"}, USAGE]), "reply",
         "chunk 0.choices is a string, not an array", stream=True),
    Case("sse-surrogate", sse(lambda d: ['{"id": "x", "choices": [{"index": 0, "delta": {"content": "\\udc80"}, '
                                         '"finish_reason": "stop"}]}', USAGE]), "reply",
         "chunk 0.delta.content holds a lone surrogate", stream=True),
    Case("sse-usage-negative", sse(lambda d: [chunk(d, content="hi"), {"choices": [], "usage": {"completion_tokens": -1}}]),
         "reply", "usage.completion_tokens is -1", stream=True),
    Case("sse-endless", sse(lambda d: [chunk(d, content="hi")], forever=True), "reply", "body over", stream=True,
         model={"timeout_s": 30}),
    Case("sse-drip", sse(lambda d: [{"id": "x", "choices": [{"index": 0, "delta": {"content": "a"}, "finish_reason": None}]}],
                         forever=True, pause_s=0.1), "transport", stream=True, model={"timeout_s": 0.5}),
    Case("sse-not-json", sse(lambda d: ["{not json"]), "server", stream=True),
    # bodies that are no reply at all, and outages: never an attempt, the run stops
    Case("body-not-utf8", body_bytes(b'{"choices": "\xff\xfe"}'), "server"),
    Case("body-not-json", body_bytes(b"<html>502 Bad Gateway</html>"), "server"),
    Case("body-array", body_bytes(b"[1, 2]"), "server"),
    Case("body-deep", body_bytes(b"[" * 100_000 + b"]" * 100_000), "server"),
    Case("drip", drip, "transport"),
    Case("http-401", status(401, {"message": "Incorrect API key provided", "type": "invalid_request_error"}), "auth"),
    Case("http-403", status(403, {"message": "forbidden"}), "auth"),
    Case("http-402", status(402, {"message": "payment required"}), "quota"),
    Case("http-429-quota", status(429, {"message": "You exceeded your current quota", "code": "insufficient_quota"}), "quota"),
    Case("http-429-rate", status(429, {"message": "slow down"}, {"retry-after-ms": "10"}), "rate_limit"),
    Case("http-500", status(500, {"message": "boom"}, {"retry-after-ms": "10"}), "server"),
    Case("http-503", status(503, {"message": "overloaded"}, {"retry-after-ms": "10"}), "server"),
    Case("http-404", status(404, {"message": "The model does not exist"}), "endpoint"),
    Case("connection-refused", None, "transport", refused=True),
    Case("served-model-refused", mutated(lambda d: d.update(model="gpt-evil")), "served_model",
         model={"served_model": "refuse"}),
]
FAST = {"auth", "quota", "endpoint", "served_model"}  # final at the first answer: no retries


def _closed_port_url() -> str:
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return f"http://127.0.0.1:{s.getsockname()[1]}/v1"


def write_case(root: Path, url: str, case: Case) -> Path:
    params = root / "params.yaml"
    model = {"provider": "openai", "model_id": "fake-model", "revision": "r1", "base_url": url, "stream": case.stream,
             "max_concurrency": CONCURRENCY, "max_retries": MAX_RETRIES, "timeout_s": TIMEOUT_S, "queue_timeout_s": 5,
             "adaptive_concurrency": False, **(case.model or {})}
    params.write_text(yaml.safe_dump({
        "models": {"hostile": model},
        "generate": {"n_samples": 1, "retry_rounds": 0, "max_attempts": 3, "max_tokens": {"C1": MAX_TOKENS, "C2": 16, "C3": 16}},
        "slices": {"demo": {"models": ["hostile"], "n_samples": 1}}}))
    return params


@pytest.fixture(scope="module")
def server():
    gzip_bomb()  # built before any request waits for it
    with HostileServer() as srv:
        yield srv


def test_the_table_covers_every_cause():
    assert {c.cause for c in CASES} == set(OUTAGES) - {"setup"} | {"reply", "request"}
    assert len({c.id for c in CASES}) == len(CASES) >= 50


@pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
def test_a_hostile_reply_is_one_failed_call_and_an_outage_loses_no_sample(case: Case, server: HostileServer, forkserver,
                                                                         tmp_path):
    write_jsonl(tmp_path / "requests" / "C1.jsonl", request_rows(ROWS, "C1"))
    (tmp_path / "tmp").mkdir()
    argv = ["generate", "--model", "hostile", "--slice", "full", "--condition", "C1", "--params",
            str(write_case(tmp_path, _closed_port_url() if case.refused else server.url, case)),
            *gen_paths(tmp_path, "C1", "hostile")]
    env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": str(tmp_path), "LANG": "C.UTF-8",
           "PYTHONDONTWRITEBYTECODE": "1", "MIRAGE_CACHE": "off"}
    marker = tmp_path / "gen/hostile/store/full/C1.manifest.json"

    server.reset(case.behaviour)
    r = forkserver.run(argv, tmp_path, env, tmp_path / "tmp", 120, 2048)
    out = r["stdout"] + r["stderr"]
    assert not r["timed_out"] and "Traceback" not in out, out[-3000:]
    assert r["code"] == 1, out[-2000:]
    last = [x for x in out.splitlines() if x.strip()][-1]
    assert r["grew_mb"] <= MAX_GROWTH_MB, f"memory grew by {r['grew_mb']:.0f} MB"
    assert not marker.exists()
    with Store.open(tmp_path / "gen/hostile/store") as store:
        assert len(store.done) == 0
        if case.cause in ("reply", "request"):
            assert last.startswith(f"error: {ROWS} of {ROWS} sample(s) still failing"), last
            assert server.requests == ROWS
            for key in store.failed:
                rec = store.failed[key]
                assert rec["cause"] == case.cause and case.error in rec["error"], rec["error"]
            assert sorted(store.attempts.values()) == [1] * ROWS
        else:
            assert last.startswith(f"error: stopped: {OUTAGES[case.cause]}") and f"{ROWS} of {ROWS} sample(s) wait" in last, last
            assert len(store.failed) == 0 and not store.attempts  # no attempt used up
            # a final outage fails fast (no call started after the first answer); a retried one within its retries
            assert server.requests <= (CONCURRENCY if case.cause in FAST else ROWS * (MAX_RETRIES + 1)), server.requests

    server.reset(None)  # fixed: the rerun sends exactly what waits, each once
    if case.refused or case.model:
        write_case(tmp_path, server.url, Case(case.id, None, case.cause, stream=case.stream))
    r = forkserver.run(argv, tmp_path, env, tmp_path / "tmp", 120, 2048)
    out = r["stdout"] + r["stderr"]
    assert r["code"] == 0, out[-2000:]
    assert server.requests == ROWS and server.paid_twice == 0
    views = [row for p in sorted((tmp_path / "gen/hostile/full/C1").glob("*.jsonl")) for row in read_jsonl(p)]
    assert len(views) == ROWS and not any(v["error"] for v in views)
    assert json.loads(marker.read_text())["missing"] == 0


@pytest.mark.parametrize("served, warned", [("gpt-evil", True), ("fake-model-2025-01-01", False), ("models/fake-model", False)])
def test_the_served_model_is_stored_and_a_mismatch_is_reported(served, warned, server: HostileServer, forkserver, tmp_path):
    write_jsonl(tmp_path / "requests" / "C1.jsonl", request_rows(ROWS, "C1"))
    (tmp_path / "tmp").mkdir()
    argv = ["generate", "--model", "hostile", "--slice", "full", "--condition", "C1", "--params",
            str(write_case(tmp_path, server.url, Case("warn", None, "reply"))), *gen_paths(tmp_path, "C1", "hostile")]
    server.reset(mutated(lambda d: d.update(model=served)))
    r = forkserver.run(argv, tmp_path, {"PATH": os.environ.get("PATH", ""), "HOME": str(tmp_path), "LANG": "C.UTF-8"},
                       tmp_path / "tmp", 120, 2048)
    assert r["code"] == 0, r["stderr"][-2000:]
    warning = f"warning: {ROWS} replies came from model {served!r}, not 'fake-model'"
    assert (warning in r["stderr"] + r["stdout"]) == warned
    with Store.open(tmp_path / "gen/hostile/store") as store:
        assert len(store.done) == ROWS and all(store.done[k]["served_model"] == served for k in store.done)


def test_only_silence_is_congestion_a_dripping_body_is_cut_at_its_deadline(server: HostileServer):
    """A drip must not halve the adaptive in-flight limit for the rest of the run (`Retryable.timeout` False), and
    is bounded by the call's deadline; a server that says nothing at all is congestion."""
    import asyncio

    from mirage.generate.providers._async import Retryable
    from mirage.generate.providers._http import HttpClient

    async def attempt() -> tuple[Retryable, float]:
        client = HttpClient(server.url, {}, 2, "x-request-id")
        start = time.monotonic()
        try:
            await client.post_json("/chat/completions", {"model": "m", "messages": []}, 0.6, MB)
        except Retryable as exc:
            return exc, time.monotonic() - start
        finally:
            await client.close()
        raise AssertionError("no timeout")

    server.reset(drip)
    exc, took = asyncio.run(attempt())
    assert not exc.timeout and exc.cause == "transport" and "body was not complete within 0.6 s" in exc.error and took < 2
    server.reset(lambda h, _n, _b: time.sleep(1.5))  # nothing at all, then a dropped connection
    exc, took = asyncio.run(attempt())
    assert exc.timeout and "no answer within 0.6 s" in exc.error and took < 1.4


def test_calibration_refuses_token_counts_no_reply_can_have(server: HostileServer):
    from mirage.config.generate import GenerateParams, ModelSpec
    from mirage.generate.calibrate import measure

    spec = ModelSpec(provider="openai", model_id="fake-model", revision="r1", base_url=server.url, max_retries=0,
                     stream=False)
    gen = GenerateParams(calibration_samples=2)
    server.reset(usage(completion_tokens=10**6))
    with pytest.raises(RuntimeError, match="reported 1000000 output tokens for a limit of 64"):
        measure("fake", spec, gen)
    server.reset(usage(completion_tokens=-241439))
    with pytest.raises(RuntimeError, match=r"2 of 2 calibration requests failed .*-241439, outside"):
        measure("fake", spec, gen)
    server.reset(None)
    assert measure("fake", spec, gen)["tok_s"] > 0


def test_a_hostile_request_id_header_is_stored_printable(server: HostileServer, forkserver, tmp_path):
    write_jsonl(tmp_path / "requests" / "C1.jsonl", request_rows(ROWS, "C1"))
    (tmp_path / "tmp").mkdir()
    argv = ["generate", "--model", "hostile", "--slice", "full", "--condition", "C1", "--params",
            str(write_case(tmp_path, server.url, Case("rid", None, "reply"))), *gen_paths(tmp_path, "C1", "hostile")]
    server.reset(lambda h, _n, body: h.send(200, json.dumps(h.good(body)).encode(),
                                            {"x-request-id": "req-\xff\xfe" + "\x7f" + "r" * 500}))
    r = forkserver.run(argv, tmp_path, {"PATH": os.environ.get("PATH", ""), "HOME": str(tmp_path), "LANG": "C.UTF-8"},
                       tmp_path / "tmp", 120, 2048)
    assert r["code"] == 0 and "Traceback" not in r["stderr"], r["stderr"][-2000:]
    with Store.open(tmp_path / "gen/hostile/store") as store:
        ids = {store.done[k]["provider_request_id"] for k in store.done}
    assert len(store.done) == ROWS and all(i.startswith("req-") and len(i) == 200 and "\x7f" not in i for i in ids), ids
