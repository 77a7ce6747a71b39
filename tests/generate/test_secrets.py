"""API keys echoed back by a server never reach a file or the console (issues 17 item 7 and 25 item 1).

A key is planted at every offset of error bodies, request-id headers and completion texts, in every form a
server may normalise it to (trimmed, URL- and JSON-escaped, base64 of `user:key` and of the key, hex, case-changed,
cut); a property test draws keys, forms and surroundings; and real local OpenAI-protocol servers echo the
caller's key (the Authorization header) in several normalisations while `python -m mirage generate` runs against
them in a subprocess. Leaks are looked for by brute force, independently of the redactor: any 12-character
window of any form of the key found in what was written or printed.
"""

from __future__ import annotations

import base64
import json
import os
import subprocess
import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from urllib.parse import quote, quote_plus

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from mirage import secrets
from mirage.generate.providers._async import Retryable
from mirage.generate.providers._http import Failed, _status_error
from mirage.generate.providers.base import Result
from mirage.io import write_jsonl
from tests.generate.conftest import gen_paths, request_rows, write_params

ROOT = Path(__file__).resolve().parents[2]
MODEL_KEY = "sk-mirage-test-4f9a2c7e1bQ8xZ3vK7pL0mN5rT2wY6uH9jD4sA1"  # the model's api_key_env (a custom variable)
OPENAI_KEY = "sk-openai-test-88d1e0aa"  # OPENAI_API_KEY is always watched
WINDOW = secrets.FRAGMENT_CHARS


def b64(data: str, urlsafe: bool = False) -> str:
    enc = base64.urlsafe_b64encode if urlsafe else base64.b64encode
    return enc(data.encode()).decode()


#: How a server may echo a key: name -> function of the key. Written here independently of mirage.secrets.
NORMALISED = {
    "as sent": lambda k: k,
    "trimmed": lambda k: k.strip(),
    "lower case": str.lower,
    "upper case": str.upper,
    "url-escaped": lambda k: quote(k, safe=""),
    "url-escaped (form)": quote_plus,
    "percent every byte": lambda k: "".join(f"%{b:02X}" for b in k.encode()),
    "json-escaped": lambda k: json.dumps(k)[1:-1],
    "json \\u-escaped": lambda k: "".join(f"\\u{ord(c):04x}" for c in k),
    "base64 of the key": b64,
    "base64 of user:key": lambda k: b64("user:" + k),
    "base64 of :key": lambda k: b64(":" + k),
    "base64 of ab:key": lambda k: b64("ab:" + k),
    "urlsafe base64 of apikey:key": lambda k: b64("apikey:" + k, urlsafe=True),
    "Basic header": lambda k: "Basic " + b64("api:" + k),
    "hex": lambda k: k.encode().hex(),
    "first 30 characters": lambda k: k[:30],
    "last 20 characters": lambda k: k[-20:],
    "middle 16 characters": lambda k: k[10:26],
}


def evidence(key: str) -> set[str]:
    """Every 12-character window (lower-cased) of every normalised form of `key` that carries only key material:
    the forms themselves, and the base64 encodings' windows that lie inside the key's own bytes."""
    out = set()
    for name, f in NORMALISED.items():
        form = f(key).lower()
        if "base64" in name or "Basic" in name:
            continue
        out |= {form[i:i + WINDOW] for i in range(len(form) - WINDOW + 1)}
    for prefix in ("", "user:", ":", "ab:", "apikey:", "api:"):
        for urlsafe in (False, True):
            full = b64(prefix + key, urlsafe).lower()
            lo = -(-8 * len(prefix) // 6) + 1  # past the character that mixes prefix and key bits
            hi = (8 * len(prefix + key)) // 6 - 1
            out |= {full[i:i + WINDOW] for i in range(lo, hi - WINDOW + 1)}
    return out


def leaks(text: str, key: str) -> list[str]:
    low = text.lower()
    return sorted(w for w in evidence(key) if w in low)


@pytest.fixture
def watched(monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", OPENAI_KEY)
    monkeypatch.setenv("MIRAGE_TEST_KEY", MODEL_KEY)
    secrets.watch("MIRAGE_TEST_KEY")


def test_redact_replaces_every_watched_value(watched, monkeypatch):
    monkeypatch.setenv("SHORT_KEY", "abc")
    secrets.watch("SHORT_KEY")
    assert secrets.redact(f"a {MODEL_KEY} b {OPENAI_KEY}") == "a [REDACTED:MIRAGE_TEST_KEY] b [REDACTED:OPENAI_API_KEY]"
    assert secrets.redact("abc stays: too short to be a key") == "abc stays: too short to be a key"
    row = {"text": MODEL_KEY, "nested": [{"e": f"x {OPENAI_KEY} x"}], "n": 3}
    assert json.dumps(secrets.redact_obj(row)).count("REDACTED") == 2
    # a key straddling the 500-character cut of an error message is redacted before the cut
    failed = Result.failure("e" * 490 + MODEL_KEY + "tail")
    assert not leaks(failed.error, MODEL_KEY) and failed.error.startswith("e" * 480) and "[REDACTED" in failed.error
    ok = Result(text=f"echo {MODEL_KEY}", reasoning=OPENAI_KEY, extra={"id": MODEL_KEY})
    assert MODEL_KEY not in ok.text + ok.reasoning + json.dumps(ok.extra)
    # a masked echo as APIs print it (prefix and last 4) says nothing: it stays
    masked = f"Incorrect API key provided: {MODEL_KEY[:8]}{'*' * 20}{MODEL_KEY[-4:]}"
    assert secrets.redact(masked) == masked


@pytest.mark.parametrize("form", sorted(NORMALISED))
def test_a_key_at_every_offset_of_an_error_body_header_and_text_is_redacted(watched, form):
    echo = NORMALISED[form](MODEL_KEY)
    message = ("Invalid request: the credentials you sent are not valid for this organisation; "
               "see https://example.com/docs/errors#auth for details. ") * 4  # ~460 chars, past the 300 cut
    for i in range(0, len(message) + 1):
        planted = message[:i] + echo + message[i:]
        for body in (json.dumps({"error": {"message": planted, "type": "invalid_request_error"}}).encode(),
                     planted.encode()):  # a JSON error, and a plain-text one (cut to 300 characters)
            exc = _status_error(400, {}, body, None)
            assert isinstance(exc, Failed)
            assert not leaks(Result.failure(exc.error).error, MODEL_KEY), (form, i)
        exc = _status_error(503, {}, planted.encode(), None)
        assert isinstance(exc, Retryable) and not leaks(Result.failure(exc.error).error, MODEL_KEY), (form, i)
    request_id = "req_" + "0123456789abcdef" * 4
    for i in range(len(request_id) + 1):
        rid = request_id[:i] + echo + request_id[i:]
        assert not leaks(str(Result.failure("HTTP 401", request_id=rid).provider_request_id), MODEL_KEY), (form, i)
    text = "The neighbour opened the bakery and greeted everyone who came in. " * 15
    for i in range(0, len(text) + 1, 7):
        r = Result(text=text[:i] + echo + text[i:], reasoning=echo + text[:i], extra={"id": text[i:] + echo})
        assert not leaks(r.text + str(r.reasoning) + json.dumps(r.extra), MODEL_KEY), (form, i)


keys = st.text(alphabet="abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_", min_size=20, max_size=80)
surroundings = st.text(alphabet=st.characters(codec="utf-8", exclude_categories=("Cs",)), max_size=300)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(key=keys, before=surroundings, after=surroundings, form=st.sampled_from(sorted(NORMALISED)),
       cut=st.integers(min_value=0, max_value=600))
def test_property_no_form_of_any_key_survives(monkeypatch, key, before, after, form, cut):
    monkeypatch.setenv("MIRAGE_PROPERTY_KEY", key)
    secrets.watch("MIRAGE_PROPERTY_KEY")
    planted = before + NORMALISED[form](key) + after
    assert not leaks(secrets.redact(planted), key)
    assert not leaks(Result.failure(planted[:cut] + planted[cut:]).error, key)
    assert not leaks(str(_status_error(400, {}, planted.encode(), None)), key)


class EchoHandler(BaseHTTPRequestHandler):
    """Chat completions that echo the caller's key (Authorization header) in the form named by the prompt's base
    number: an error body for even bases (a long one, with the key across the 300-character cut for base 0), a 200
    otherwise whose content, reasoning, id, fingerprint and request-id header carry it. The errors are 400s: final
    failures of one request, stored (a 401 or a 5xx would be an outage, stored nowhere, that stops the run)."""

    protocol_version = "HTTP/1.1"

    def log_message(self, *args) -> None:
        pass

    def do_POST(self) -> None:  # noqa: N802
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        key = self.headers.get("Authorization", "").removeprefix("Bearer ")
        base = int(body["messages"][0]["content"].split(":")[0].removeprefix("Prompt "))
        names = sorted(NORMALISED)
        echo = NORMALISED[names[base % len(names)]](key)
        headers = {"x-request-id": f"req-{echo}"}
        if base == 0:
            status, raw = 400, ("x" * 290 + key + "y" * 400).encode()  # plain text; cut at 300 mid-key
        elif base % 2 == 0:
            status = 400
            raw = json.dumps({"error": {"message": f"Incorrect API key provided: {echo} (also saw {OPENAI_KEY})",
                                        "type": "invalid_request_error"}}).encode()
        else:
            status = 200
            raw = json.dumps({"id": f"cmpl-{echo}", "object": "chat.completion", "created": 0, "model": body["model"],
                              "system_fingerprint": f"fp-{echo}", "usage": {"prompt_tokens": 5, "completion_tokens": 5},
                              "choices": [{"index": 0, "finish_reason": "stop", "message": {
                                  "role": "assistant", "reasoning_content": f"they sent {echo}",
                                  "content": f"Your key is {echo}; the other is {OPENAI_KEY}."}}]}).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(raw)))
        for k, v in headers.items():
            self.send_header(k, v)
        self.end_headers()
        self.wfile.write(raw)


def _generate(tmp_path: Path, url: str, key: str) -> subprocess.CompletedProcess:
    params = write_params(tmp_path / "params.yaml", {"fake": {
        "provider": "openai", "model_id": "fake-model", "revision": "fake-2025-01-01", "base_url": url + "/v1",
        "api_key_env": "MIRAGE_TEST_KEY", "max_retries": 1, "timeout_s": 10, "stream": False}}, n_samples=1)
    env = {**os.environ, "MIRAGE_TEST_KEY": key, "OPENAI_API_KEY": OPENAI_KEY, "PYTHONPATH": str(ROOT)}
    return subprocess.run([sys.executable, "-m", "mirage", "generate", "--model", "fake", "--slice", "full",
                           "--condition", "C1", "--params", str(params), *gen_paths(tmp_path, "C1"),
                           "--log", str(tmp_path / "gen" / "generate.log")], capture_output=True, text=True, env=env,
                          cwd=ROOT, timeout=300)


@pytest.fixture
def echo_server():
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), EchoHandler)
    httpd.daemon_threads = True
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    yield f"http://127.0.0.1:{httpd.server_address[1]}"
    httpd.shutdown()
    httpd.server_close()


def test_generate_never_writes_an_echoed_key_in_any_form(tmp_path, echo_server):
    n_forms = len(NORMALISED)
    write_jsonl(tmp_path / "requests" / "C1.jsonl", request_rows(5 * 2 * n_forms, "C1"))  # every form, error and 200
    proc = _generate(tmp_path, echo_server, MODEL_KEY)
    console = proc.stdout + proc.stderr
    assert "Traceback" not in console, console
    files = [p for p in (tmp_path / "gen").rglob("*") if p.is_file()]
    assert any("store" in p.parts for p in files) and any(p.suffix == ".jsonl" and "store" not in p.parts for p in files)
    written = "\n".join(p.read_bytes().decode("utf-8", "replace") for p in files)
    for key in (MODEL_KEY, OPENAI_KEY):
        assert not leaks(written, key) and not leaks(console, key)
    # the server did echo it: success rows and error rows carry the marker instead
    assert "Your key is [REDACTED:MIRAGE_TEST_KEY]; the other is [REDACTED:OPENAI_API_KEY]" in written
    assert "Incorrect API key provided: [REDACTED:MIRAGE_TEST_KEY]" in written
    assert "HTTP 400: " + "x" * 287 in written  # the cut body: its key part redacted, not cut in two


@pytest.mark.parametrize("bad", [MODEL_KEY + "\n", " " + MODEL_KEY, MODEL_KEY + "  ", MODEL_KEY[:20] + " " + MODEL_KEY[20:]])
def test_a_key_with_whitespace_is_refused_at_start_up(tmp_path, echo_server, bad):
    write_jsonl(tmp_path / "requests" / "C1.jsonl", request_rows(4, "C1"))
    proc = _generate(tmp_path, echo_server, bad)
    assert proc.returncode == 2, proc.stderr
    assert proc.stderr.strip().splitlines()[-1] == ("Error: environment variable MIRAGE_TEST_KEY: the API key contains "
                                                    "whitespace or control characters (leading or trailing too); set it "
                                                    "to the bare key")
    assert "Traceback" not in proc.stderr
    assert not (tmp_path / "gen" / "fake" / "store").exists() and not (tmp_path / "gen" / "fake" / "full").exists()
