rule label:
    """Violence labels (reasoning and answer separately for C2), parsed C3 decisions, CoT pathways."""
    input:
        views=slice_views,
        markers=[artefacts.store_marker("{model}", "{slice}", c) for c in CONDITIONS],
        harnesses=artefacts.harnesses(),
        identities=artefacts.identities(),
    output:
        labels=artefacts.labels("{model}", "{slice}"),
    params:
        label=PARAMS.label.model_dump(mode="json"),
        judge=lambda wildcards: PARAMS.judge_of(wildcards.slice),
        views=lambda wildcards, input: repeat("--view", input.views),
        data_dir=lambda wildcards, input: os.path.dirname(input.identities),
    log:
        artefacts.log("label", "{model}", "{slice}"),
    resources:
        api=judge_api_slots,
    conda:
        "../../envs/mirage-cpu.yaml"
    shell:
        "python -m mirage label --model {wildcards.model} --slice {wildcards.slice} {params.views}"
        " --data-dir {params.data_dir} --out {output.labels} > {log} 2>&1"
