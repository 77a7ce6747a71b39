rule metrics:
    """V, dV, Delta, delta_t, CAI, cross-lingual gaps, mitigation effects with paired bootstrap CIs and Holm; V and dV
    corrected for judge error with the human validation sample (when imported) or the judge's held-out gold figures."""
    input:
        labels=slice_labels,
        judge_eval=judge_evaluation,
        validation=validation_reports,
    output:
        table=artefacts.metrics("{slice}")["table"],
        per_prompt=artefacts.metrics("{slice}")["per_prompt"],
        summary=artefacts.metrics("{slice}")["summary"],
    params:
        metrics=PARAMS.metrics.model_dump(mode="json"),
        models=lambda wc: slice_models(wc.slice),
        labels=lambda wildcards, input: repeat("--labels", input.labels),
        judge_eval=lambda wildcards, input: repeat("--judge-eval", input.judge_eval),
        validation=lambda wildcards, input: repeat("--validation", input.validation),
    log:
        artefacts.log("metrics", "{slice}"),
    conda:
        "../../envs/mirage-cpu.yaml"
    shell:
        "python -m mirage metrics --slice {wildcards.slice} {params.labels} --out-table {output.table}"
        " --out-per-prompt {output.per_prompt} --out-summary {output.summary} {params.judge_eval} {params.validation}"
        " > {log} 2>&1"
