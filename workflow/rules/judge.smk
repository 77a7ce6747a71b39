rule judge_eval:
    """Measure a violence judge against the public gold set (docs/judge.md): results/judge/{judge}/judge_eval.json."""
    input:
        gold="data/judge/gold.jsonl",
        identities="data/identities.yaml",
    output:
        "results/judge/{judge}/judge_eval.json",
    params:
        label=PARAMS.label.model_dump(mode="json"),
    log:
        "results/logs/judge/{judge}.log",
    conda:
        "../../envs/mirage-cpu.yaml"
    shell:
        "python -m mirage judge eval --gold {input.gold} --judge {wildcards.judge} --out results/judge/{wildcards.judge} > {log} 2>&1"
