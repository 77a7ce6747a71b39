"""The GPU memory plan against published model sizes and the failures the issue read off vLLM, and the vLLM
settings it feeds (max_model_len, gpu_memory_utilization, the AWQ kernel, reproducibility)."""

import json
import os

import pytest
import yaml
from click.testing import CliRunner

from mirage.config.dialects import VLLM
from mirage.config.generate import GPU_GIB, default_models
from mirage.estimate import estimate
from mirage.generate.memory import (
    ARCHS,
    GIB,
    OVERHEAD_GIB,
    format_plans,
    kv_bytes_per_token,
    plan_model,
    request_bound,
    weight_gib,
)
from mirage.generate.providers.vllm import DoesNotFit, VLLMProvider, engine_kwargs
from tests.generate.conftest import write_params

MODELS = default_models()


@pytest.mark.parametrize("name,published_gb", [
    # sum of the safetensors files on each model's hub page (decimal GB)
    ("llama-3.3-70b", 141.1), ("qwen2.5-72b", 145.4), ("llama-3.3-70b-awq", 39.8), ("qwen2.5-72b-awq", 41.6),
    ("llama-4-scout", 218.0), ("qwen3-235b", 470.0),
])
def test_weights_match_published_checkpoint_sizes(name, published_gb):
    spec = MODELS[name]
    assert weight_gib(ARCHS[spec.model_id], spec) * GIB / 1e9 == pytest.approx(published_gb, rel=0.04)


def test_deepseek_fp8_weights_exceed_eight_h100s_and_fit_eight_h200s():
    spec = MODELS["deepseek-v3"]
    weights = weight_gib(ARCHS[spec.model_id], spec)
    assert 615 < weights < 635  # ~671B FP8 parameters, embeddings at 16 bit
    assert weights > 8 * GPU_GIB["H100-80GB"] * 0.9 and weights < 8 * GPU_GIB["H200-141GB"] * 0.9
    h100 = plan_model("deepseek-v3", spec.model_copy(update={"gpu_type": "H100-80GB"}), 3000)
    assert not h100.fits and "would fit: gpus: 8, tensor_parallel_size: 8, gpu_type: H200-141GB" in h100.refusal
    declared = plan_model("deepseek-v3", spec, 3000)  # the registry's declaration, the probe's included
    assert declared.fits and declared.probe_fits and declared.gpu_type == "H200-141GB"


@pytest.mark.parametrize("name,context,kv_gib,left_gib", [
    # the reading: KV cache per GPU at the model's full context, against what is left after the weights at 0.9
    ("llama-3.3-70b", 131_072, 20.0, 6.0), ("qwen2.5-72b", 32_768, 5.0, 4.0), ("llama-3.3-70b-awq", 131_072, 40.0, 35.0),
])
def test_the_full_context_cannot_fit_and_the_protocols_longest_request_does(name, context, kv_gib, left_gib):
    spec = MODELS[name]
    arch = ARCHS[spec.model_id]
    assert arch.max_position == context
    assert kv_bytes_per_token(arch, spec.gpus) * context / GIB == pytest.approx(kv_gib, rel=0.02)
    left = 0.9 * GPU_GIB[spec.gpu_type] - weight_gib(arch, spec) / spec.gpus
    assert left == pytest.approx(left_gib, abs=1.5)
    vllm_default = plan_model(name, spec.model_copy(update={"max_model_len": context, "gpu_memory_utilization": 0.9}), 1)
    assert not vllm_default.fits  # what vLLM does when neither setting is given: it refuses to start
    plan = plan_model(name, spec, 2927)  # the lite slice's longest request bound
    assert plan.fits and plan.max_model_len == 3072 and 0.9 <= plan.gpu_memory_utilization <= 0.95
    assert plan.sequences >= 8
    kw = engine_kwargs(spec, plan)
    assert (kw["max_model_len"], kw["gpu_memory_utilization"]) == (3072, plan.gpu_memory_utilization)


def test_llama4_scout_would_size_for_ten_million_tokens_without_a_bound():
    spec = MODELS["llama-4-scout"]
    assert ARCHS[spec.model_id].max_position == 10_485_760
    assert not plan_model("llama-4-scout", spec.model_copy(update={"max_model_len": 10_485_760}), 1).fits
    assert plan_model("llama-4-scout", spec, 2927).fits


def test_every_registry_model_fits_or_is_refused_with_what_would():
    for name, spec in MODELS.items():
        if spec.provider != "vllm":
            continue
        plan = plan_model(name, spec, 2927)
        assert plan.fits or "chat template" in plan.refusal, (name, plan.refusal)
    short = plan_model("llama-3.3-70b", MODELS["llama-3.3-70b"].model_copy(update={"max_model_len": 2048}), 2927)
    assert short.refusal == "llama-3.3-70b: the longest request needs up to 2927 tokens; max_model_len would be 2048"
    v32 = plan_model("deepseek-v3.2", MODELS["deepseek-v3.2"], 2927)
    assert not v32.fits and "ships no chat template" in v32.refusal
    too_few = plan_model("llama-3.3-70b", MODELS["llama-3.3-70b"].model_copy(update={"gpus": 1, "tensor_parallel_size": 1}), 2927)
    assert "would fit: gpus: 2, tensor_parallel_size: 2; the 4-bit variant llama-3.3-70b-awq" in too_few.refusal
    assert "REFUSED: " + too_few.refusal in format_plans([too_few])


def test_request_bound_counts_bytes_and_the_second_turn():
    row = {"messages": [{"role": "user", "content": "مرحبا"}], "followup": "Revise."}  # 5 letters, 10 bytes
    one = request_bound({"messages": row["messages"]}, 256, "chat")
    assert one == 64 + 16 + 10 + 256
    assert request_bound(row, 256, "chat") == one + 64 + len("Revise.") + 256


def test_vllm_engine_uses_the_marlin_kernel_and_refuses_what_cannot_fit_before_importing_vllm(monkeypatch):
    kw = engine_kwargs(MODELS["qwen2.5-72b-awq"])
    assert kw["quantization"] == "awq_marlin"
    assert MODELS["qwen2.5-72b-awq"].output_settings()["quantization"] == "awq"  # the store key names the weights
    with pytest.raises(DoesNotFit, match="does not fit on 8x H100-80GB"):
        VLLMProvider("deepseek-v3", MODELS["deepseek-v3"].model_copy(update={"gpu_type": "H100-80GB"}), 3000)
    for key in VLLM.env:
        monkeypatch.delenv(key, raising=False)
    try:
        import vllm  # noqa: F401
    except ImportError:
        with pytest.raises(RuntimeError, match="vllm"):
            VLLMProvider("llama-3.3-70b", MODELS["llama-3.3-70b"], 3000)
        assert {k: os.environ[k] for k in VLLM.env} == {"VLLM_BATCH_INVARIANT": "1", "VLLM_ENABLE_V1_MULTIPROCESSING": "0"}


def test_estimate_prints_the_plan_and_the_refusal(tmp_path, requests_dir):
    models = {"fits": {"provider": "vllm", "model_id": "meta-llama/Llama-3.3-70B-Instruct", "revision": "a" * 40,
                       "gpus": 2, "tensor_parallel_size": 2},
              "big": {"provider": "vllm", "model_id": "deepseek-ai/DeepSeek-V3", "revision": "b" * 40, "gpus": 8,
                      "tensor_parallel_size": 8}}
    params = write_params(tmp_path / "params.yaml", models)
    res = CliRunner().invoke(estimate, ["--slice", "demo", "--params", str(params), "--requests-dir", str(requests_dir),
                                        "--out", str(tmp_path / "e.json"), "--calibration", str(tmp_path / "cal.json")])
    assert res.exit_code == 0, res.output
    assert "GPU memory plan" in res.output and "big: 8x H100-80GB: REFUSED: big does not fit" in res.output
    memory = {m["model"]: m for m in json.loads((tmp_path / "e.json").read_text())["memory"]}
    assert memory["fits"]["refusal"] is None and memory["fits"]["max_model_len"] % 256 == 0
    assert memory["big"]["options"] == ["gpus: 8, tensor_parallel_size: 8, gpu_type: H200-141GB"]
    assert memory["fits"]["weights_gib_per_gpu"] > 60 and memory["fits"]["overhead_gib"] == OVERHEAD_GIB


def test_params_yaml_declares_the_same_gpus_as_the_built_in_registry(root):
    declared = yaml.safe_load((root / "params.yaml").read_text(encoding="utf-8"))["models"]
    for name, spec in MODELS.items():
        if spec.provider == "vllm":
            assert declared[name].get("gpu_type", "H100-80GB") == spec.gpu_type, name


def test_the_workflow_refuses_what_cannot_fit_before_any_request_is_rendered(root, monkeypatch):
    from mirage.params import MODEL_SET_ENV, load_params
    from mirage.readiness import slice_refusals

    monkeypatch.delenv(MODEL_SET_ENV, raising=False)
    paper = load_params(root / "params.yaml")
    assert slice_refusals(paper, list(paper.slices.lite.models), "lite") == []
    paper.models["deepseek-v3"] = paper.models["deepseek-v3"].model_copy(update={"gpu_type": "H100-80GB"})
    assert [r.split(":")[0] for r in slice_refusals(paper, list(paper.slices.lite.models), "lite")] == [
        "deepseek-v3 does not fit on 8x H100-80GB"]
    monkeypatch.setenv(MODEL_SET_ENV, "current")
    current = load_params(root / "params.yaml")
    refused = slice_refusals(current, list(current.slices.lite.models), "lite")
    assert len(refused) == 1 and refused[0].startswith("deepseek-v3.2: deepseek-ai/DeepSeek-V3.2 ships no chat template")
