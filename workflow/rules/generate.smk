# One generation job per model x slice x condition; it writes one view file per retrieval pool x
# mitigation shard, so the dry run lists the whole matrix. Only keys missing from the model's
# content-addressed store (results/generations/{model}/store/) are sent, so a rerun (after `dvc pull`,
# a preemption or `--rerun-incomplete`) re-buys nothing; new records go to the slice's partition.
for _condition in CONDITIONS:

    rule:
        name:
            f"generate_{_condition}"
        input:
            f"results/requests/{_condition}.jsonl",
        output:
            generation_views_of(_condition),
        params:
            sampling=PARAMS.generate.model_dump(mode="json", include=SAMPLING_KEYS),
            model=lambda wc: model_spec(wc.model).model_dump(mode="json", exclude=OPERATIONAL_MODEL_FIELDS),
            slice=lambda wc: getattr(PARAMS.slices, wc.slice).model_dump(mode="json"),
            condition=_condition,
        log:
            f"results/logs/generate/{{model}}/{{slice}}/{_condition}.log",
        resources:
            gpu=model_gpus,
            api=model_api_slots,
        threads: 2
        conda:
            "../../envs/mirage-gpu.yaml"
        container:
            GPU_CONTAINER
        shell:
            "python -m mirage generate --model {wildcards.model} --slice {wildcards.slice}"
            " --condition {params.condition} > {log} 2>&1"


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
