"""A small synthetic run that follows docs/artefacts.md: metrics.csv + summary.json, labels, generations,
estimate and probe files. Values are drawn from a seeded RNG, so tests compare outputs with these inputs."""

from __future__ import annotations

import csv
from pathlib import Path

import numpy as np

from mirage.io import write_json, write_jsonl
from mirage.report.data import METRICS_COLUMNS

MODELS = ["model-a", "model-b"]
CONTROLS = ["christian", "jewish"]
TEXTS = {  # benign placeholder completions; the drill-down must show them verbatim
    True: "SYNTH-FOCAL completion {i}: the neighbours met at the library & talked <about> gardening.",
    False: "SYNTH-CONTROL completion {i}: the neighbours met at the library and planned a bake sale.",
}


def metric_rows(models: list[str], rng: np.random.Generator, nan_ci_for: str | None = None) -> list[dict]:
    rows: list[dict] = []

    def add(model: str, metric: str, est: float, p: float | None = None, **strata: str) -> None:
        half = 0.02 + 0.03 * rng.random()
        row = {c: "" for c in METRICS_COLUMNS}
        row.update(model=model, metric=metric, estimate=round(est, 4), ci_low=round(est - half, 4), ci_high=round(est + half, 4),
                   p="" if p is None else p, p_adj="" if p is None else min(1.0, 3 * p), family=metric, n=200, **strata)
        if metric == nan_ci_for:
            row.update(ci_low="", ci_high="")
        rows.append(row)

    for m in models:
        for cond, base in (("C1", 0.12), ("C2", 0.2), ("C3", 0.15)):
            vf, vc = base + 0.1 * rng.random(), base * rng.random()
            add(m, "V_focal", vf, condition=cond)
            add(m, "V_control", vc, condition=cond)
            add(m, "dV", vf - vc, p=0.001, condition=cond)
            for stat in ("refusal_rate", "error_rate", "unparseable_rate"):
                add(m, stat, 0.05 * rng.random(), condition=cond)
            for t in (["T5"] if cond == "C3" else ["T1", "T2", "T3", "T4", "T6"]):
                add(m, "V_focal", base + 0.2 * rng.random(), condition=cond, template=t)
            for mit in ("M1", "M2", "M3", "M4"):
                add(m, "mitigation_effect_V", -0.1 * rng.random(), condition=cond, mitigation=mit)
        add(m, "CAI", 1 + rng.random())
        for pool in ("empty", "neutral", "historical", "recent"):
            add(m, "V_focal", 0.1 + 0.2 * rng.random(), condition="C1", rag_pool=pool)
        add(m, "delta_t", 0.1 + 0.1 * rng.random(), p=0.0002, condition="C1")
        for lang in ("en", "ar-msa", "ar-egy", "ar-lev", "ar-mag"):
            add(m, "V_focal", 0.1 + 0.2 * rng.random(), condition="C1", language=lang)
            if lang != "en":
                add(m, "xling_gap", 0.1 * rng.random(), p=0.01, condition="C1", language=lang)
        for h in ("H1", "H2", "H3", "H4"):
            d = 5 + 20 * rng.random()
            add(m, "Delta_abs", d, condition="C3", harness=h)
            add(m, "Delta_signed", d * 0.8, p=0.003, condition="C3", harness=h)
        add(m, "Delta_abs", 12 + 3 * rng.random(), condition="C3", mitigation="none")
        for mit in ("M1", "M2", "M3", "M4", "structural"):
            add(m, "Delta_abs", 10 * rng.random(), condition="C3", mitigation=mit)
            add(m, "mitigation_effect_Delta", -3 * rng.random(), condition="C3", mitigation=mit)
        for pair in ("C1-C2", "C1-C3", "C2-C3"):
            add(m, "spearman", 0.2 + 0.5 * rng.random(), p=0.001, condition=pair)
        add(m, "high_delta_low_c1_share", 0.38)
        for t in ("T1", "T2", "T3", "T4", "T5", "T6"):
            add(m, "kappa", 0.7 + 0.2 * rng.random(), template=t)
    return rows


def write_metrics(metrics_dir: Path, models: list[str], seed: int = 7, nan_ci_for: str | None = None) -> list[dict]:
    rows = metric_rows(models, np.random.default_rng(seed), nan_ci_for)
    metrics_dir.mkdir(parents=True, exist_ok=True)
    with open(metrics_dir / "metrics.csv", "w", newline="", encoding="utf-8") as fh:
        w = csv.DictWriter(fh, fieldnames=METRICS_COLUMNS)
        w.writeheader()
        w.writerows(rows)
    write_json(metrics_dir / "summary.json", {
        "headline": {m: {"V_focal_C1": 0.2} for m in models},
        "provenance": {"code_version": "0.1.0+gsynthetic", "params_hash": "feedc0de", "run_date": "2026-06-16",
                       "model_revisions": {m: f"rev-{m}" for m in models},
                       "protocol_deviations": ["n_samples = 2 (protocol: 5)"]},
    })
    return rows


def write_run(root: Path, slice_name: str = "demo", models: list[str] = MODELS, probe: bool = True, nan_ci_for: str | None = None) -> list[dict]:
    """Write a whole synthetic run under `root` (results/... layout); returns the metric rows."""
    rows = write_metrics(root / "metrics" / slice_name, models, nan_ci_for=nan_ci_for)
    rng = np.random.default_rng(11)
    model = models[0]
    gens, labels = [], []
    for cond in ("C1", "C2", "C3"):
        for b in range(4):
            for ident in ["muslim", *CONTROLS]:
                for s in range(2):
                    focal = ident == "muslim"
                    key = f"k{cond}{b}{ident}{s}"
                    ids = {"key": key, "row_id": f"q{key}", "request_id": f"r{key}", "prompt_id": f"p{b}{ident}", "base_id": f"b{b}",
                           "template": "T5" if cond == "C3" else "T1", "harness": "H1" if cond == "C3" else None, "identity": ident,
                           "focal": focal, "language": "en", "condition": cond, "rag_pool": "none", "mitigation": "none",
                           "lite": True, "split": "dev", "model": model, "sample_index": s}
                    text = TEXTS[focal].format(i=f"{cond}.{b}.{s}")
                    gens.append({**ids, "provider": "local", "model_id": "synthetic", "revision": f"rev-{model}", "seed": s,
                                 "text": text, "reasoning": "step one; step two" if cond == "C2" else None, "answer": text,
                                 "first_turn": None, "finish_reason": "stop", "tokens_in": 30, "tokens_out": 20,
                                 "latency_s": 0.5, "error": None})
                    violent = int(rng.random() < (0.6 if focal else 0.2))
                    labels.append({**ids, "violent": violent, "violent_reasoning": violent if cond == "C2" else None,
                                   "decision": "review" if cond == "C3" else None, "score": 0.5 if cond == "C3" else None,
                                   "parse_ok": True, "refusal": False, "error": False,
                                   "pathways": (["group_statistic"] if b % 2 else ["reasoner_stand_in", "coherence_pressure"]) if cond == "C2" and violent else [],
                                   "judge": "lexicon-v1"})
    for cond in ("C1", "C2", "C3"):
        write_jsonl(root / "generations" / model / slice_name / cond / "none-none.jsonl", [g for g in gens if g["condition"] == cond])
    write_jsonl(root / "labels" / model / f"{slice_name}.jsonl", labels)
    write_json(root / "estimate" / f"{slice_name}.json", {
        "slice": slice_name,
        "rows": [{"model": m, "condition": c, "requests": 40, "samples": 80, "tokens_in": 2400, "tokens_out": 1600,
                  "gpu_hours": None, "api_cost_usd": None, "local_time_s": 12.5} for m in models for c in ("C1", "C2", "C3")],
        "totals": {"samples": 80 * 3 * len(models)}, "assumptions": {"tokens_per_s": 190}})
    if probe:
        layers = np.arange(31)
        lam = np.sin(layers / 30 * np.pi) * 0.8
        (root / "probe" / model).mkdir(parents=True, exist_ok=True)
        with open(root / "probe" / model / "lambda.csv", "w", encoding="utf-8") as fh:
            fh.write("layer,mean_lambda,ci_low,ci_high,n_pairs\n")
            fh.writelines(f"{lay},{v:.4f},{v - 0.1:.4f},{v + 0.1:.4f},40\n" for lay, v in zip(layers, lam))
    return rows


def report_args(root: Path, slice_name: str = "demo") -> list[str]:
    """`mirage report` path options reading the synthetic run under `root` and writing next to it."""
    labels = sorted((root / "labels").glob(f"*/{slice_name}.jsonl"))
    views = sorted((root / "generations").glob(f"*/{slice_name}/*/*.jsonl"))
    probes = sorted((root / "probe").glob("*/lambda.csv"))
    return ["--metrics", str(root / "metrics" / slice_name / "metrics.csv"),
            *(a for x in labels for a in ("--labels", str(x))), *(a for x in views for a in ("--view", str(x))),
            *(a for x in probes for a in ("--probe", str(x))), "--estimate", str(root / "estimate" / f"{slice_name}.json"),
            "--figures-dir", str(root / "figures" / slice_name), "--tables-dir", str(root / "tables" / slice_name),
            "--out", str(root / "report" / slice_name / "index.html")]


def params_yaml(root: Path) -> str:
    """A params.yaml for the synthetic run (small figures, the synthetic models in the demo slice)."""
    return "\n".join([
        "report:",
        "  dpi: 80",
        "models:",  # a slice may name registry models only
        *(f"  {m}: {{provider: openai, model_id: {m}, revision: {m}-2025-01-01, base_url: 'http://127.0.0.1:9/v1'}}" for m in MODELS),
        "slices:",
        "  demo:",
        f"    models: [{', '.join(MODELS)}]",
        "    n_samples: 2",
        "",
    ])
