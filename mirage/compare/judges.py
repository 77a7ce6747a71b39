"""Judge sensitivity: one model's completions labelled by several judges (or by each member of a jury).

A jury's label rows keep each member's own labels (`votes`), so one jury run is several judges' runs: `members` turns
them into label rows of each member (judge = the member name). On the completions: each judge's headline claims and,
against the first (reference) judge, the paired difference of every claim (`mirage compare` with the two judges as
sides: same prompts, same samples), and the sample-level agreement and Cohen's kappa of every two judges. On the gold sets: from each judge's judge_eval.json (its misclassified rows), the
error rate of each, the agreement and the correlation of errors (phi) of every two, and the effective number of
independent judges J / (1 + (J - 1) mean phi): a jury of judges that err on the same texts is worth little more than one.
"""

from __future__ import annotations

from itertools import combinations
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from mirage.compare.paired import compare_runs
from mirage.config.compare import CompareParams
from mirage.config.metrics import MetricsParams
from mirage.io import DataError
from mirage.names import JURY_PREFIX

SAMPLE_KEY = ("condition", "rag_pool", "mitigation", "language", "prompt_id", "sample_index")
#: The label columns a member's vote replaces in its rows (`decision` is not read by the metrics).
MEMBER_COLUMNS = ("violent", "violent_reasoning", "score", "parse_ok", "refusal")


def is_jury(judge: str) -> bool:
    return judge.startswith(JURY_PREFIX)


def members(labels: pd.DataFrame) -> pd.DataFrame:
    """Each jury member's own label rows, from the `votes` of a jury's rows (judge = the member; rows with no votes,
    failed generations, keep the jury's null labels), after the jury's rows: every judge of the labels as its own. A
    jury whose rows keep no votes stays one judge."""
    if "votes" not in labels:
        return labels
    out = [labels.drop(columns="votes")]
    judged = set(labels["judge"].dropna().astype(str))
    for jury in dict.fromkeys(j for j in labels["judge"].dropna().astype(str) if is_jury(j)):
        rows = labels[labels["judge"] == jury]
        voted = rows["votes"].map(lambda v: isinstance(v, dict) and bool(v))
        # none: labelled before votes were kept; a member with its own run in the labels is that run
        names = [m for m in dict.fromkeys(m for v in rows.loc[voted, "votes"] for m in v) if m not in judged]
        for m in names:
            if lacking := int((~rows.loc[voted, "votes"].map(lambda v, m=m: m in v)).sum()):
                raise DataError(f"judge {jury}: {lacking} of its voted label rows lack member {m}'s vote")
            own = pd.DataFrame([v[m] if ok else {} for v, ok in zip(rows["votes"], voted)], index=rows.index,
                               columns=list(MEMBER_COLUMNS))
            mine = rows.drop(columns="votes").assign(judge=m)
            for c in MEMBER_COLUMNS:
                mine[c] = own[c].where(voted, mine[c])
            for c in ("violent", "violent_reasoning", "score"):
                mine[c] = pd.to_numeric(mine[c], errors="coerce").astype(float)
            out.append(mine)
    return pd.concat(out, ignore_index=True)


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


def _effective(errors: np.ndarray) -> tuple[float | None, float | None]:
    """(mean error correlation over the pairs where it is defined, clipped to [0, 1]; J / (1 + (J - 1) mean))."""
    k = errors.shape[1]
    with np.errstate(invalid="ignore", divide="ignore"):
        phi = np.corrcoef(errors, rowvar=False)
    pairs = phi[np.triu_indices(k, 1)]
    pairs = pairs[np.isfinite(pairs)]
    if not len(pairs):
        return None, None
    rho = min(max(float(pairs.mean()), 0.0), 1.0)
    return rho, k / (1 + (k - 1) * rho)


def panel(evals: dict[str, dict], n_boot: int = 1000, alpha: float = 0.05, seed: int = 0) -> dict:
    """Error rates, pairwise agreement and error correlation (phi) on the gold sets, and the effective number of judges
    with a bootstrap interval over the gold rows (a jury's own evaluation is left out: it is made of its members)."""
    errs = {j: gold_errors(d) for j, d in evals.items() if not is_jury(j)}
    if len(errs) < 2:
        return {"note": f"{len(errs)} single judge(s) evaluated on the gold sets: no panel"}
    ns = {n for n, _ in errs.values()}
    if len(ns) != 1:
        return {"note": "the judges were evaluated on different gold sets (n " + ", ".join(map(str, sorted(ns))) + ")"}
    (n,) = ns
    names = sorted(errs)
    wrong = sorted(set().union(*(e for _, e in errs.values())), key=str)
    if len(wrong) > n:
        raise DataError(f"judge_eval.json: {len(wrong)} distinct misclassified rows but n = {n} gold rows")
    row = {key: i for i, key in enumerate(wrong)}
    errors = np.zeros((n, len(names)))  # one row per gold row, 1 where the judge erred
    for col, j in enumerate(names):
        errors[[row[key] for key in errs[j][1]], col] = 1
    pairs = []
    for (ia, a), (ib, b) in combinations(enumerate(names), 2):
        x, y = errors[:, ia], errors[:, ib]
        phi = float(np.corrcoef(x, y)[0, 1]) if x.std() > 0 and y.std() > 0 else None
        pairs.append({"a": a, "b": b, "agreement": float(np.mean(x == y)), "errors_both": int((x * y).sum()),
                      "error_correlation": phi})
    rho, eff = _effective(errors)
    draws = np.random.default_rng(seed).integers(0, n, (n_boot, n))
    reps = [e for d in draws if (e := _effective(errors[d])[1]) is not None]
    ci = [float(q) for q in np.quantile(reps, [alpha / 2, 1 - alpha / 2])] if eff is not None and reps else None
    return {"n": n, "judges": names, "error_rate": {j: len(errs[j][1]) / n for j in names}, "pairs": pairs,
            "mean_error_correlation": rho, "effective_judges": eff, "effective_judges_ci": ci,
            "ci_method": f"percentile bootstrap of the gold rows, {len(reps)} of {n_boot} draws defined"}


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


def judge_sensitivity(labels: pd.DataFrame, model: str, slice_name: str, judges: list[str], evals: list[Path] | None,
                      params: Any) -> tuple[pd.DataFrame, dict, str]:
    """(claims table, judges.json summary, report section) of one model's completions under every judge of `labels`
    (a jury's members included; `judges`: which, the first the reference; `evals`: judge_eval.json files, default each
    single judge's own when present)."""
    from mirage import artefacts
    from mirage.compare.render import judges_section
    from mirage.compare.sides import select
    from mirage.config.compare import Side
    from mirage.params import section_hash
    from mirage.provenance import code_version
    from mirage.untrusted import load_json

    labels = members(labels[labels["model"] == model])
    names = judges or list(dict.fromkeys(labels["judge"].dropna().astype(str)))
    if len(names) < 2:
        raise DataError(f"model {model!r}: {len(names)} judge(s) in the labels ({', '.join(names) or 'none'}); judge "
                        "sensitivity needs two or more (--labels of each judge, or a jury run that kept its members' votes)")
    sides = {j: select(labels, Side(f"{model}/judge={j}", model, judge=j)) for j in names}
    files = evals if evals is not None else [f for j in names if not is_jury(j) and (f := Path(artefacts.judge_eval(j))).exists()]
    docs = {}
    for f in files:
        d = load_json(f, "judge_eval.json")
        if not isinstance(d, dict) or not isinstance(d.get("n"), int) or not isinstance(d.get("misclassified"), list) \
                or not all(isinstance(m, dict) for m in d["misclassified"]):
            raise DataError(f"{f}: fields n, misclassified: not a judge_eval.json of `mirage judge eval`")
        docs[str(d.get("judge") or f.parent.name)] = d
    p = params.metrics
    gold = panel(docs, p.n_boot, p.alpha, p.seed) if docs else {"note": "no judge_eval.json of the judges found: no panel"}
    table, agree = sensitivity(sides, p, params.compare)
    summary = {"model": model, "slice": slice_name, "judges": names, "reference": names[0],
               "jury_members": {j: [m for m in names if m in (j[len(JURY_PREFIX):].split(","))] for j in names if is_jury(j)},
               "alpha": p.alpha, "margin_pp": params.compare.margin_pp, "margin_cai": params.compare.margin_cai,
               "sample_agreement": agree, "gold": gold,
               "claims": [{k: (None if isinstance(v, float) and v != v else v) for k, v in r.items()} for r in table.to_dict("records")],
               "provenance": {"code_version": code_version(), "params_hash": section_hash(params, "metrics", "compare"),
                              "judge_evals": [str(f) for f in files]}}
    return table, summary, judges_section(table, summary)
