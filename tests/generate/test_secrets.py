"""API keys echoed back by a server never reach a file or the console (issue 17 item 7).

A real local OpenAI-protocol server puts the caller's key (the Authorization header) and OPENAI_API_KEY
into error bodies and into completions; `python -m mirage generate` runs against it in a subprocess.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

from mirage import secrets
from mirage.generate.providers.base import Result
from mirage.io import write_jsonl
from tests.generate.conftest import gen_paths, request_rows, write_params

ROOT = Path(__file__).resolve().parents[2]
MODEL_KEY = "sk-mirage-test-4f9a2c7e1b"  # the model's api_key_env (a custom variable name)
OPENAI_KEY = "sk-openai-test-88d1e0aa"  # OPENAI_API_KEY is always watched


class EchoHandler(BaseHTTPRequestHandler):
    """Chat completions that echo the key: 400 with it in the error body for prompts of base 0, else a 200
    whose content, id and fingerprint carry it."""

    def log_message(self, *args) -> None:
        pass

    def do_POST(self) -> None:  # noqa: N802
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        key = self.headers.get("Authorization", "").removeprefix("Bearer ")
        prompt = body["messages"][0]["content"]
        if prompt.startswith("Prompt 0:"):
            data = {"error": {"message": f"Incorrect API key provided: {key} (also saw {OPENAI_KEY})", "type": "invalid_request_error"}}
            status = 400
        else:
            data = {"id": f"cmpl-{key}", "object": "chat.completion", "created": 0, "model": body["model"],
                    "system_fingerprint": f"fp-{key}", "usage": {"prompt_tokens": 5, "completion_tokens": 5},
                    "choices": [{"index": 0, "finish_reason": "stop",
                                 "message": {"role": "assistant", "content": f"Your key is {key}; the other is {OPENAI_KEY}."}}]}
            status = 200
        raw = json.dumps(data).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(raw)))
        self.end_headers()
        self.wfile.write(raw)


def test_redact_replaces_every_watched_value(monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", OPENAI_KEY)
    monkeypatch.setenv("MIRAGE_TEST_KEY", MODEL_KEY)
    monkeypatch.setenv("SHORT_KEY", "abc")
    secrets.watch("MIRAGE_TEST_KEY", "SHORT_KEY")
    assert secrets.redact(f"a {MODEL_KEY} b {OPENAI_KEY}") == "a [REDACTED:MIRAGE_TEST_KEY] b [REDACTED:OPENAI_API_KEY]"
    assert secrets.redact("abc stays: too short to be a key") == "abc stays: too short to be a key"
    row = {"text": MODEL_KEY, "nested": [{"e": f"x{OPENAI_KEY}x"}], "n": 3}
    assert json.dumps(secrets.redact_obj(row)).count("REDACTED") == 2
    # a key straddling the 500-character cut of an error message is redacted before the cut
    failed = Result.failure("e" * 490 + MODEL_KEY + "tail")
    assert MODEL_KEY[:8] not in failed.error and failed.error.endswith("[REDACTED:MIRAGE_TEST_KEY]"[: 500 - 490])
    ok = Result(text=f"echo {MODEL_KEY}", reasoning=OPENAI_KEY, extra={"id": MODEL_KEY})
    assert MODEL_KEY not in ok.text + ok.reasoning + json.dumps(ok.extra)


def test_generate_never_writes_an_echoed_key(tmp_path):
    rows = request_rows(10, "C1")
    write_jsonl(tmp_path / "requests" / "C1.jsonl", rows)
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), EchoHandler)
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    try:
        url = f"http://127.0.0.1:{httpd.server_address[1]}"
        params = write_params(tmp_path / "params.yaml", {"fake": {
            "provider": "openai", "model_id": "fake-model", "revision": "fake-2025-01-01", "base_url": url + "/v1",
            "api_key_env": "MIRAGE_TEST_KEY", "max_retries": 0, "timeout_s": 10}}, n_samples=2)
        env = {**os.environ, "MIRAGE_TEST_KEY": MODEL_KEY, "OPENAI_API_KEY": OPENAI_KEY, "PYTHONPATH": str(ROOT)}
        proc = subprocess.run([sys.executable, "-m", "mirage", "generate", "--model", "fake", "--slice", "full",
                               "--condition", "C1", "--params", str(params), *gen_paths(tmp_path, "C1"),
                               "--log", str(tmp_path / "gen" / "generate.log")], capture_output=True, text=True, env=env,
                              cwd=ROOT, timeout=300)
    finally:
        httpd.shutdown()
    console = proc.stdout + proc.stderr
    assert "Traceback" not in console, console
    files = [p for p in (tmp_path / "gen").rglob("*") if p.is_file()]
    assert any("store" in p.parts for p in files) and any(p.suffix == ".jsonl" and "store" not in p.parts for p in files)
    written = "\n".join(p.read_bytes().decode("utf-8", "replace") for p in files)
    for key in (MODEL_KEY, OPENAI_KEY):
        assert key not in written and key not in console
    # the server did echo it: success rows and error rows carry the marker instead
    assert "Your key is [REDACTED:MIRAGE_TEST_KEY]; the other is [REDACTED:OPENAI_API_KEY]" in written
    assert "Incorrect API key provided: [REDACTED:MIRAGE_TEST_KEY]" in written
