# `mirage compare` for every pair named in params.yaml `compare.pairs` (target `compare_all`: all of them).


rule compare_all:
    """Every comparison named in params.yaml."""
    input:
        compare_targets(),


rule compare:
    """Paired comparison of two runs' headline claims on their shared prompts: differences with paired frame-level
    intervals, paired relabelling tests, Holm, equivalence verdicts, a figure and a report section."""
    input:
        labels=compare_labels,
    output:
        table=artefacts.compare("{slice}", "{pair}")["table"],
        summary=artefacts.compare("{slice}", "{pair}")["summary"],
        figure=artefacts.compare("{slice}", "{pair}")["figure"],
        section=artefacts.compare("{slice}", "{pair}")["section"],
    wildcard_constraints:
        pair="[A-Za-z0-9][A-Za-z0-9._-]*",
    params:
        metrics=PARAMS.metrics.model_dump(mode="json"),
        compare=PARAMS.compare.model_dump(mode="json"),
        a=lambda wc: compare_pair(wc).a,
        b=lambda wc: compare_pair(wc).b,
        labels=lambda wildcards, input: repeat("--labels", input.labels),
    log:
        artefacts.log("compare", "{slice}", "{pair}"),
    conda:
        "../../envs/mirage-cpu.yaml"
    shell:
        "python -m mirage compare {params.a:q} {params.b:q} --slice {wildcards.slice} --name {wildcards.pair}"
        " {params.labels} --out-table {output.table} --out-summary {output.summary} --out-figure {output.figure}"
        " --out-section {output.section} > {log} 2>&1"
