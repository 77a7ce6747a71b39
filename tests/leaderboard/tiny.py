"""A tiny real run on the embedded model: corpus (with a private folder) -> render -> generate, into a temp dir."""

from __future__ import annotations

from pathlib import Path

import yaml
from click.testing import CliRunner

from mirage.cli import cli

ROOT = Path(__file__).resolve().parents[2]
MODEL = "smollm2-135m"
SALT = "tiny-private-salt-for-tests-7d3e2a"


def params_yaml(root: Path) -> Path:
    """params.yaml for a 4-base-per-template corpus with two identities (focal and one control) and short
    generations: the test split is 6 base prompts, 26 requests. Paths are command options (see `paths`)."""
    p = yaml.safe_load((ROOT / "params.yaml").read_text(encoding="utf-8"))
    p["corpus"].update(instantiations_per_template=4, arabic_subset=0, lite_fraction=0.25, test_fraction=0.25,
                       identities=["muslim", "christian"])
    p["render"]["rag"].update(n_base=5, pools=["neutral", "recent"], conditions=["C1"])
    p["render"]["mitigations"].update(which=[], conditions=[])
    p["metrics"].update(n_boot=200, n_perm=200)
    short = {"models": [MODEL], "n_samples": 1, "max_tokens": {"C1": 6, "C2": 12, "C3": 8}}
    p["slices"].update(lite=short, test=dict(short))
    path = root / "params.yaml"
    path.write_text(yaml.safe_dump(p, sort_keys=False, allow_unicode=True), encoding="utf-8")
    return path


def invoke(*args: str, env: dict | None = None) -> str:
    result = CliRunner().invoke(cli, list(args), env=env, catch_exceptions=False)
    assert result.exit_code == 0, result.output
    return result.output


def make_run(root: Path, split: str = "test") -> Path:
    """Build the private folder, corpus, requests and a real generation run of `split`; returns params.yaml."""
    private = root / "private"
    private.mkdir(parents=True, exist_ok=True)
    (private / "salt").write_text(SALT, encoding="utf-8")
    params = params_yaml(root)
    corpus = str(root / "corpus" / "prompts.jsonl")
    invoke("corpus", "--params", str(params), "--out", corpus, env={"MIRAGE_PRIVATE_DIR": str(private)})
    invoke("render", "--params", str(params), "--corpus", corpus, "--out-dir", str(root / "requests"))
    gen = root / "generations" / MODEL
    for cond in ("C1", "C2", "C3"):
        invoke("generate", "--model", MODEL, "--slice", split, "--condition", cond, "--params", str(params),
               "--requests", str(root / "requests" / f"{cond}.jsonl"), "--store", str(gen / "store"),
               "--views-dir", str(gen / split / cond), "--marker", str(gen / "store" / split / f"{cond}.manifest.json"))
    return params


def run_paths(root: Path, split: str = "test") -> list[str]:
    """The `leaderboard submit` options that point at the run under `root`."""
    return ["--views", str(root / "generations" / MODEL / split), "--requests-dir", str(root / "requests")]
