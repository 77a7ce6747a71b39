rule metrics:
    """V, dV, Delta, delta_t, CAI, cross-lingual gaps, mitigation effects with paired bootstrap CIs and Holm."""
    input:
        lambda wc: expand("results/labels/{model}/{slice}.jsonl", model=slice_models(wc.slice), slice=wc.slice),
    output:
        "results/metrics/{slice}/metrics.csv",
        "results/metrics/{slice}/summary.json",
    params:
        metrics=PARAMS.metrics.model_dump(mode="json"),
        models=lambda wc: slice_models(wc.slice),
    log:
        "results/logs/metrics/{slice}.log",
    conda:
        "../../envs/mirage-cpu.yaml"
    shell:
        "python -m mirage metrics --slice {wildcards.slice} --out-dir results/metrics/{wildcards.slice} > {log} 2>&1"
