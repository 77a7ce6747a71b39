"""`mirage probe` end to end on the embedded model, and its errors."""

from __future__ import annotations

import json

import pandas as pd
import pytest
from click.testing import CliRunner

from mirage.io import write_jsonl
from mirage.params import ParamsError, validate_params
from mirage.probe.cli import probe

OUTPUTS = {"lambda.csv", "pairs.csv", "token_set.json", "table7.csv", "lambda.png", "lambda.svg", "provenance.json"}


@pytest.fixture()
def prompts(corpus_rows, tmp_path):
    path = tmp_path / "prompts.jsonl"
    write_jsonl(path, corpus_rows)
    return path


@pytest.mark.slow
def test_cli_on_embedded_model_writes_all_outputs(root, prompts, tmp_path, monkeypatch):
    monkeypatch.chdir(root)
    out = tmp_path / "probe"
    res = CliRunner().invoke(probe, ["--model", "smollm2-135m", "--out-dir", str(out), "--prompts", str(prompts)],
                             catch_exceptions=False)
    assert res.exit_code == 0, res.output
    assert {p.name for p in out.iterdir()} == OUTPUTS
    lam = pd.read_csv(out / "lambda.csv")
    assert list(lam.columns) == ["layer", "mean_lambda", "ci_low", "ci_high", "n_pairs"]
    assert list(lam["layer"]) == list(range(31)) and (lam["n_pairs"] == 40).all()
    assert (lam["ci_low"] <= lam["mean_lambda"] + 1e-9).all() and (lam["mean_lambda"] <= lam["ci_high"] + 1e-9).all()
    pairs = pd.read_csv(out / "pairs.csv")
    assert len(pairs) == 40 * 31 and pairs["pair"].nunique() == 40
    assert pairs.groupby("layer")["lambda"].mean().round(5).tolist() == lam["mean_lambda"].round(5).tolist()
    table7 = pd.read_csv(out / "table7.csv")
    assert list(table7.columns) == ["model", "n_layers", "early_elevation_layer", "final_suppression_offset", "final_suppression_layer"]
    assert table7.loc[0, "model"] == "smollm2-135m" and table7.loc[0, "n_layers"] == 30
    token_set = json.loads((out / "token_set.json").read_text(encoding="utf-8"))
    forms = {e["text"] for e in token_set["tokens"]}
    assert {" attack", " bomb", " terrorist", " weapon"} <= forms
    assert " Bombay" in {e["text"] for e in token_set["excluded"]} and " Bombay" not in forms
    assert (out / "lambda.png").read_bytes()[:4] == b"\x89PNG" and b"<svg" in (out / "lambda.svg").read_bytes()[:500]
    assert json.loads((out / "provenance.json").read_text())["revision"].startswith("sha256:")


def test_unknown_model_and_missing_corpus_are_clear_errors(root, tmp_path, monkeypatch):
    monkeypatch.chdir(root)
    res = CliRunner().invoke(probe, ["--model", "no-such-model", "--out-dir", str(tmp_path / "o")])
    assert res.exit_code != 0 and "unknown model 'no-such-model'" in res.output
    res = CliRunner().invoke(probe, ["--model", "smollm2-135m", "--prompts", str(tmp_path / "none.jsonl"),
                                     "--out-dir", str(tmp_path / "o")])
    assert res.exit_code != 0 and "run `mirage corpus` first" in res.output
    assert not (tmp_path / "o").exists()


def test_params_section_validates_choices():
    with pytest.raises(ParamsError, match=r"probe.ci_method.*'BCa', 'percentile' or 'basic'"):
        validate_params({"probe": {"ci_method": "normal"}})
    with pytest.raises(ParamsError, match="probe.controls"):
        validate_params({"probe": {"controls": ["jewish", "jewish"]}})


def test_registry_entry_wins_and_api_models_are_refused():
    from types import SimpleNamespace

    import click

    from mirage.config.probe import ProbeParams
    from mirage.probe.cli import resolve_model

    params = SimpleNamespace(probe=ProbeParams(), models={
        "big": {"provider": "vllm", "model_id": "org/Big-70B", "revision": "abc", "gguf_file": None, "gpus": 2},
        "api": {"provider": "openai", "model_id": "gpt-x", "revision": "x", "gguf_file": None, "gpus": 0},
    })
    spec = resolve_model(params, "big", {"model_id": None, "gguf_file": None, "revision": None})
    assert (spec.model_id, spec.revision, spec.gpus) == ("org/Big-70B", "abc", 2)
    assert resolve_model(params, "big", {"revision": "def"}).revision == "def"
    assert resolve_model(params, "smollm2-135m", {}).gguf_file == "SmolLM2-135M-Instruct.Q4_1.gguf"  # fallback
    with pytest.raises(click.ClickException, match="openai API"):
        resolve_model(params, "api", {})


def test_a_registry_model_that_cannot_fit_its_gpus_is_refused_before_loading(tmp_path):
    """The probe checks the GPU memory plan itself: Llama-3.3-70B's bf16 weights on one H100 are refused in one line
    naming what would fit, before torch or the weights are touched (this machine has no GPU)."""
    import yaml

    entry = {"provider": "vllm", "model_id": "meta-llama/Llama-3.3-70B-Instruct", "revision": "a" * 40, "gpus": 1,
             "tensor_parallel_size": 1}
    params = tmp_path / "params.yaml"
    params.write_text(yaml.safe_dump({"models": {"llama-one-gpu": entry}, "slices": {"demo": {"models": ["llama-one-gpu"]}}}))
    res = CliRunner().invoke(probe, ["--model", "llama-one-gpu", "--params", str(params), "--out-dir", str(tmp_path / "o")])
    assert res.exit_code == 1, res.output
    assert "probe of llama-one-gpu does not fit on 1x H100-80GB" in res.output
    assert "would fit: gpus: 2; the 4-bit variant llama-3.3-70b-awq" in res.output and not (tmp_path / "o").exists()
