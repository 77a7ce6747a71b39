rule report:
    """Figures 2-6, Tables 3-15 and the self-contained HTML report with drill-down to matched pairs."""
    input:
        table=artefacts.metrics("{slice}")["table"],
        summary=artefacts.metrics("{slice}")["summary"],
        estimate=artefacts.estimate("{slice}"),
        labels=slice_labels,
        views=lambda wc: [v for m in slice_models(wc.slice) for v in artefacts.views(PARAMS.render, m, wc.slice)],
        probes=lambda wc: [artefacts.probe(m)["lambda"] for m in probe_models(wc.slice)],
        harnesses=artefacts.harnesses(),
    output:
        page=artefacts.report("{slice}"),
        figures=directory(artefacts.figures_dir("{slice}")),
        tables=directory(artefacts.tables_dir("{slice}")),
    params:
        report=PARAMS.report.model_dump(mode="json"),
        labels=lambda wildcards, input: repeat("--labels", input.labels),
        views=lambda wildcards, input: repeat("--view", input.views),
        probes=lambda wildcards, input: repeat("--probe", input.probes),
        harness_dir=lambda wildcards, input: os.path.dirname(input.harnesses[0]),
    log:
        artefacts.log("report", "{slice}"),
    conda:
        "../../envs/mirage-cpu.yaml"
    shell:
        "python -m mirage report --slice {wildcards.slice} --metrics {input.table} {params.labels} {params.views}"
        " --estimate {input.estimate} {params.probes} --harness-dir {params.harness_dir} --figures-dir {output.figures}"
        " --tables-dir {output.tables} --out {output.page} > {log} 2>&1"
