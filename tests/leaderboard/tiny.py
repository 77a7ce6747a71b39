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
    """params.yaml with every output under `root`, a 4-base-per-template corpus with two identities (focal and one
    control) and short generations: the test split is 6 base prompts, 26 requests."""
    p = yaml.safe_load((ROOT / "params.yaml").read_text(encoding="utf-8"))
    p["corpus"].update(out=str(root / "corpus/prompts.jsonl"), instantiations_per_template=4, arabic_subset=0,
                       lite_fraction=0.25, test_fraction=0.25, identities=["muslim", "christian"])
    p["render"].update(corpus=str(root / "corpus/prompts.jsonl"), out_dir=str(root / "requests"))
    p["render"]["rag"].update(n_base=5, pools=["neutral", "recent"], conditions=["C1"])
    p["render"]["mitigations"].update(which=[], conditions=[])
    p["label"].update(generations_dir=str(root / "generations"), out_dir=str(root / "labels"))
    p["label"]["validation"]["out_dir"] = str(root / "validation")
    p["metrics"].update(labels_dir=str(root / "labels"), out_dir=str(root / "metrics"), n_boot=200, n_perm=200)
    short = {"models": [MODEL], "n_samples": 1, "max_tokens": {"C1": 6, "C2": 12, "C3": 8}}
    p["slices"].update(lite=short, test=dict(short))
    p["generate"].update(requests_dir=str(root / "requests"), out_dir=str(root / "generations"),
                         estimate_dir=str(root / "estimate"))
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
    invoke("corpus", "--params", str(params), env={"MIRAGE_PRIVATE_DIR": str(private)})
    invoke("render", "--params", str(params))
    for cond in ("C1", "C2", "C3"):
        invoke("generate", "--model", MODEL, "--slice", split, "--condition", cond, "--params", str(params))
    return params
