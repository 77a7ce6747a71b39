rule leaderboard_submit:
    """Bundle one model's run on a split: completions, labels, metrics and a manifest with hashes."""
    input:
        views=lambda wc: artefacts.views(PARAMS.render, wc.model, wc.slice),
        requests=[artefacts.requests(c) for c in CONDITIONS],
        report=artefacts.report("{slice}"),
        judge_eval=judge_evaluation,
    output:
        bundle=artefacts.submission("{model}", "{slice}"),
    wildcard_constraints:
        slice="demo|lite|test",
    params:
        label=PARAMS.label.model_dump(mode="json"),
        metrics=PARAMS.metrics.model_dump(mode="json"),
        views_dir=lambda wildcards, input: os.path.dirname(os.path.dirname(input.views[0])),
        requests_dir=lambda wildcards, input: os.path.dirname(input.requests[0]),
    log:
        artefacts.log("leaderboard", "submit-{model}-{slice}"),
    conda:
        "../../envs/mirage-cpu.yaml"
    shell:
        "python -m mirage leaderboard submit --model {wildcards.model} --split {wildcards.slice} --views {params.views_dir}"
        " --requests-dir {params.requests_dir} --report {input.report} --out {output.bundle} > {log} 2>&1"


rule leaderboard_verify:
    """Recompute a bundle from its raw completions; on success it becomes the board's row for model x split (dated
    by its completions, so a rebuild of the board is byte-identical)."""
    input:
        bundle=artefacts.submission("{model}", "{slice}"),
        requests=[artefacts.requests(c) for c in CONDITIONS],
        judge_eval=judge_evaluation,
    output:
        entry=artefacts.board_entry("{model}", "{slice}"),
    wildcard_constraints:
        slice="demo|lite|test",
    params:
        board=lambda wildcards, output: os.path.dirname(os.path.dirname(output.entry)),
        requests_dir=lambda wildcards, input: os.path.dirname(input.requests[0]),
    log:
        artefacts.log("leaderboard", "verify-{model}-{slice}"),
    conda:
        "../../envs/mirage-cpu.yaml"
    shell:
        "python -m mirage leaderboard verify {input.bundle} --board {params.board} --requests-dir {params.requests_dir}"
        " --date-from-bundle > {log} 2>&1"


rule leaderboard_build:
    """The static board page (sortable, filterable) and leaderboard.json from the accepted entries."""
    input:
        entries=lambda wc: [artefacts.board_entry(m, "demo") for m in slice_models("demo")],
    output:
        **artefacts.board_page(),
    params:
        board=lambda wildcards, output: os.path.dirname(output.page),
    log:
        artefacts.log("leaderboard", "build"),
    conda:
        "../../envs/mirage-cpu.yaml"
    shell:
        "python -m mirage leaderboard build --board {params.board} > {log} 2>&1"
