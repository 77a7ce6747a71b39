"""The world the hostile inputs attack: a tiny project (params, a corpus with a private test split, rendered
requests, generation views with stand-in completions, labels, a verified submission bundle), built once per
session without running a model; and the fork server that runs every command in a bounded child."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tarfile
from dataclasses import dataclass
from pathlib import Path

import pytest
from click.testing import CliRunner

from mirage.cli import cli
from mirage.generate.split import split_reasoning
from mirage.generate.store import sample_seed
from mirage.io import write_jsonl

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "tests" / "leaderboard"))
import tiny  # noqa: E402

MODEL = tiny.MODEL
TEXTS = {"C1": "walked to the market and bought fresh bread for the family.",
         "C2": "The neighbour is kind.\n\nFinal answer: they shared the bread.",
         "C3": "Decision: approve. The application meets the criteria."}


def invoke(*args: str, env: dict | None = None) -> str:
    result = CliRunner().invoke(cli, list(args), env=env, catch_exceptions=False)
    assert result.exit_code == 0, result.output
    return result.output


def _views(root: Path, params: dict) -> Path:
    """Stand-in completions for every request x sample of the test split, shaped as `mirage generate` writes
    its views (so `leaderboard submit` bundles them)."""
    folder = root / "generations" / MODEL / "test"
    spec = params["models"][MODEL]
    n = params["slices"]["test"]["n_samples"]
    for cond in ("C1", "C2", "C3"):
        rows = []
        for line in (root / "requests" / f"{cond}.jsonl").read_text(encoding="utf-8").splitlines():
            req = json.loads(line)
            if "test" not in req["slices"]:
                continue
            for i in range(n):
                text = TEXTS[cond]
                reasoning, answer = split_reasoning(text) if cond == "C2" else (None, text)
                rows.append({**{k: req.get(k) for k in ("row_id", "request_id", "prompt_id", "base_id", "template", "harness",
                                                       "identity", "focal", "language", "condition", "rag_pool",
                                                       "mitigation", "lite", "split", "frame_id", "case_id", "cue",
                                                       "paraphrase")},
                             "key": f"k{req['request_id']}{i}", "model": MODEL, "provider": spec["provider"],
                             "model_id": spec["model_id"], "revision": spec["revision"], "sample_index": i,
                             "seed": sample_seed(params["generate"]["seed"], req["request_id"], i), "first_turn": None,
                             "created": "2026-01-01T00:00:00Z", "text": text, "reasoning": reasoning, "answer": answer,
                             "finish_reason": "stop", "tokens_in": 5, "tokens_out": 5, "latency_s": 0.1, "error": None})
        write_jsonl(folder / cond / "none-none.jsonl", rows)
    return folder


@dataclass
class World:
    root: Path

    @property
    def params(self) -> Path:
        return self.root / "params.yaml"

    @property
    def requests(self) -> Path:
        return self.root / "requests"

    @property
    def views(self) -> Path:
        return self.root / "generations" / MODEL / "test"

    @property
    def bundle(self) -> Path:
        return self.root / "bundle.tar.gz"

    @property
    def folder_bundle(self) -> Path:
        return self.root / "bundle"

    @property
    def labels(self) -> Path:
        return self.folder_bundle / "labels.jsonl"


@pytest.fixture(scope="session")
def world(tmp_path_factory) -> World:
    return build_world(tmp_path_factory.mktemp("hostile-world"))


def build_world(root: Path) -> World:
    """Build the world under `root` (also used by benchmarks/bench_hostile_bundles.py)."""
    import yaml

    (root / "data").symlink_to(ROOT / "data")
    private = root / "private"
    private.mkdir()
    (private / "salt").write_text(tiny.SALT, encoding="utf-8")
    params = tiny.params_yaml(root)
    corpus = str(root / "corpus" / "prompts.jsonl")
    invoke("corpus", "--params", str(params), "--out", corpus, env={"MIRAGE_PRIVATE_DIR": str(private)})
    invoke("render", "--params", str(params), "--corpus", corpus, "--out-dir", str(root / "requests"))
    raw = yaml.safe_load(params.read_text(encoding="utf-8"))
    views = _views(root, raw)
    invoke("leaderboard", "submit", "--model", MODEL, "--split", "test", "--params", str(params), "--views", str(views),
           "--requests-dir", str(root / "requests"), "--out", str(root / "bundle.tar.gz"))
    with tarfile.open(root / "bundle.tar.gz") as tar:
        tar.extractall(root, filter="data")
    for p in sorted(root.rglob("*")):  # the world is read-only to the cases: a write would fail loudly
        if p.is_file() and not p.is_symlink():
            p.chmod(0o444)
    return World(root)


class ForkServer:
    def __init__(self) -> None:
        env = {**os.environ, "PYTHONPATH": str(ROOT), "PYTHONDONTWRITEBYTECODE": "1"}
        self.proc = subprocess.Popen([sys.executable, "-m", "tests.hostile.forkserver"], cwd=ROOT, env=env, text=True,
                                     stdin=subprocess.PIPE, stdout=subprocess.PIPE)
        assert json.loads(self.proc.stdout.readline()) == {"ready": True}

    def run(self, argv: list[str], cwd: Path, env: dict[str, str], tmp: Path, timeout_s: float, mem_mb: int) -> dict:
        out, err = cwd / ".stdout", cwd / ".stderr"
        req = {"argv": argv, "cwd": str(cwd), "env": env, "tmp": str(tmp), "timeout_s": timeout_s, "mem_mb": mem_mb,
               "stdout": str(out), "stderr": str(err)}
        self.proc.stdin.write(json.dumps(req) + "\n")
        self.proc.stdin.flush()
        answer = json.loads(self.proc.stdout.readline())
        answer["stdout"] = out.read_text(encoding="utf-8", errors="replace")
        answer["stderr"] = err.read_text(encoding="utf-8", errors="replace")
        out.unlink()
        err.unlink()
        return answer

    def close(self) -> None:
        self.proc.stdin.close()
        self.proc.wait(timeout=30)


@pytest.fixture(scope="session")
def forkserver():
    server = ForkServer()
    yield server
    server.close()


def copy_bundle(world: World, dest: Path) -> Path:
    """A writable copy of the world's verified folder bundle."""
    shutil.copytree(world.folder_bundle, dest)
    for p in dest.iterdir():
        p.chmod(0o644)
    return dest
