rule generate:
    """Sample completions for one model x slice x condition into the model's content-addressed store.

    Only keys missing from results/generations/{model}/store are sent, so a rerun (e.g. after
    `dvc pull`, a preemption or `--rerun-incomplete`) re-buys nothing.
    """
    input:
        "results/requests/{condition}.jsonl",
    output:
        "results/generations/{model}/{slice}/{condition}.jsonl",
    params:
        sampling=PARAMS.generate.model_dump(mode="json", include=SAMPLING_KEYS),
        model=lambda wc: model_spec(wc.model).model_dump(mode="json", exclude=OPERATIONAL_MODEL_FIELDS),
        slice=lambda wc: getattr(PARAMS.slices, wc.slice).model_dump(mode="json"),
    log:
        "results/logs/generate/{model}/{slice}/{condition}.log",
    resources:
        gpu=model_gpus,
        api=model_api_slots,
    threads: 2
    conda:
        "../../envs/mirage-gpu.yaml"
    container:
        GPU_CONTAINER
    shell:
        "python -m mirage generate --model {wildcards.model} --slice {wildcards.slice} --condition {wildcards.condition}"
        " --out {output} > {log} 2>&1"


rule estimate:
    """Requests, tokens, GPU-hours and API cost of a slice, before anything runs (paper Table 15)."""
    input:
        expand("results/requests/{condition}.jsonl", condition=CONDITIONS),
    output:
        "results/estimate/{slice}.json",
    params:
        models=lambda wc: [model_spec(m).model_dump(mode="json") for m in slice_models(wc.slice)],
        slice=lambda wc: getattr(PARAMS.slices, wc.slice).model_dump(mode="json"),
    log:
        "results/logs/estimate/{slice}.log",
    conda:
        "../../envs/mirage-cpu.yaml"
    shell:
        "python -m mirage estimate --slice {wildcards.slice} --out {output} > {log} 2>&1"
