rule probe:
    """Logit-lens probe (App. E): per-layer violence-token log-odds on 80 matched pairs."""
    input:
        "results/corpus/prompts.jsonl",
    output:
        "results/probe/{model}/lambda.csv",
        "results/probe/{model}/table7.csv",
        "results/probe/{model}/token_set.json",
    params:
        probe=PARAMS.probe.model_dump(mode="json"),
        model=lambda wc: model_spec(wc.model).model_dump(mode="json", exclude=OPERATIONAL_MODEL_FIELDS),
    log:
        "results/logs/probe/{model}.log",
    resources:
        gpu=model_gpus,
    conda:
        "../../envs/mirage-gpu.yaml"
    container:
        GPU_CONTAINER
    shell:
        "python -m mirage probe --model {wildcards.model} --out-dir results/probe/{wildcards.model} > {log} 2>&1"
