"""Cohen's kappa between the judge and human annotators and between annotators (App. H, Table 10)."""

from __future__ import annotations

import itertools
import math
from collections import defaultdict

import numpy as np
from statsmodels.stats.inter_rater import cohens_kappa


def kappa(a: list[int], b: list[int]) -> float:
    """Cohen's kappa of two binary label lists (NaN when empty or when agreement by chance is 1)."""
    if not a:
        return math.nan
    table = np.zeros((2, 2))
    for x, y in zip(a, b, strict=True):
        table[x, y] += 1
    p_exp = (table.sum(0) @ table.sum(1)) / table.sum() ** 2
    if p_exp >= 1:
        return math.nan
    return float(cohens_kappa(table, return_results=False))


def human_majority(annotations: dict[str, dict[str, int]]) -> dict[str, int]:
    """Per item, the majority human label; ties resolve to non-violent (App. H: ambiguous -> non-violent)."""
    votes: dict[str, list[int]] = defaultdict(list)
    for labels in annotations.values():
        for item, y in labels.items():
            votes[item].append(y)
    return {item: int(sum(v) * 2 > len(v)) for item, v in votes.items()}


def _entry(a: list[int], b: list[int]) -> dict:
    k = kappa(a, b)
    return {"kappa": None if math.isnan(k) else round(k, 6), "n": len(a)}


def _by(pairs: list[tuple[str, int, int]], group: dict[str, str]) -> dict:
    """{"overall": ..., <group value>: ...} kappa entries."""
    out = {"overall": _entry([p[1] for p in pairs], [p[2] for p in pairs])}
    for g in sorted({group[p[0]] for p in pairs}):
        sub = [p for p in pairs if group[p[0]] == g]
        out[g] = _entry([p[1] for p in sub], [p[2] for p in sub])
    return out


def confusion(pairs: list[tuple[int, int]]) -> dict:
    """Confusion counts of (judge, truth) pairs with sensitivity and specificity (null without positives / negatives),
    the block shape judge_eval.json uses per language family x condition."""
    tp = sum(j == 1 and t == 1 for j, t in pairs)
    fp = sum(j == 1 and t == 0 for j, t in pairs)
    fn = sum(j == 0 and t == 1 for j, t in pairs)
    tn = sum(j == 0 and t == 0 for j, t in pairs)
    return {"n": len(pairs), "tp": tp, "fp": fp, "fn": fn, "tn": tn,
            "sensitivity": round(tp / (tp + fn), 6) if tp + fn else None,
            "specificity": round(tn / (tn + fp), 6) if tn + fp else None}


def judge_accuracy(human: dict[str, int], judge: dict[str, int], cells: dict[str, tuple[str, str, str]]) -> list[dict]:
    """Per model x judge (cells: item -> (model, judge, "family/condition")): the judge's confusion against the majority
    human label overall and per language family x condition (`en/C1`, `ar/C3`, ...); `mirage metrics` corrects V and
    dV with these sensitivities and specificities."""
    groups: dict[tuple[str, str], list[str]] = defaultdict(list)
    for item in sorted(set(human) & set(judge) & set(cells)):
        groups[cells[item][:2]].append(item)
    out = []
    for (model, name), items in sorted(groups.items()):
        by_cell: dict[str, list[tuple[int, int]]] = defaultdict(list)
        for i in items:
            by_cell[cells[i][2]].append((judge[i], human[i]))
        out.append({"model": model, "judge": name, "overall": confusion([(judge[i], human[i]) for i in items]),
                    "by_language_condition": {c: confusion(p) for c, p in sorted(by_cell.items())}})
    return out


def agreement_report(annotations: dict[str, dict[str, int]], judge: dict[str, int], template: dict[str, str],
                     identity: dict[str, str] | None = None, cells: dict[str, tuple[str, str, str]] | None = None) -> dict:
    """Judge-vs-human kappa (majority human label) overall, per template (Table 10) and per identity (is the judge as
    accurate on control variants as on focal ones?), pairwise inter-annotator kappa and, given `cells`, the judge's
    sensitivity and specificity per model x judge x language family x condition (`judge_accuracy`)."""
    human = human_majority(annotations)
    items = sorted(set(human) & set(judge))

    def by_template(pairs: list[tuple[str, int, int]]) -> dict:
        return _by(pairs, template)

    pairs = [(i, judge[i], human[i]) for i in items]
    report = {"judge_vs_human": by_template(pairs), "annotators": {}}
    if identity is not None:
        report["judge_vs_human_by_identity"] = _by(pairs, identity)
    for a, b in itertools.combinations(sorted(annotations), 2):
        common = sorted(set(annotations[a]) & set(annotations[b]) & set(template))
        report["annotators"][f"{a}|{b}"] = by_template([(i, annotations[a][i], annotations[b][i]) for i in common])
    if cells is not None:
        report["judge_accuracy"] = judge_accuracy(human, judge, cells)
    return report
