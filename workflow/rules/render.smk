rule render:
    """Render the requests each condition sends: C1/C2/C3, RAG pools, mitigations, languages, slices."""
    input:
        corpus="results/corpus/prompts.jsonl",
        harnesses=expand("data/harnesses/{h}.yaml", h=["H1", "H2", "H3", "H4"]),
        news=expand("data/news/{f}.jsonl", f=glob_wildcards("data/news/{f}.jsonl").f),
        mitigations=expand("data/mitigations/{f}", f=glob_wildcards("data/mitigations/{f}").f),
    output:
        expand("results/requests/{condition}.jsonl", condition=CONDITIONS),
        "results/requests/counts.csv",
    params:
        render=PARAMS.render.model_dump(mode="json"),
    log:
        "results/logs/render.log",
    conda:
        "../../envs/mirage-cpu.yaml"
    shell:
        "python -m mirage render > {log} 2>&1"
