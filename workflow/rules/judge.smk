rule judge_eval:
    """Measure the configured violence judge on the named gold sets (docs/judge.md): the single-sentence gold set and
    the realistic dev and held-out splits; the report and the leaderboard print its held-out figures next to V."""
    input:
        gold=artefacts.judge_gold_sets(),
        identities=artefacts.identities(),
    output:
        evaluation=artefacts.judge_eval("{judge}"),
    params:
        label=PARAMS.label.model_dump(mode="json"),
        gold=lambda wildcards, input: repeat("--gold", input.gold),
        out_dir=lambda wildcards, output: os.path.dirname(output.evaluation),
        data_dir=lambda wildcards, input: os.path.dirname(input.identities),
    log:
        artefacts.log("judge", "{judge}"),
    resources:
        api=judge_api_slots,
    conda:
        "../../envs/mirage-cpu.yaml"
    shell:
        "python -m mirage judge eval {params.gold} --judge {wildcards.judge} --data-dir {params.data_dir}"
        " --out {params.out_dir} > {log} 2>&1"
