rule pilot:
    """App. B calibration: the decision distribution of every identity-masked case file on one model
    (cases at floor or ceiling are flagged). The demo runs a quick version on the embedded model."""
    input:
        harnesses=expand("data/harnesses/{h}.yaml", h=["H1", "H2", "H3", "H4"]),
        texts="data/mitigations/texts.yaml",
    output:
        "results/corpus/pilot-{model}.json",
    params:
        corpus=PARAMS.corpus.model_dump(mode="json"),
        model=lambda wc: model_spec(wc.model).model_dump(mode="json", exclude=OPERATIONAL_MODEL_FIELDS),
        # the demo keeps the embedded model's pilot under about a minute of CPU
        options=lambda wc: "--samples 1 --max-tokens 12 --max-cases 2" if wc.model in slice_models("demo") else "--samples 5",
    log:
        "results/logs/pilot/{model}.log",
    resources:
        api=model_api_slots,
    conda:
        "../../envs/mirage-cpu.yaml"
    shell:
        "python -m mirage corpus --pilot {wildcards.model} {params.options} --pilot-out {output} > {log} 2>&1"
