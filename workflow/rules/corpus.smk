rule corpus:
    """Instantiate T1-T6 x identity variants (+ Arabic subset), validate every pair, split lite/test."""
    input:
        identities=artefacts.identities(),
        templates=artefacts.templates(),
        harnesses=artefacts.harnesses(),
        lexicons=artefacts.lexicons(),
    output:
        prompts=artefacts.corpus(),
        **artefacts.corpus_stats(),
    params:
        corpus=PARAMS.corpus.model_dump(mode="json"),
        data_dir=lambda wildcards, input: os.path.dirname(input.identities),
    log:
        artefacts.log("corpus"),
    conda:
        "../../envs/mirage-cpu.yaml"
    shell:
        "python -m mirage corpus --data-dir {params.data_dir} --out {output.prompts} > {log} 2>&1"
