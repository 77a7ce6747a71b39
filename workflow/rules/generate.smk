# One generation job per model x slice x condition; it writes one view file per retrieval pool x
# mitigation shard (so the dry run lists the whole matrix) and the marker of its store partition. Only
# keys missing from the model's content-addressed store are sent, so a rerun (after `dvc pull`, a
# preemption or `--rerun-incomplete`) re-buys nothing. A job whose calls still fail exits 1 after storing
# what succeeded; the next run retries exactly the failed calls (generate.retry_rounds, max_attempts).
# Progress goes to the console, every message also to the log.
for _condition in CONDITIONS:

    rule:
        name:
            f"generate_{_condition}"
        input:
            requests=artefacts.requests(_condition),
        output:
            views=views_of(_condition),
            marker=artefacts.store_marker("{model}", "{slice}", _condition),
        params:
            sampling=lambda wc: PARAMS.generate.model_dump(mode="json", include={"temperature", "top_p", "n_samples", "max_tokens", "seed"}),
            model=lambda wc: model_spec(wc.model).output_settings(),
            slice=lambda wc: getattr(PARAMS.slices, wc.slice).model_dump(mode="json", exclude={"models"}),
            condition=_condition,
            store=lambda wc: artefacts.store(wc.model),
            views_dir=lambda wc, output: os.path.dirname(output.views[0]),
        log:
            artefacts.log("generate", "{model}", "{slice}", _condition),
        resources:
            gpu=model_gpus,
            api=model_api_slots,
            slurm_partition=model_partition,
        threads: 2
        conda:
            "../../envs/mirage-gpu.yaml"
        container:
            GPU_CONTAINER
        shell:
            "python -m mirage devices --gpus {resources.gpu} -- python -m mirage generate --model {wildcards.model} --slice {wildcards.slice} --condition {params.condition}"
            " --requests {input.requests} --store {params.store} --views-dir {params.views_dir} --marker {output.marker}"
            " --log {log}"


rule estimate:
    """Request rows, requests, samples, calls, tokens, GPU-hours, API cost and wall time of the whole slice (every
    call, whatever the stores hold, so the file is the same on every machine); a calibration (`mirage estimate
    --calibrate`, machine-specific, so never built here) is read when present."""
    input:
        requests=[artefacts.requests(c) for c in CONDITIONS],
        calibration=lambda wc: [p for p in [artefacts.calibration()] if os.path.exists(p)],
    output:
        estimate=artefacts.estimate("{slice}"),
    params:
        models=lambda wc: [model_spec(m).model_dump(mode="json") for m in slice_models(wc.slice)],
        slice=lambda wc: getattr(PARAMS.slices, wc.slice).model_dump(mode="json"),
        judge=lambda wc: [model_spec(m).model_dump(mode="json") for m in judge_members(PARAMS.judge_of(wc.slice))
                          if m in PARAMS.models],
        requests_dir=lambda wildcards, input: os.path.dirname(input.requests[0]),
        calibration=artefacts.calibration(),
    log:
        artefacts.log("estimate", "{slice}"),
    conda:
        "../../envs/mirage-cpu.yaml"
    shell:
        "python -m mirage estimate --slice {wildcards.slice} --whole-slice --requests-dir {params.requests_dir}"
        " --calibration {params.calibration} --out {output.estimate} > {log} 2>&1"
