"""Judge sensitivity: one model's completions labelled by several judges (or by each member of a jury).

On the completions: each judge's headline claims and, against the first (reference) judge, the paired difference of
every claim (`mirage compare` with the two judges as sides: same prompts, same samples), and the sample-level agreement
and Cohen's kappa of every two judges. On the gold sets: from each judge's judge_eval.json (its misclassified rows), the
error rate of each, the agreement and the correlation of errors (phi) of every two, and the effective number of
independent judges J / (1 + (J - 1) mean phi): a jury of judges that err on the same texts is worth little more than one.
"""

from __future__ import annotations

import math
from itertools import combinations

import numpy as np
import pandas as pd

from mirage.compare.paired import compare_runs
from mirage.config.compare import CompareParams
from mirage.config.metrics import MetricsParams

SAMPLE_KEY = ("condition", "rag_pool", "mitigation", "language", "prompt_id", "sample_index")


def sample_agreement(a: pd.DataFrame, b: pd.DataFrame) -> dict:
    """Agreement and Cohen's kappa of two judges' violence labels on the samples both labelled."""
    key = list(SAMPLE_KEY)
    j = a[[*key, "violent"]].merge(b[[*key, "violent"]], on=key, suffixes=("_a", "_b")).dropna()
    n = len(j)
    if n == 0:
        return {"n": 0, "agreement": None, "kappa": None}
    x, y = j["violent_a"].to_numpy(float), j["violent_b"].to_numpy(float)
    po = float(np.mean(x == y))
    pe = float(x.mean() * y.mean() + (1 - x.mean()) * (1 - y.mean()))
    return {"n": n, "agreement": po, "kappa": (po - pe) / (1 - pe) if pe < 1 else None}


def gold_errors(doc: dict) -> tuple[int, set[tuple]]:
    """(gold rows, the misclassified ones) of a judge_eval.json."""
    return int(doc["n"]), {(m.get("set"), m.get("line"), m.get("identity"), m.get("language")) for m in doc["misclassified"]}


def panel(evals: dict[str, dict]) -> dict:
    """Error rates, pairwise agreement and error correlation on the gold sets, and the effective number of judges."""
    errs = {j: gold_errors(d) for j, d in evals.items()}
    ns = {n for n, _ in errs.values()}
    if len(ns) != 1:
        return {"note": "the judges were evaluated on different gold sets (n " + ", ".join(map(str, sorted(ns))) + ")"}
    (n,) = ns
    pairs, phis = [], []
    for a, b in combinations(sorted(errs), 2):
        ea, eb = errs[a][1], errs[b][1]
        both, na, nb = len(ea & eb), len(ea), len(eb)
        den = math.sqrt(na * (n - na) * nb * (n - nb))
        phi = (both * n - na * nb) / den if den > 0 else None
        if phi is not None:
            phis.append(phi)
        pairs.append({"a": a, "b": b, "agreement": 1 - len(ea ^ eb) / n, "errors_both": both, "error_correlation": phi})
    k = len(errs)
    rho = min(max(float(np.mean(phis)), 0.0), 1.0) if phis else None
    return {"n": n, "error_rate": {j: len(e) / n for j, (_, e) in sorted(errs.items())}, "pairs": pairs,
            "mean_error_correlation": rho, "effective_judges": None if rho is None else k / (1 + (k - 1) * rho)}


def sensitivity(sides: dict[str, pd.DataFrame], p: MetricsParams, cp: CompareParams) -> tuple[pd.DataFrame, list[dict]]:
    """(claims of every judge against the reference judge, the first; pairwise sample agreement)."""
    names = list(sides)
    ref = names[0]
    tables = []
    for j in names[1:]:
        t, _ = compare_runs(sides[j], sides[ref], p, cp)
        tables.append(t.assign(judge=j, reference=ref))
    agree = [{"a": a, "b": b, **sample_agreement(sides[a], sides[b])} for a, b in combinations(names, 2)]
    return pd.concat(tables, ignore_index=True), agree
