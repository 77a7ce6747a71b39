rule report:
    """Figures 2-6, Tables 3-15 and the self-contained HTML report with drill-down to matched pairs."""
    input:
        metrics="results/metrics/{slice}/metrics.csv",
        summary="results/metrics/{slice}/summary.json",
        estimate="results/estimate/{slice}.json",
        labels=lambda wc: expand("results/labels/{model}/{slice}.jsonl", model=slice_models(wc.slice), slice=wc.slice),
        probes=lambda wc: [f"results/probe/{m}/table7.csv" for m in probe_models(wc.slice)],
    output:
        "results/report/{slice}/index.html",
    params:
        report=PARAMS.report.model_dump(mode="json"),
    log:
        "results/logs/report/{slice}.log",
    conda:
        "../../envs/mirage-cpu.yaml"
    shell:
        "python -m mirage report --slice {wildcards.slice} > {log} 2>&1"
