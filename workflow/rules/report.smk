rule report:
    """Figures, paper tables, the self-contained HTML report with its headline on excess over the placebo floor,
    the judge's held-out realistic and single-sentence gold scores next to V, drill-down to matched pairs, and the
    sample browser."""
    input:
        table=artefacts.metrics("{slice}")["table"],
        summary=artefacts.metrics("{slice}")["summary"],
        estimate=artefacts.estimate("{slice}"),
        labels=slice_labels,
        views=lambda wc: [v for m in slice_models(wc.slice) for v in artefacts.views(PARAMS.render, m, wc.slice)],
        requests=[artefacts.requests(c) for c in CONDITIONS],
        probes=lambda wc: [artefacts.probe(m)["lambda"] for m in probe_models(wc.slice)],
        tables7=lambda wc: [artefacts.probe(m)["table7"] for m in probe_models(wc.slice)],
        judge_eval=judge_evaluation,
        harnesses=artefacts.harnesses(),
        news=artefacts.news(),
        corpus_stats=artefacts.corpus_stats()["csv"],
        compare=compare_sections,
    output:
        page=artefacts.report("{slice}"),
        samples=artefacts.samples_page("{slice}"),
        samples_data=directory(artefacts.samples_data("{slice}")),
        figures=directory(artefacts.figures_dir("{slice}")),
        tables=directory(artefacts.tables_dir("{slice}")),
    params:
        report=PARAMS.report.model_dump(mode="json"),
        params_hash=params_hash(PARAMS),  # the page prints the whole params and their hash: any change rebuilds it
        labels=lambda wildcards, input: repeat("--labels", input.labels),
        views=lambda wildcards, input: repeat("--view", input.views),
        probes=lambda wildcards, input: repeat("--probe", input.probes),
        judge_eval=lambda wildcards, input: repeat("--judge-eval", input.judge_eval),
        harness_dir=lambda wildcards, input: os.path.dirname(input.harnesses[0]),
        requests_dir=lambda wildcards, input: os.path.dirname(input.requests[0]),
        compare=lambda wildcards, input: repeat("--compare-section", input.compare),
    log:
        artefacts.log("report", "{slice}"),
    conda:
        "../../envs/mirage-cpu.yaml"
    shell:
        "python -m mirage report --slice {wildcards.slice} --metrics {input.table} {params.labels} {params.views}"
        " --estimate {input.estimate} {params.probes} {params.judge_eval} --harness-dir {params.harness_dir}"
        " --news {input.news} --corpus-stats {input.corpus_stats} --requests-dir {params.requests_dir} {params.compare} --figures-dir {output.figures}"
        " --tables-dir {output.tables} --out {output.page} > {log} 2>&1"
