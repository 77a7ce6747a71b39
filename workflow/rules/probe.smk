rule probe:
    """Logit-lens probe (App. E): per-layer violence-token log-odds on 80 matched pairs."""
    input:
        prompts=artefacts.corpus(),
        stems=artefacts.probe_stems(),
        exclusions=artefacts.probe_exclusions(),
    output:
        **artefacts.probe("{model}"),
    params:
        probe=PARAMS.probe.model_dump(mode="json"),
        model=lambda wc: model_spec(wc.model).output_settings(),
        out_dir=lambda wildcards, output: os.path.dirname(output.table7),
    log:
        artefacts.log("probe", "{model}"),
    resources:
        gpu=model_gpus,
        slurm_partition=model_partition,
    conda:
        "../../envs/mirage-gpu.yaml"
    container:
        GPU_CONTAINER
    shell:
        "python -m mirage devices --gpus {resources.gpu} -- python -m mirage probe --model {wildcards.model} --prompts {input.prompts} --stems {input.stems}"
        " --exclusions {input.exclusions} --out-dir {params.out_dir} > {log} 2>&1"
