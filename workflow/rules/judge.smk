rule judge_eval:
    """Measure the configured violence judge against the public gold set (docs/judge.md); the report shows its
    F1, Arabic F1 and identity invariance next to every V."""
    input:
        gold=artefacts.judge_gold(),
        identities=artefacts.identities(),
    output:
        evaluation=artefacts.judge_eval("{judge}"),
    params:
        label=PARAMS.label.model_dump(mode="json"),
        out_dir=lambda wildcards, output: os.path.dirname(output.evaluation),
        data_dir=lambda wildcards, input: os.path.dirname(input.identities),
    log:
        artefacts.log("judge", "{judge}"),
    conda:
        "../../envs/mirage-cpu.yaml"
    shell:
        "python -m mirage judge eval --gold {input.gold} --judge {wildcards.judge} --data-dir {params.data_dir}"
        " --out {params.out_dir} > {log} 2>&1"
