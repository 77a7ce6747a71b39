rule pilot:
    """App. B calibration: the decision distribution of every identity-masked case file on one model
    (cases at floor or ceiling are flagged). The demo runs a quick version on the embedded model."""
    input:
        identities=artefacts.identities(),
        templates=artefacts.templates(),
        harnesses=artefacts.harnesses(),
        lexicons=artefacts.lexicons(),
        mitigation_texts=artefacts.mitigation_texts(),
    output:
        pilot=artefacts.pilot("{model}"),
    params:
        corpus=PARAMS.corpus.model_dump(mode="json"),
        model=lambda wc: model_spec(wc.model).output_settings(),
        data_dir=lambda wildcards, input: os.path.dirname(input.identities),
        # the demo keeps the embedded model's pilot short: 2 case files per harness, 1 sample, 12 tokens
        options=lambda wc: "--samples 1 --max-tokens 12 --max-cases 2" if wc.model in slice_models("demo") else "--samples 5",
    log:
        artefacts.log("pilot", "{model}"),
    resources:
        gpu=model_gpus,
        api=model_api_slots,
        slurm_partition=model_partition,
    conda:
        "../../envs/mirage-cpu.yaml"
    shell:
        "python -m mirage corpus --pilot {wildcards.model} {params.options} --data-dir {params.data_dir}"
        " --mitigation-texts {input.mitigation_texts} --pilot-out {output.pilot} > {log} 2>&1"
