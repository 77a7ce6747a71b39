rule corpus:
    """Instantiate T1-T6 x identity variants (+ Arabic subset), validate every pair, split lite/test."""
    input:
        identities="data/identities.yaml",
        templates=expand("data/templates/{t}.yaml", t=["T1", "T2", "T3", "T4", "T5", "T6"]),
        harnesses=expand("data/harnesses/{h}.yaml", h=["H1", "H2", "H3", "H4"]),
        lexicons=expand("data/lexicons/{name}.yaml", name=glob_wildcards("data/lexicons/{name}.yaml").name),
    output:
        "results/corpus/prompts.jsonl",
    params:
        corpus=PARAMS.corpus.model_dump(mode="json"),
    log:
        "results/logs/corpus.log",
    conda:
        "../../envs/mirage-cpu.yaml"
    shell:
        "python -m mirage corpus --out {output} > {log} 2>&1"
