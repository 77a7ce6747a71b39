"""`make install` picks PyTorch's CPU index when it answers and the pinned torch otherwise; `make demo` skips the
install when nothing changed (issue 16 item 1); everything goes into the project's own environment `.venv`, which
make creates (issue 35 item 2). Only `make torch-source`, `make -n` and the environment's creation run: no package
is installed."""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
pytestmark = pytest.mark.skipif(shutil.which("make") is None, reason="needs GNU make")


def make(*args: str, cwd: Path = ROOT, timeout: int = 60) -> subprocess.CompletedProcess:
    return subprocess.run(["make", "--no-print-directory", *args], cwd=cwd, capture_output=True, text=True, timeout=timeout)


class _Index(BaseHTTPRequestHandler):
    def log_message(self, *args) -> None:
        pass

    def do_GET(self) -> None:  # noqa: N802
        ok = self.path.rstrip("/") == "/whl/cpu/torch"
        body = b'<a href="torch-2.13.0%2Bcpu-cp311-cp311-manylinux_2_28_x86_64.whl">torch</a>' if ok else b"not found"
        self.send_response(200 if ok else 404)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)


def test_uses_the_cpu_index_when_it_answers():
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), _Index)
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    try:
        url = f"http://127.0.0.1:{httpd.server_address[1]}/whl/cpu"
        assert make("torch-source", f"TORCH_INDEX={url}").stdout.strip() == f"index {url}"
        assert make("torch-source", f"TORCH_INDEX={url}/nosuch").stdout.strip() == "fallback torch==2.13.0"
    finally:
        httpd.shutdown()


def test_falls_back_to_the_pinned_torch_quickly_when_the_index_is_unreachable():
    closed = socket.socket()
    closed.bind(("127.0.0.1", 0))
    port = closed.getsockname()[1]
    closed.close()  # nothing listens: connection refused
    assert make("torch-source", f"TORCH_INDEX=http://127.0.0.1:{port}/whl/cpu").stdout.strip() == "fallback torch==2.13.0"
    with socket.socket() as silent:  # accepts the connection, never answers: only the timeout ends the probe
        silent.bind(("127.0.0.1", 0))
        silent.listen(8)
        start = time.monotonic()
        out = make("torch-source", f"TORCH_INDEX=http://127.0.0.1:{silent.getsockname()[1]}/whl/cpu", "PROBE_TIMEOUT=1")
        assert out.stdout.strip() == "fallback torch==2.13.0"
        assert time.monotonic() - start < 10


def _copy(tmp_path: Path) -> Path:
    for name in ("Makefile", "pyproject.toml"):
        shutil.copy2(ROOT / name, tmp_path / name)
    return tmp_path


def test_demo_reinstalls_only_when_pyproject_or_the_makefile_changed(tmp_path):
    _copy(tmp_path)
    dry = lambda: make("-n", "demo", cwd=tmp_path).stdout  # noqa: E731
    first = dry()
    assert "python3 -m venv .venv" in first, "no environment yet: make creates the project's own"
    assert ".venv/bin/python -m pip install" in first and "snakemake --cores all demo" in first, "no stamp yet: install first"
    python = tmp_path / ".venv" / "bin" / "python"
    python.parent.mkdir(parents=True)
    python.symlink_to(shutil.which("python3"))
    assert "-m venv" not in dry() and ".venv/bin/python -m pip install" in dry(), "an environment without the stamp: install"
    stamp = tmp_path / ".venv" / ".installed"
    stamp.write_text("installed torch 2.13.0+cpu\n")
    assert "pip install" not in dry() and "snakemake --cores all demo" in dry()
    later = time.time() + 5
    os.utime(tmp_path / "pyproject.toml", (later, later))
    assert "pip install" in dry(), "pyproject.toml changed: reinstall"
    assert "rm -f .venv/.installed" in make("-n", "install", cwd=tmp_path).stdout, "make install always reinstalls"
    for target in ("test", "test-fast", "lite", "pull", "resume"):
        assert ".venv/bin/python -m pip install" in make("-n", target, cwd=tmp_path).stdout, f"make {target} installs into .venv"
    assert make("-n", "clean-env", cwd=tmp_path).stdout.startswith("rm -rf .venv")


def test_make_creates_the_environment_and_its_recipes_run_its_commands(tmp_path):
    """A real `python3 -m venv`: the recipes (and so every Snakemake rule's `python -m mirage`) find the environment's
    python, snakemake, dvc and mirage before anything on the caller's PATH; the active interpreter is not touched."""
    _copy(tmp_path)
    created = make(".venv/bin/python", cwd=tmp_path, timeout=600)  # seconds on a quiet machine, minutes on a busy one
    assert created.returncode == 0, created.stderr
    python = tmp_path / ".venv" / "bin" / "python"
    prefix = subprocess.run([str(python), "-c", "import sys; print(sys.prefix)"], capture_output=True, text=True, check=True)
    assert Path(prefix.stdout.strip()) == tmp_path / ".venv"
    probe = make("--eval", "which: ; @command -v python; command -v pip", "which", cwd=tmp_path)
    assert probe.stdout.split() == [str(python), str(tmp_path / ".venv" / "bin" / "pip")], probe.stderr
    assert make(".venv/bin/python", cwd=tmp_path).stdout.strip().endswith("is up to date."), "created once"
