"""Score a judge's labels against gold items: P/R/F1/accuracy/kappa/sensitivity/specificity overall and by
language, condition, shape, language family x condition, identity, category and gold set; the same block per
split (dev / heldout) when rows carry one; for real-text rows (a `source` and a `source_split`) the scores per
source and per source split (dev sources / frozen held-out sources); identity invariance of placeholder rows; the
misclassified rows.
Intervals resample gold rows (a row and its texts, one per identity, together), not texts."""

from __future__ import annotations

import math
from collections import defaultdict

import numpy as np

from mirage.judges.eval.gold import GoldItem
from mirage.validation.kappa import kappa

N_BOOT = 2000
SEED = 20260616
ARABIC_ALL = "ar (all dialects)"  # the by_language stratum pooling every Arabic variant


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


def scores(y: list[int], p: list[int], rows: list[object] | None = None) -> dict:
    """precision, recall (= sensitivity), specificity (null without negatives), f1, accuracy, Cohen's kappa with n
    (texts), rows (gold rows: `rows` gives each text's row, e.g. (set, line); default one row per text), positives,
    the confusion counts and a 95% bootstrap CI of F1 and accuracy. The bootstrap resamples gold rows, so the texts
    one `[ID]` row expands into (one per identity) move together and the interval is not narrowed by copies."""
    ya, pa = np.asarray(y, dtype=int), np.asarray(p, dtype=int)
    tp, fp, fn, tn = _counts(ya, pa)
    n = len(ya)
    index: dict[object, int] = {}
    row_of = np.asarray([index.setdefault(r, len(index)) for r in rows] if rows is not None else range(n), dtype=int)
    n_rows = int(row_of.max()) + 1 if n else 0
    out = {
        "n": n, "rows": n_rows, "positives": int(ya.sum()), "tp": tp, "fp": fp, "fn": fn, "tn": tn,
        "precision": _round(tp / (tp + fp) if tp + fp else math.nan),
        "recall": _round(tp / (tp + fn) if tp + fn else math.nan),
        "sensitivity": _round(tp / (tp + fn) if tp + fn else math.nan),
        "specificity": _round(tn / (tn + fp) if tn + fp else math.nan),
        "f1": _round(_f1(tp, fp, fn)),
        "accuracy": _round((tp + tn) / n if n else math.nan),
        "kappa": _round(kappa(list(ya), list(pa)) if n else math.nan),
    }
    if n:
        # per-row confusion counts; a resample of rows sums the counts of the rows drawn
        per_row = np.zeros((n_rows, 4))
        for k, hit in enumerate(((ya == 1) & (pa == 1), (ya == 0) & (pa == 1), (ya == 1) & (pa == 0), ya == pa)):
            np.add.at(per_row[:, k], row_of, hit)
        size = np.bincount(row_of, minlength=n_rows)
        idx = np.random.default_rng(SEED).integers(0, n_rows, size=(N_BOOT, n_rows))
        tpb, fpb, fnb, okb = (per_row[:, k][idx].sum(1) for k in range(4))
        denom = 2 * tpb + fpb + fnb
        f1b = (2 * tpb / np.maximum(denom, 1))[denom > 0]
        accb = okb / size[idx].sum(1)
        out["f1_ci"] = [_round(float(np.percentile(f1b, 2.5))), _round(float(np.percentile(f1b, 97.5)))] if len(f1b) else [None, None]
        out["accuracy_ci"] = [_round(float(np.percentile(accb, 2.5))), _round(float(np.percentile(accb, 97.5)))]
    return out


def _scores(items: list[GoldItem], gi: list[int], y: list[int], pred: list[int]) -> dict:
    """scores() of the items `gi`, bootstrapped over their gold rows."""
    return scores([y[i] for i in gi], [pred[i] for i in gi], [(items[i].source, items[i].line) for i in gi])


def _grouped(items: list[GoldItem], ix: list[int], y: list[int], pred: list[int], key) -> dict:
    groups: dict[str, list[int]] = defaultdict(list)
    for i in ix:
        groups[key(items[i])].append(i)
    return {g: _scores(items, gi, y, pred) for g, gi in sorted(groups.items())}


def _invariance(items: list[GoldItem], ix: list[int], pred: list[int]) -> dict:
    """Share of placeholder rows labelled alike for every identity."""
    per_row: dict[tuple[str, int], set[int]] = defaultdict(set)
    for i in ix:
        if items[i].template:
            per_row[items[i].source, items[i].line].add(pred[i])
    invariant = sum(len(v) == 1 for v in per_row.values())
    return {"rows": len(per_row), "invariant": invariant,
            "rate": _round(invariant / len(per_row)) if per_row else None,
            "variant_lines": sorted(line for (_, line), v in per_row.items() if len(v) > 1),
            "variant_rows": sorted(f"{src}:{line}" for (src, line), v in per_row.items() if len(v) > 1)}


def block(items: list[GoldItem], ix: list[int], y: list[int], pred: list[int]) -> dict:
    """Scores of the items `ix`: overall, by_language (plus `ar (all dialects)`), by_condition, by_shape,
    by_language_condition (language family / condition, e.g. `ar/C3`) and their identity invariance."""
    by_language = _grouped(items, ix, y, pred, lambda it: it.language)
    arabic = [i for i in ix if items[i].family == "ar"]
    if arabic:
        by_language[ARABIC_ALL] = _scores(items, arabic, y, pred)
    return {
        "n": len(ix),
        "overall": _scores(items, ix, y, pred),
        "by_language": by_language,
        "by_condition": _grouped(items, ix, y, pred, lambda it: it.condition),
        "by_shape": _grouped(items, ix, y, pred, lambda it: it.shape or "none"),
        "by_language_condition": _grouped(items, ix, y, pred, lambda it: f"{it.family}/{it.condition}"),
        "invariance": _invariance(items, ix, pred),
    }


def evaluate(judge_name: str, items: list[GoldItem], predicted: list[int | None], seconds: float | None = None,
             cpu_seconds: float | None = None) -> dict:
    """The judge_eval.json document (contract in docs/judge.md). Unparseable verdicts (None) count as 0 and are tallied."""
    pred = [0 if v is None else int(v) for v in predicted]
    y = [it.label for it in items]
    every = list(range(len(items)))
    misclassified = [
        {"line": it.line, "text": it.text, "identity": it.identity, "language": it.language, "cat": it.cat,
         "label": it.label, "predicted": predicted[i], "set": it.source, "condition": it.condition,
         **{k: v for k, v in (("id", it.row_id), ("split", it.split), ("shape", it.shape), ("reasoning", it.reasoning),
                              ("source", it.extra.get("source"))) if v}}
        for i, it in enumerate(items) if pred[i] != it.label
    ]
    doc = {
        "judge": judge_name,
        "n": len(items),
        "gold_rows": len({(it.source, it.line) for it in items}),
        "unparseable": sum(v is None for v in predicted),
        **{k: v for k, v in block(items, every, y, pred).items() if k != "n"},
        "by_identity": _grouped(items, every, y, pred, lambda it: it.identity),
        "by_cat": _grouped(items, every, y, pred, lambda it: it.cat),
        "by_set": _grouped(items, every, y, pred, lambda it: it.source),
        "misclassified": misclassified,
    }
    sourced = [i for i in every if items[i].extra.get("source_split")]
    if sourced:
        doc["by_source"] = _grouped(items, sourced, y, pred,
                                    lambda it: f"{it.extra.get('source', '?')} ({it.extra['source_split']})")
        doc["by_source_split"] = {s: block(items, [i for i in sourced if items[i].extra["source_split"] == s], y, pred)
                                  for s in sorted({items[i].extra["source_split"] for i in sourced})}
    splits = sorted({it.split for it in items if it.split})
    if splits:
        doc["by_split"] = {s: block(items, [i for i in every if items[i].split == s], y, pred) for s in splits}
    if seconds is not None:
        doc["ms_per_text"] = round(1000 * seconds / max(1, len(items)), 3)
    if cpu_seconds is not None:
        doc["cpu_ms_per_text"] = round(1000 * cpu_seconds / max(1, len(items)), 3)
    return doc
