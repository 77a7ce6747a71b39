# `mirage compare` for every pair named in params.yaml `compare.pairs`, `mirage over-time` for every `compare.series`
# and `mirage judges` for every `compare.judges` entry (target `compare_all`: all of them).


rule compare_all:
    """Every comparison, series and judge set named in params.yaml."""
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


rule over_time:
    """Bias over time: every pooled headline claim of a model family's snapshots against release date on the prompts
    all of them have, and the compare verdict of each step (params `compare.series.NAME`)."""
    input:
        labels=series_labels,
    output:
        table=artefacts.series("{slice}", "{series}")["table"],
        summary=artefacts.series("{slice}", "{series}")["summary"],
        figure=artefacts.series("{slice}", "{series}")["figure"],
        section=artefacts.series("{slice}", "{series}")["section"],
    wildcard_constraints:
        series="[A-Za-z0-9][A-Za-z0-9._-]*",
    params:
        metrics=PARAMS.metrics.model_dump(mode="json"),
        compare=PARAMS.compare.model_dump(mode="json"),
        snapshots=lambda wc: compare_series(wc).model_dump(mode="json"),
        labels=lambda wildcards, input: repeat("--labels", input.labels),
    log:
        artefacts.log("over-time", "{slice}", "{series}"),
    conda:
        "../../envs/mirage-cpu.yaml"
    shell:
        "python -m mirage over-time {wildcards.series} {params.labels} --out-table {output.table} > {log} 2>&1"


rule judges:
    """Judge sensitivity of one model's completions (params `compare.judges`): every headline claim under each judge,
    each jury member by its own votes, against the first with paired intervals and verdicts, sample agreement, and the
    members' gold-set error correlation (effective number of independent judges)."""
    input:
        labels=judge_run_labels,
        evaluations=judge_run_evaluations,
    output:
        table=artefacts.judge_sensitivity("{slice}", "{model}")["table"],
        summary=artefacts.judge_sensitivity("{slice}", "{model}")["summary"],
        section=artefacts.judge_sensitivity("{slice}", "{model}")["section"],
    params:
        metrics=PARAMS.metrics.model_dump(mode="json"),
        compare=PARAMS.compare.model_dump(mode="json"),
        labels=lambda wildcards, input: repeat("--labels", input.labels),
        evaluations=lambda wildcards, input: repeat("--judge-eval", input.evaluations),
    log:
        artefacts.log("judges", "{slice}", "{model}"),
    conda:
        "../../envs/mirage-cpu.yaml"
    shell:
        "python -m mirage judges --model {wildcards.model} --slice {wildcards.slice} {params.labels} {params.evaluations}"
        " --out-table {output.table} > {log} 2>&1"
