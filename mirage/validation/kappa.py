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


def agreement_report(annotations: dict[str, dict[str, int]], judge: dict[str, int], template: dict[str, str]) -> dict:
    """Judge-vs-human kappa (majority human label) overall and per template, and pairwise inter-annotator kappa."""
    human = human_majority(annotations)
    items = sorted(set(human) & set(judge))

    def by_template(pairs: list[tuple[str, int, int]]) -> dict:
        out = {"overall": _entry([p[1] for p in pairs], [p[2] for p in pairs])}
        for t in sorted({template[p[0]] for p in pairs}):
            sub = [p for p in pairs if template[p[0]] == t]
            out[t] = _entry([p[1] for p in sub], [p[2] for p in sub])
        return out

    report = {"judge_vs_human": by_template([(i, judge[i], human[i]) for i in items]), "annotators": {}}
    for a, b in itertools.combinations(sorted(annotations), 2):
        common = sorted(set(annotations[a]) & set(annotations[b]) & set(template))
        report["annotators"][f"{a}|{b}"] = by_template([(i, annotations[a][i], annotations[b][i]) for i in common])
    return report
