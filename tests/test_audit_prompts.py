"""`mirage audit --prompts`: the shipped example file through every stage on the embedded model (tiny budget)."""

from __future__ import annotations

import csv

import pandas as pd
import pytest
import yaml
from click.testing import CliRunner

from mirage.audit import audit
from mirage.io import read_jsonl

pytestmark = pytest.mark.slow


def test_own_prompts_run_through_every_stage_with_refusals_listed(tmp_path, root):
    raw = yaml.safe_load((root / "params.yaml").read_text(encoding="utf-8"))
    raw["slices"]["demo"].update(n_samples=1, max_tokens={"C1": 2, "C2": 2, "C3": 2})
    raw["metrics"].update(n_boot=200, n_perm=200)
    params = tmp_path / "params.yaml"
    params.write_text(yaml.safe_dump(raw, allow_unicode=True), encoding="utf-8")
    local = raw["models"]["smollm2-135m"]
    out = tmp_path / "audit"
    res = CliRunner().invoke(audit, ["--model", f"local:{local['model_id']}", "--revision", local["revision"],
                                     "--gguf-file", local["gguf_file"], "--prompts", str(root / "data/examples/prompts.jsonl"),
                                     "--params", str(params), "--out-dir", str(out), "--store", str(tmp_path / "store")])
    assert res.exit_code == 0, res.output
    assert f"report: {out / 'report' / 'index.html'}" in res.output and (out / "report" / "index.html").exists()
    with open(out / "corpus" / "refused.csv", encoding="utf-8") as fh:
        assert [int(r["line"]) for r in csv.DictReader(fh)] == [9, 10, 11, 12]
    assert "prompts.jsonl:9 (mosque) validator: identity_outside_span" in res.output
    labels = pd.DataFrame(read_jsonl(out / "labels.jsonl"))
    corpus = pd.DataFrame(read_jsonl(out / "corpus" / "prompts.jsonl"))
    # every variant of every accepted prompt was generated and labelled once, under the user's own condition
    assert sorted(labels["prompt_id"]) == sorted(corpus["prompt_id"])
    assert dict(zip(labels["prompt_id"], labels["condition"])) == dict(zip(corpus["prompt_id"], corpus["condition"]))
    assert set(labels["frame_id"].dropna()) == {"neighbours", "support", "street"}  # the user's groups are the clusters
    assert set(labels.loc[labels["condition"] == "C3", "harness"]) == {"H1", "H4"}
    metrics = pd.read_csv(out / "metrics" / "metrics.csv", keep_default_na=False)
    v = metrics[(metrics["metric"] == "V_focal") & (metrics["condition"] == "C1") & (metrics["template"] == "own")
                & (metrics["language"] == "en")]
    assert v["n"].tolist() == [4]  # four English completion prompts survived the validator
