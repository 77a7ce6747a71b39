import pytest

from mirage.generate.params import GenerateParams, ModelSpec, default_models
from mirage.generate.runner import Settings, make_sample
from mirage.generate.store import Store, sample_seed
from mirage.io import DataError

ST = Settings(n_samples=2, max_tokens=40, temperature=0.7, top_p=1.0, root_seed=1)
SENT = {"messages": [{"role": "user", "content": "hello"}]}


def key(spec, st=ST, sent=SENT, i=0, rid="r1"):
    return make_sample(spec, True, rid, i, sent, st).key


def test_keys_change_with_model_revision_params_input_but_not_operational_settings():
    base = default_models()["gpt-4o"]
    k = key(base)
    assert key(base.model_copy(update={"model_id": "gpt-4o-2024-11-20"})) != k
    assert key(base.model_copy(update={"revision": "other"})) != k
    assert key(base.model_copy(update={"provider": "vllm"})) != k
    assert key(base, Settings(2, 41, 0.7, 1.0, 1)) != k
    assert key(base, Settings(2, 40, 0.8, 1.0, 1)) != k
    assert key(base, Settings(2, 40, 0.7, 0.9, 1)) != k
    assert key(base, Settings(2, 40, 0.7, 1.0, 2)) != k  # root seed -> sample seed
    assert key(base, i=1) != k
    assert key(base, sent={"messages": [{"role": "user", "content": "hello!"}]}) != k
    # operational settings and n_samples do not enter the key
    ops = base.model_copy(update={"max_concurrency": 64, "max_retries": 0, "timeout_s": 1.0, "batch_size": 3,
                                  "requests_per_minute": 10, "use_batch_api": True})
    assert key(ops) == k
    assert key(base, Settings(5, 40, 0.7, 1.0, 1)) == k


def test_local_quantization_and_two_models_never_share_entries():
    models = default_models()
    assert key(models["qwen2.5-72b"]) != key(models["qwen2.5-72b-awq"])
    assert key(models["qwen2.5-72b"].model_copy(update={"quantization": "fp8"})) != key(models["qwen2.5-72b"])
    assert key(models["gpt-4o"]) != key(models["gemini-1.5-pro"])


def test_sample_seeds_distinct_across_prompts_and_samples():
    seeds = {sample_seed(7, f"r{j}", i) for j in range(500) for i in range(5)}
    assert len(seeds) == 2500
    assert sample_seed(7, "r1", 0) == sample_seed(7, "r1", 0)


def test_store_unions_shards_skips_truncated_tail_and_retries_errors(tmp_path):
    with Store.open(tmp_path / "s") as a:
        a.append({"key": "k1", "text": "one", "error": None})
        a.append({"key": "k2", "text": "", "error": "HTTP 500"})
    with Store.open(tmp_path / "s") as b:
        b.append({"key": "k1", "text": "dup", "error": None})
        b.append({"key": "k2", "text": "two", "error": None})
    shards = sorted((tmp_path / "s").glob("*.jsonl"))
    assert len(shards) == 2
    with open(shards[0], "a") as fh:
        fh.write('{"key": "k3", "te')  # killed mid-write
    s = Store.open(tmp_path / "s")
    assert sorted(s.done) == ["k1", "k2"] and not s.failed
    # one record per key, chosen independently of shard order (no `created`: canonical JSON order)
    assert s.done["k1"]["text"] == "dup"
    bad = tmp_path / "s" / "zz.jsonl"
    bad.write_text('{"key": "k4"}\nnot json\n{"key": "k5"}\n')
    with pytest.raises(DataError, match=r"zz\.jsonl:2"):
        Store.open(tmp_path / "s")


def test_failed_sample_is_not_done(tmp_path):
    with Store.open(tmp_path) as s:
        s.append({"key": "k", "text": "", "error": "timeout"})
        assert "k" not in s.done and s.failed["k"]["error"] == "timeout"


def test_params_validation_names_allowed_values():
    with pytest.raises(ValueError, match="local.*vllm.*openai.*anthropic|'local', 'vllm', 'openai' or 'anthropic'"):
        ModelSpec(provider="bedrock")
    with pytest.raises(ValueError, match="missing C2"):
        GenerateParams(max_tokens={"C1": 10, "C3": 10})
    with pytest.raises(ValueError, match="chat"):
        ModelSpec(provider="anthropic", mode="completion")
