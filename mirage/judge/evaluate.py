"""Score a judge's labels against gold items: P/R/F1/accuracy/kappa overall and by language,
identity and category, identity invariance of `[ID]` rows, and the misclassified rows."""

from __future__ import annotations

import math
from collections import defaultdict

import numpy as np

from mirage.judge.gold import GoldItem
from mirage.validation.kappa import kappa

N_BOOT = 2000
SEED = 20260616


def _round(x: float) -> float | None:
    return None if math.isnan(x) else round(x, 4)


def _counts(y: np.ndarray, p: np.ndarray) -> tuple[int, int, int, int]:
    tp = int(((y == 1) & (p == 1)).sum())
    fp = int(((y == 0) & (p == 1)).sum())
    fn = int(((y == 1) & (p == 0)).sum())
    tn = int(((y == 0) & (p == 0)).sum())
    return tp, fp, fn, tn


def _f1(tp: int, fp: int, fn: int) -> float:
    return 2 * tp / (2 * tp + fp + fn) if tp + fp + fn else math.nan


def scores(y: list[int], p: list[int]) -> dict:
    """precision, recall, f1, accuracy, Cohen's kappa with n, positives and a 95% bootstrap CI of F1 and accuracy."""
    ya, pa = np.asarray(y, dtype=int), np.asarray(p, dtype=int)
    tp, fp, fn, tn = _counts(ya, pa)
    n = len(ya)
    out = {
        "n": n, "positives": int(ya.sum()), "tp": tp, "fp": fp, "fn": fn, "tn": tn,
        "precision": _round(tp / (tp + fp) if tp + fp else math.nan),
        "recall": _round(tp / (tp + fn) if tp + fn else math.nan),
        "f1": _round(_f1(tp, fp, fn)),
        "accuracy": _round((tp + tn) / n if n else math.nan),
        "kappa": _round(kappa(list(ya), list(pa)) if n else math.nan),
    }
    if n:
        rng = np.random.default_rng(SEED)
        idx = rng.integers(0, n, size=(N_BOOT, n))
        yb, pb = ya[idx], pa[idx]
        tpb = ((yb == 1) & (pb == 1)).sum(1)
        denom = tpb * 2 + ((yb == 0) & (pb == 1)).sum(1) + ((yb == 1) & (pb == 0)).sum(1)
        f1b = np.where(denom > 0, 2 * tpb / np.maximum(denom, 1), np.nan)
        accb = (yb == pb).mean(1)
        f1b = f1b[~np.isnan(f1b)]
        out["f1_ci"] = [_round(float(np.percentile(f1b, 2.5))), _round(float(np.percentile(f1b, 97.5)))] if len(f1b) else [None, None]
        out["accuracy_ci"] = [_round(float(np.percentile(accb, 2.5))), _round(float(np.percentile(accb, 97.5)))]
    return out


def evaluate(judge_name: str, items: list[GoldItem], predicted: list[int | None], seconds: float | None = None,
             cpu_seconds: float | None = None) -> dict:
    """The judge_eval.json document (contract in docs/judge.md). Unparseable verdicts (None) count as 0 and are tallied."""
    pred = [0 if v is None else int(v) for v in predicted]
    y = [it.label for it in items]

    def grouped(key) -> dict:
        groups: dict[str, list[int]] = defaultdict(list)
        for i, it in enumerate(items):
            groups[key(it)].append(i)
        return {g: scores([y[i] for i in ix], [pred[i] for i in ix]) for g, ix in sorted(groups.items())}

    by_language = grouped(lambda it: it.language)
    arabic = [i for i, it in enumerate(items) if it.language.split("-")[0] == "ar"]
    if arabic:
        by_language["ar (all dialects)"] = scores([y[i] for i in arabic], [pred[i] for i in arabic])
    per_line: dict[int, set[int]] = defaultdict(set)
    for it, v in zip(items, pred, strict=True):
        if it.template:
            per_line[it.line].add(v)
    invariant = sum(len(v) == 1 for v in per_line.values())
    misclassified = [
        {"line": it.line, "text": it.text, "identity": it.identity, "language": it.language, "cat": it.cat,
         "label": it.label, "predicted": predicted[i], **({"reasoning": it.reasoning} if it.reasoning else {})}
        for i, it in enumerate(items) if pred[i] != it.label
    ]
    doc = {
        "judge": judge_name,
        "n": len(items),
        "gold_rows": len({it.line for it in items}),
        "unparseable": sum(v is None for v in predicted),
        "overall": scores(y, pred),
        "by_language": by_language,
        "by_identity": grouped(lambda it: it.identity),
        "by_cat": grouped(lambda it: it.cat),
        "invariance": {"rows": len(per_line), "invariant": invariant,
                       "rate": _round(invariant / len(per_line)) if per_line else None,
                       "variant_lines": sorted(line for line, v in per_line.items() if len(v) > 1)},
        "misclassified": misclassified,
    }
    if seconds is not None:
        doc["ms_per_text"] = round(1000 * seconds / max(1, len(items)), 3)
    if cpu_seconds is not None:
        doc["cpu_ms_per_text"] = round(1000 * cpu_seconds / max(1, len(items)), 3)
    return doc
