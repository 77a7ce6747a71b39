"""A small synthetic run that follows docs/artefacts.md: metrics.csv + summary.json, labels, generations,
estimate and probe files. Values are drawn from a seeded RNG, so tests compare outputs with these inputs."""

from __future__ import annotations

import csv
from pathlib import Path

import numpy as np

from mirage.io import write_json, write_jsonl
from mirage.report.data import BIAS_METRICS, CLAIM_NUMERIC, METRICS_COLUMNS, PLACEBO_NUMERIC, PLACEBO_TEXT

COLUMNS = [*METRICS_COLUMNS, *PLACEBO_NUMERIC, *PLACEBO_TEXT, *CLAIM_NUMERIC]
CLAIMS = ("dV", "Delta_signed")  # rows of these metrics are the headline claims (family `headline`) here
JUDGE = "lexicon-v1"
# Rows made degenerate on purpose: n = 2 with a collapsed bootstrap (the "12.5 [12.5, 12.5], p = 0.0001").
DEGENERATE = {"model": "model-b", "metric": "dV", "condition": "C3"}
UNPARSEABLE_HARNESS = "H4"  # no Delta_signed rows; its C3 labels all have parse_ok = False
DROPPED_MITIGATION = "M2"  # no Delta_abs row: Table 4 must still show the column as "not computed"

MODELS = ["model-a", "model-b"]
CONTROLS = ["christian", "jewish"]
TEXTS = {  # benign placeholder completions; the drill-down must show them verbatim
    True: "SYNTH-FOCAL completion {i}: the neighbours met at the library & talked <about> gardening.",
    False: "SYNTH-CONTROL completion {i}: the neighbours met at the library and planned a bake sale.",
}


def metric_rows(models: list[str], rng: np.random.Generator, nan_ci_for: str | None = None, placebo: bool = True) -> list[dict]:
    """Rows for every metric the report reads. With `placebo`, bias metrics carry an identity-placebo floor
    (a fifth of the estimate) and the excess over it; see DEGENERATE / UNPARSEABLE_HARNESS / DROPPED_MITIGATION."""
    rows: list[dict] = []

    def add(model: str, metric: str, est: float, p: float | None = None, **strata: str) -> None:
        half = 0.02 + 0.03 * rng.random()
        row = {c: "" for c in COLUMNS}
        row.update(model=model, metric=metric, estimate=round(est, 4), ci_low=round(est - half, 4), ci_high=round(est + half, 4),
                   p="" if p is None else p, p_adj="" if p is None else min(1.0, 3 * p), family=metric, n=200,
                   ci_method="percentile", resampling="clustered", **strata)
        if metric == nan_ci_for:
            row.update(ci_low="", ci_high="")
        if placebo and metric in BIAS_METRICS:
            floor = round(est / 5, 4)
            row.update(placebo=floor, excess=round(est - floor, 4), excess_ci_low=round(est - floor - half, 4),
                       excess_ci_high=round(est - floor + half, 4), excess_p=0.004, placebo_kind="identity")
        if all(row.get(k) == v for k, v in DEGENERATE.items()):
            row.update(n=2, ci_low=row["estimate"], ci_high=row["estimate"], p=0.0001, flag="n_too_small")
        if metric == "Delta_abs" and strata.get("mitigation") == DROPPED_MITIGATION:
            return
        if metric == "Delta_signed" and strata.get("harness") == UNPARSEABLE_HARNESS:
            return
        if metric in CLAIMS and placebo:  # Holm-adjusted p and the interval at the claim's level (here the 95 % excess CI)
            row.update(family="headline", p_adj="" if row["flag"] else min(1.0, 3 * row["excess_p"]))
            if not row["flag"]:
                row.update(claim_ci_low=row["excess_ci_low"], claim_ci_high=row["excess_ci_high"], claim_level=0.95)
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


def write_metrics(metrics_dir: Path, models: list[str], seed: int = 7, nan_ci_for: str | None = None, placebo: bool = True) -> list[dict]:
    rows = metric_rows(models, np.random.default_rng(seed), nan_ci_for, placebo)
    metrics_dir.mkdir(parents=True, exist_ok=True)
    columns = COLUMNS if placebo else list(METRICS_COLUMNS)
    if not placebo:
        rows = [{c: r[c] for c in columns} for r in rows]
    with open(metrics_dir / "metrics.csv", "w", newline="", encoding="utf-8") as fh:
        w = csv.DictWriter(fh, fieldnames=columns)
        w.writeheader()
        w.writerows(rows)
    write_json(metrics_dir / "summary.json", {
        "headline": {m: {"V_focal_C1": 0.2} for m in models},
        "provenance": {"code_version": "0.1.0+gsynthetic", "params_hash": "feedc0de", "run_date": "2026-06-16",
                       "model_revisions": {m: f"rev-{m}" for m in models},
                       "protocol_deviations": ["n_samples = 2 (protocol: 5)"]},
    })
    return rows


def write_run(root: Path, slice_name: str = "demo", models: list[str] = MODELS, probe: bool = True, nan_ci_for: str | None = None,
              placebo: bool = True) -> list[dict]:
    """Write a whole synthetic run under `root` (results/... layout, plus requests/ and judge/<judge>/judge_eval.json);
    returns the metric rows."""
    rows = write_metrics(root / "metrics" / slice_name, models, nan_ci_for=nan_ci_for, placebo=placebo)
    rng = np.random.default_rng(11)
    model = models[0]
    gens, labels, requests = [], [], []
    for cond in ("C1", "C2", "C3"):
        for b in range(4):
            for ident in ["muslim", *CONTROLS]:
                for s in range(2):
                    focal = ident == "muslim"
                    key = f"k{cond}{b}{ident}{s}"
                    ids = {"key": key, "row_id": f"q{key}", "request_id": f"r{cond}{b}{ident}", "prompt_id": f"p{b}{ident}", "base_id": f"b{b}",
                           "template": "T5" if cond == "C3" else "T1", "harness": ("H1" if b < 2 else UNPARSEABLE_HARNESS) if cond == "C3" else None,
                           "identity": ident,
                           "focal": focal, "language": "en", "condition": cond, "rag_pool": "none", "mitigation": "none",
                           "lite": True, "split": "dev", "model": model, "sample_index": s}
                    text = TEXTS[focal].format(i=f"{cond}.{b}.{s}")
                    gens.append({**ids, "provider": "local", "model_id": "synthetic", "revision": f"rev-{model}", "seed": s,
                                 "text": text, "reasoning": "step one; step two" if cond == "C2" else None, "answer": text,
                                 "first_turn": None, "finish_reason": "stop", "tokens_in": 30, "tokens_out": 20,
                                 "latency_s": 0.5, "error": None, "created": created(cond, b, ident, s)})
                    violent = int(rng.random() < (0.6 if focal else 0.2))
                    labels.append({**ids, "violent": violent, "violent_reasoning": violent if cond == "C2" else None,
                                   "decision": "review" if cond == "C3" else None, "score": 0.5 if cond == "C3" else None,
                                   "parse_ok": ids["harness"] != UNPARSEABLE_HARNESS, "refusal": False, "error": False,
                                   "pathways": (["group_statistic"] if b % 2 else ["reasoner_stand_in", "coherence_pressure"]) if cond == "C2" and violent else [],
                                   "judge": JUDGE})
                    if s == 0:
                        requests.append({"request_id": ids["request_id"], "condition": cond, "prompt": f"SYNTH-PROMPT {cond}.{b} about a {ident} neighbour <b>",
                                         "messages": [{"role": "user", "content": f"SYNTH-PROMPT {cond}.{b} about a {ident} neighbour <b>"}]})
    for cond in ("C1", "C2", "C3"):
        write_jsonl(root / "generations" / model / slice_name / cond / "none-none.jsonl", [g for g in gens if g["condition"] == cond])
    write_jsonl(root / "labels" / model / f"{slice_name}.jsonl", labels)
    for cond in ("C1", "C2", "C3"):
        write_jsonl(root / "requests" / f"{cond}.jsonl", [r for r in requests if r["condition"] == cond])
    write_json(root / "judge" / JUDGE / "judge_eval.json", {
        "judge": JUDGE, "n": 420, "overall": {"precision": 0.8, "recall": 0.7, "f1": 0.7467, "accuracy": 0.8, "kappa": 0.61},
        "by_language": {"en": {"f1": 0.79, "n": 300}, "ar": {"f1": 0.5512, "n": 120}}, "by_identity": {}, "by_cat": {},
        "invariance": {"rows": 150, "invariant": 120, "rate": 0.8}, "misclassified": []})
    write_json(root / "estimate" / f"{slice_name}.json", {
        "slice": slice_name,
        "rows": [{"model": m, "condition": c, "requests": 40, "samples": 80, "tokens_in": 2400, "tokens_out": 1600,
                  "gpu_hours": None, "api_cost_usd": None, "local_time_s": None, "wall_time_s": 8.4, "throughput": 190.0,
                  "source": "measured" if m == models[0] else "assumed"} for m in models for c in ("C1", "C2", "C3")],
        "totals": {"samples": 80 * 3 * len(models)}, "assumptions": {"tokens_per_s": 190}})
    if probe:
        layers = np.arange(31)
        lam = np.sin(layers / 30 * np.pi) * 0.8
        (root / "probe" / model).mkdir(parents=True, exist_ok=True)
        with open(root / "probe" / model / "lambda.csv", "w", encoding="utf-8") as fh:
            fh.write("layer,mean_lambda,ci_low,ci_high,n_pairs\n")
            fh.writelines(f"{lay},{v:.4f},{v - 0.1:.4f},{v + 0.1:.4f},40\n" for lay, v in zip(layers, lam))
        (root / "probe" / model / "table7.csv").write_text(
            f"model,n_layers,early_elevation_layer,final_suppression_offset,final_suppression_layer\n{model},30,9,2,28\n", encoding="utf-8")
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
def created(cond: str, b: int, ident: str, s: int) -> str:
    """Generation time of a synthetic sample: C1 spans 10:00:00-10:00:59 (wall time 59 s), C2 and C3 later."""
    second = {("C1", 0, "muslim", 0): 0, ("C1", 3, "jewish", 1): 59}.get((cond, b, ident, s), 1 + b * 7 + s)
    return f"2026-06-16T{10 + CONDITIONS_ORDER.index(cond)}:00:{second:02d}Z"


CONDITIONS_ORDER = ["C1", "C2", "C3"]


def params_yaml(root: Path) -> str:
    """A params.yaml for the synthetic run (small figures, the synthetic models in the demo slice)."""
    return "\n".join([
        "label:",
        f"  judge: {JUDGE}",
        "report:",
        "  dpi: 80",
        "models:",  # a slice may name registry models only
        *(f"  {m}: {{provider: openai, model_id: {m}, revision: {m}-2025-01-01, base_url: 'http://127.0.0.1:9/v1'{extra}}}"
          for m, extra in zip(MODELS, ["", ", server_kind: llama.cpp, sampling_extra: {top_k: 20}"])),
        "slices:",
        "  demo:",
        f"    models: [{', '.join(MODELS)}]",
        "    n_samples: 2",
        "    max_tokens: {C1: 40, C2: 96, C3: 64}",
        "",
    ])
