"""A real llama.cpp server (llama-cpp-python's, on the embedded GGUF) behind the registry with server_kind llama.cpp:
the neutral sampling fields are fields the server knows (a wrong type for each is refused), it accepts their
neutral values, `mirage generate` stores its completions and `mirage estimate --calibrate` measures it. llama-cpp-python[server] is optional (not a project
dependency, not in CI): the test skips without it."""

from __future__ import annotations

import json
import socket
import subprocess
import sys
import time
from pathlib import Path

import httpx
import pytest
from click.testing import CliRunner

from mirage.config.generate import NEUTRAL_EXTRAS, SMOLLM2_SHA, default_models
from mirage.estimate import estimate
from mirage.generate.cli import generate
from mirage.hf import resolve_model_path
from mirage.io import write_jsonl
from tests.generate.conftest import gen_paths, read_views, request_rows, write_params

pytestmark = pytest.mark.slow
pytest.importorskip("llama_cpp.server.app", reason="llama-cpp-python[server] is not installed (optional: "
                    "pip install 'llama-cpp-python[server]', built from source)")


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture(scope="module")
def llama_server(tmp_path_factory):
    """`python -m llama_cpp.server` on 127.0.0.1 with the embedded GGUF and a small context; yields its /v1 url."""
    local = default_models()["smollm2-135m"]
    gguf = Path(resolve_model_path(local.model_id)) / local.gguf_file
    port = _free_port()
    log = tmp_path_factory.mktemp("llama") / "server.log"
    with open(log, "wb") as fh:
        proc = subprocess.Popen([sys.executable, "-m", "llama_cpp.server", "--model", str(gguf), "--model_alias", "smollm2",
                                 "--host", "127.0.0.1", "--port", str(port), "--n_ctx", "1024", "--n_threads", "1"],
                                stdout=fh, stderr=subprocess.STDOUT)
    url = f"http://127.0.0.1:{port}/v1"
    try:
        for _ in range(600):  # wait for the model to load (up to about a minute)
            if proc.poll() is not None:
                pytest.fail(f"llama_cpp.server exited with {proc.returncode}: {log.read_text()[-2000:]}")
            try:
                if httpx.get(f"{url}/models", timeout=1.0).status_code == 200:
                    break
            except httpx.TransportError:
                pass
            time.sleep(0.1)
        else:
            pytest.fail(f"llama_cpp.server did not answer on {url}: {log.read_text()[-2000:]}")
        yield url
    finally:
        proc.terminate()
        proc.wait(timeout=30)


def test_neutral_fields_are_the_servers_own(llama_server):
    from llama_cpp.server.types import CreateChatCompletionRequest

    # llama-cpp-python's server has no typical_p (it samples with 1.0, the neutral value); llama.cpp's own server
    # takes it, and its --typical flag can change the default, so it is sent all the same
    known = set(NEUTRAL_EXTRAS["llama.cpp"]) & set(CreateChatCompletionRequest.model_fields)
    assert set(NEUTRAL_EXTRAS["llama.cpp"]) - known == {"typical_p"}
    body = {"model": "smollm2", "messages": [{"role": "user", "content": "Name a fruit."}], "max_tokens": 4,
            "temperature": 0.7, "top_p": 1.0, "seed": 1}
    ok = httpx.post(f"{llama_server}/chat/completions", json={**body, **NEUTRAL_EXTRAS["llama.cpp"]}, timeout=60)
    assert ok.status_code == 200, ok.text
    for field in known:  # a field the server ignored would not be validated
        bad = httpx.post(f"{llama_server}/chat/completions", json={**body, field: "not-a-number"}, timeout=60)
        # refused as a validation error (llama-cpp-python's error handler answers it with 500, not FastAPI's 422)
        assert bad.status_code >= 400 and "validation error" in bad.text and f"'{field}'" in bad.text, (field, bad.text[:300])


def test_generate_through_the_registry_with_server_kind_llama_cpp(llama_server, tmp_path):
    write_jsonl(tmp_path / "requests" / "C1.jsonl", request_rows(2, "C1"))
    params = write_params(tmp_path / "params.yaml", {"llama": {
        "provider": "openai", "model_id": "smollm2", "revision": SMOLLM2_SHA, "base_url": llama_server,
        "server_kind": "llama.cpp", "max_concurrency": 1, "max_retries": 0}}, n_samples=1, max_tokens={"C1": 8, "C2": 8, "C3": 8})
    res = CliRunner().invoke(generate, ["--model", "llama", "--slice", "full", "--condition", "C1", "--params", str(params),
                                        *gen_paths(tmp_path, "C1", model="llama")])
    assert res.exit_code == 0, res.output
    view = read_views(tmp_path / "gen", "llama", "full", "C1")
    assert len(view) == 2 and all(v["error"] is None and v["text"].strip() and 0 < v["tokens_out"] <= 8 for v in view)


def test_calibrate_a_model_behind_the_server(llama_server, tmp_path):
    for c in ("C1", "C2", "C3"):
        write_jsonl(tmp_path / "requests" / f"{c}.jsonl", request_rows(2, c))
    params = write_params(tmp_path / "params.yaml", {"llama": {
        "provider": "openai", "model_id": "smollm2", "revision": SMOLLM2_SHA, "base_url": llama_server,
        "server_kind": "llama.cpp", "max_concurrency": 2, "max_retries": 0}}, calibration_samples=2)
    res = CliRunner().invoke(estimate, ["--slice", "full", "--params", str(params), "--models", "llama", "--calibrate",
                                        "--requests-dir", str(tmp_path / "requests"), "--calibration", str(tmp_path / "cal.json"),
                                        "--out", str(tmp_path / "e.json")])
    assert res.exit_code == 0, res.output
    entry = json.loads((tmp_path / "cal.json").read_text())["llama"]
    assert (entry["n"], entry["concurrency"], entry["base_url"]) == (2, 2, llama_server)
    assert 0 < entry["tokens_out"] <= 2 * 64 and entry["tok_s"] > 0
    assert {r["source"] for r in json.loads((tmp_path / "e.json").read_text())["rows"]} == {"measured"}


def test_streaming_against_llama_cpp_python_falls_back_to_plain_requests(llama_server, tmp_path):
    """llama-cpp-python's server sends no usage in its streams and cuts a stream when the next request arrives (so
    server_kind llama.cpp does not stream by default): a model set to stream is switched to plain requests by
    itself, and every sample is stored with its token counts."""
    write_jsonl(tmp_path / "requests" / "C1.jsonl", request_rows(4, "C1"))
    params = write_params(tmp_path / "params.yaml", {"llama": {
        "provider": "openai", "model_id": "smollm2", "revision": SMOLLM2_SHA, "base_url": llama_server,
        "server_kind": "llama.cpp", "stream": True, "max_concurrency": 4, "max_retries": 0}},
        n_samples=1, max_tokens={"C1": 4, "C2": 4, "C3": 4})
    res = CliRunner().invoke(generate, ["--model", "llama", "--slice", "full", "--condition", "C1", "--params", str(params),
                                        *gen_paths(tmp_path, "C1", model="llama")])
    assert res.exit_code == 0 and "sending it plain (non-streamed) requests" in res.output, res.output
    view = read_views(tmp_path / "gen", "llama", "full", "C1")
    assert len(view) == 4 and all(v["error"] is None and 0 < v["tokens_out"] <= 4 for v in view)


def test_audit_against_the_real_server_as_a_newcomer_types_it(llama_server, tmp_path):
    """`mirage audit --model openai:smollm2 --base-url URL` with nothing else: streams are tried, dropped by
    themselves, and the audit ends with its report."""
    from mirage.audit import audit

    req = tmp_path / "requests"
    for cond in ("C1", "C2", "C3"):
        rows = request_rows(2, cond)
        for r in rows:
            r["harness"] = "H1" if cond == "C3" else None
        write_jsonl(req / f"{cond}.jsonl", rows)
    params = tmp_path / "params.yaml"
    params.write_text("slices:\n  demo:\n    models: []\n    n_samples: 1\n    max_tokens: {C1: 8, C2: 8, C3: 8}\n"
                      "metrics:\n  n_boot: 100\n  n_perm: 100\n")
    res = CliRunner().invoke(audit, ["--model", "openai:smollm2", "--base-url", llama_server, "--slice", "demo",
                                     "--limit", "2", "--requests-dir", str(req), "--store", str(tmp_path / "store"),
                                     "--out-dir", str(tmp_path / "audit"), "--params", str(params)])
    assert res.exit_code == 0, res.output
    assert (tmp_path / "audit" / "report" / "index.html").exists()
