rule render:
    """Render the requests each condition sends: C1/C2/C3, RAG pools, mitigations, languages, slices."""
    input:
        corpus=artefacts.corpus(),
        harnesses=artefacts.harnesses(),
        news=artefacts.news(),
        mitigation_texts=artefacts.mitigation_texts(),
        cot_translations=artefacts.cot_translations(),
    output:
        requests=[artefacts.requests(c) for c in CONDITIONS],
        **artefacts.request_tables(),
    params:
        render=PARAMS.render.model_dump(mode="json"),
        harness_dir=lambda wildcards, input: os.path.dirname(input.harnesses[0]),
        out_dir=lambda wildcards, output: os.path.dirname(output.counts),
    log:
        artefacts.log("render"),
    conda:
        "../../envs/mirage-cpu.yaml"
    shell:
        "python -m mirage render --corpus {input.corpus} --harness-dir {params.harness_dir} --news {input.news}"
        " --mitigation-texts {input.mitigation_texts} --cot-translations {input.cot_translations}"
        " --out-dir {params.out_dir} > {log} 2>&1"
