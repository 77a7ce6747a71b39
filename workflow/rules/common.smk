# Validate params.yaml once (errors name the key and allowed values) and derive the job matrix from it.
from mirage.layout import request_shards
from mirage.params import validate_params

PARAMS = validate_params(config, "params.yaml")
CONDITIONS = ["C1", "C2", "C3"]
SLICES = ["demo", "lite", "full"]
# Built from containers/Dockerfile.gpu (see containers/README.md); used with `--sdm apptainer`.
GPU_CONTAINER = "docker://mirage-bench/mirage:0.1.0-gpu"
# Settings that change how a job runs but not what it produces: left out of rule params so that
# changing them reruns nothing (the completion store's keys leave them out too).
OPERATIONAL_MODEL_FIELDS = {
    "max_concurrency", "requests_per_minute", "max_retries", "timeout_s", "use_batch_api",
    "batch_min_requests", "batch_size", "price_in_per_mtok", "price_out_per_mtok", "throughput_tok_s",
    "api_key_env", "allow_unpinned",
}
SAMPLING_KEYS = {"temperature", "top_p", "n_samples", "max_tokens", "seed"}


def generation_views_of(condition):
    """The view shards one generation job writes (wildcards model and slice left open)."""
    return [
        f"results/generations/{{model}}/{{slice}}/{condition}/{shard}.jsonl"
        for shard in request_shards(PARAMS.render, condition)
    ]


def slice_models(slice_name):
    return list(getattr(PARAMS.slices, slice_name).models)


def model_spec(name):
    return PARAMS.models[name]


def model_gpus(wildcards):
    return model_spec(wildcards.model).gpus


def model_api_slots(wildcards):
    """API models take one slot of the `api` resource; cap it with --resources api=N."""
    return 1 if model_spec(wildcards.model).provider in ("openai", "anthropic") else 0


def probe_models(slice_name):
    """Open-weight models of a slice get the logit-lens probe; the lite split skips it (App. J: a cheaper rerun)."""
    if slice_name == "lite":
        return []
    return [m for m in slice_models(slice_name) if model_spec(m).provider in ("local", "vllm")]


def slice_targets(slice_name):
    return [
        f"results/report/{slice_name}/index.html",
        f"results/estimate/{slice_name}.json",
    ] + [f"results/probe/{m}/table7.csv" for m in probe_models(slice_name)]


wildcard_constraints:
    slice="demo|lite|full",
    condition="C1|C2|C3",
    model="[A-Za-z0-9._-]+",
