rule metrics:
    """V, dV, Delta, delta_t, CAI, cross-lingual gaps, mitigation effects with paired bootstrap CIs and Holm."""
    input:
        labels=slice_labels,
    output:
        table=artefacts.metrics("{slice}")["table"],
        per_prompt=artefacts.metrics("{slice}")["per_prompt"],
        summary=artefacts.metrics("{slice}")["summary"],
    params:
        metrics=PARAMS.metrics.model_dump(mode="json"),
        models=lambda wc: slice_models(wc.slice),
        labels=lambda wildcards, input: repeat("--labels", input.labels),
    log:
        artefacts.log("metrics", "{slice}"),
    conda:
        "../../envs/mirage-cpu.yaml"
    shell:
        "python -m mirage metrics --slice {wildcards.slice} {params.labels} --out-table {output.table}"
        " --out-per-prompt {output.per_prompt} --out-summary {output.summary} > {log} 2>&1"
