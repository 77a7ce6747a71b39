rule leaderboard_submit:
    """Bundle one model's run on a split: completions, labels, metrics and a manifest with hashes."""
    input:
        views=lambda wc: [v.format(model=wc.model, slice=wc.slice) for c in CONDITIONS for v in generation_views_of(c)],
        report="results/report/{slice}/index.html",
    output:
        "results/leaderboard/submissions/{model}--{slice}.tar.gz",
    wildcard_constraints:
        slice="demo|lite|test",
    params:
        label=PARAMS.label.model_dump(mode="json"),
        metrics=PARAMS.metrics.model_dump(mode="json"),
    log:
        "results/logs/leaderboard/submit-{model}-{slice}.log",
    conda:
        "../../envs/mirage-cpu.yaml"
    shell:
        "python -m mirage leaderboard submit --model {wildcards.model} --split {wildcards.slice}"
        " --report {input.report} --out {output} > {log} 2>&1"


rule leaderboard_verify:
    """Recompute a bundle from its raw completions; on success it becomes the board's row for model x split."""
    input:
        "results/leaderboard/submissions/{model}--{slice}.tar.gz",
    output:
        "results/leaderboard/entries/{model}--{slice}.json",
    wildcard_constraints:
        slice="demo|lite|test",
    log:
        "results/logs/leaderboard/verify-{model}-{slice}.log",
    conda:
        "../../envs/mirage-cpu.yaml"
    shell:
        "python -m mirage leaderboard verify {input} --board results/leaderboard > {log} 2>&1"


rule leaderboard_build:
    """The static board page (sortable, filterable) and leaderboard.json from the accepted entries."""
    input:
        lambda wc: expand("results/leaderboard/entries/{model}--demo.json", model=slice_models("demo")),
    output:
        "results/leaderboard/index.html",
        "results/leaderboard/leaderboard.json",
    log:
        "results/logs/leaderboard/build.log",
    conda:
        "../../envs/mirage-cpu.yaml"
    shell:
        "python -m mirage leaderboard build --board results/leaderboard > {log} 2>&1"
