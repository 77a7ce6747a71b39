rule label:
    """Violence labels (reasoning and answer separately for C2), parsed C3 decisions, CoT pathways."""
    input:
        [view for condition in CONDITIONS for view in generation_views_of(condition)],
    output:
        "results/labels/{model}/{slice}.jsonl",
    params:
        label=PARAMS.label.model_dump(mode="json"),
    log:
        "results/logs/label/{model}/{slice}.log",
    conda:
        "../../envs/mirage-cpu.yaml"
    shell:
        "python -m mirage label --model {wildcards.model} --slice {wildcards.slice} --out {output} > {log} 2>&1"
