"""Train parse-v2's learned scorer (`mirage judge train`): rebuilds
`mirage/judges/resources/parse2_weights.json` deterministically from the committed gold files.

One L2-regularised logistic regression per language family (`en`, `ar`) over the features of
`mirage.judges.features`; C and the decision threshold are chosen by stratified 5-fold cross-validation on the
training rows: the pair that maximises the out-of-fold F1 of the realistic dev split (`TUNE_ON`, the texts drawn
from the same pool as the held-out split; all rows when a family has none there); features seen in fewer than `MIN_COUNT`
training texts are dropped and weights under `PRUNE` in absolute value are pruned from the shipped file. The
file records the sha256 of every training file, the settings and the cross-validated F1, so anyone can check
which data it was trained on (tests/judges/test_train.py). Needs scikit-learn (the `test` extra); scoring does not.
"""

from __future__ import annotations

import hashlib
import json
import pickle
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

from mirage.judges.eval.gold import read_gold
from mirage.judges.scorer import WEIGHTS

C_GRID = (0.03, 0.1, 0.3, 1.0)
MIN_COUNT = 2
PRUNE = 1e-3
FOLDS = 5
SEED = 20261124
TUNE_ON = "dev.jsonl"  # the source whose out-of-fold F1 chooses C and the threshold
GROUPS = {  # feature prefix -> group (model-selection variants switch groups on and off)
    "U": "bow", "B": "bow",
    "VR": "role", "VO": "role", "VX": "role", "VP": "role", "VC": "role", "VCO": "role", "VCP": "role",
    "VCM": "role", "A": "agent", "N": "role", "NC": "role", "T": "role", "K": "role", "S": "role", "KP": "role",
    "R": "rule", "R1": "rule", "H": "rule", "HW": "rule", "HC": "rule", "J": "rule", "L": "rule",
}
ALL_GROUPS = frozenset(GROUPS.values())


@dataclass(frozen=True)
class Row:
    """One gold row, featurised once: its identity forms are canonicalised, so every identity's text is the same
    text; `weight` is the number of texts `mirage judge eval` instantiates from it."""

    text: str
    label: int
    family: str
    condition: str
    source: str
    weight: int


def read_rows(path: str | Path, data_dir: str = "data") -> list[Row]:
    """The rows of a gold file, one per line (its first identity's text)."""
    rows: dict[int, Row] = {}
    counts: Counter = Counter()
    for it in read_gold(path, data_dir):
        counts[it.line] += 1
        rows.setdefault(it.line, Row(it.text, it.label, it.family, it.condition, Path(path).name, 1))
    return [Row(r.text, r.label, r.family, r.condition, r.source, counts[line]) for line, r in sorted(rows.items())]


def sha256_file(path: str | Path) -> str:
    return hashlib.sha256(Path(path).read_bytes()).hexdigest()


class CachedParser:
    """parse-v2's spaCy pipeline with a disk cache of parsed Docs keyed by the text's sha256 (training re-reads
    the same texts many times; the cache never changes a result, only skips re-parsing)."""

    def __init__(self, cache: Path | None) -> None:
        from mirage.judges.discourse import load_nlp

        self.nlp = load_nlp()
        self.cache = cache
        self.docs: dict[str, bytes] = pickle.loads(cache.read_bytes()) if cache and cache.exists() else {}

    def __call__(self, texts: list[str]):
        from spacy.tokens import Doc

        keys = [hashlib.sha256(t.encode()).hexdigest() for t in texts]
        todo = [i for i, k in enumerate(keys) if k not in self.docs]
        for i, doc in zip(todo, self.nlp.pipe((texts[i] for i in todo), batch_size=64), strict=True):
            self.docs[keys[i]] = doc.to_bytes()
        if todo and self.cache:
            self.cache.parent.mkdir(parents=True, exist_ok=True)
            tmp = self.cache.with_suffix(".tmp")
            tmp.write_bytes(pickle.dumps(self.docs))
            tmp.replace(self.cache)
        return [Doc(self.nlp.vocab).from_bytes(self.docs[k]) for k in keys]


def featurise_rows(rows: list[Row], data_dir: str = "data", cache: Path | None = None) -> list[list[str]]:
    from mirage.judges.parse2 import featurise

    out = featurise([r.text for r in rows], [False] * len(rows), data_dir, CachedParser(cache))
    return [feats for _, feats in out]


def scored_rows(rows: list[Row], feats: list[list[str]]) -> list[int]:
    """Indices of the rows the scorer labels (a text of one sentence keeps the rule verdict: `scorer.rules_only`)."""
    from mirage.judges.scorer import rules_only

    return [i for i, (r, f) in enumerate(zip(rows, feats, strict=True)) if not rules_only(f)]


def select(features: list[str], groups: frozenset[str]) -> list[str]:
    return [f for f in features if GROUPS[f.split(":", 1)[0]] in groups]


# --- fitting --------------------------------------------------------------------------------------------------
def _matrix(feats: list[list[str]], vocab: dict[str, int]):
    import numpy as np
    from scipy.sparse import csr_matrix

    indptr, indices = [0], []
    for fs in feats:
        cols = sorted({vocab[f] for f in fs if f in vocab})
        indices += cols
        indptr.append(len(indices))
    return csr_matrix((np.ones(len(indices)), indices, indptr), shape=(len(feats), len(vocab)))


def fit(feats: list[list[str]], labels: list[int], c: float) -> dict:
    """A logistic regression on binary features: {"bias", "weights"} (features seen in >= MIN_COUNT texts)."""
    from sklearn.linear_model import LogisticRegression

    df = Counter(f for fs in feats for f in set(fs))
    vocab = {f: i for i, f in enumerate(sorted(f for f, n in df.items() if n >= MIN_COUNT))}
    model = LogisticRegression(C=c, solver="liblinear", max_iter=1000, random_state=SEED)
    model.fit(_matrix(feats, vocab), labels)
    names = sorted(vocab, key=vocab.get)
    return {"bias": float(model.intercept_[0]),
            "weights": {f: round(float(w), 5) for f, w in zip(names, model.coef_[0], strict=True) if abs(w) >= PRUNE}}


def _probabilities(model: dict, feats: list[list[str]]) -> list[float]:
    from mirage.judges.scorer import LinearModel

    m = LinearModel(model["bias"], 0.5, model["weights"])
    return [m.probability(fs) for fs in feats]


def f1_at(probs: list[float], labels: list[int], weights: list[int], t: float) -> float:
    """Weighted F1 of the labels `probability >= t`."""
    tp = sum(w for p, y, w in zip(probs, labels, weights, strict=True) if p >= t and y == 1)
    fp = sum(w for p, y, w in zip(probs, labels, weights, strict=True) if p >= t and y == 0)
    fn = sum(w for p, y, w in zip(probs, labels, weights, strict=True) if p < t and y == 1)
    return 2 * tp / (2 * tp + fp + fn) if tp + fp + fn else 0.0


def best_threshold(probs: list[float], labels: list[int], weights: list[int]) -> tuple[float, float]:
    """(threshold, weighted F1) maximising F1 over the candidate thresholds 0.20, 0.21, ..., 0.80."""
    best = (0.5, -1.0)
    for k in range(20, 81):
        f1 = f1_at(probs, labels, weights, k / 100)
        if f1 > best[1] + 1e-12:
            best = (k / 100, f1)
    return best


def cross_validate(feats: list[list[str]], labels: list[int], weights: list[int], c: float) -> list[float]:
    """Out-of-fold probabilities of stratified k-fold cross-validation (fixed seed)."""
    from sklearn.model_selection import StratifiedKFold

    probs = [0.0] * len(feats)
    folds = StratifiedKFold(n_splits=FOLDS, shuffle=True, random_state=SEED)
    for train_ix, test_ix in folds.split(feats, labels):
        model = fit([feats[i] for i in train_ix], [labels[i] for i in train_ix], c)
        for i, p in zip(test_ix, _probabilities(model, [feats[i] for i in test_ix]), strict=True):
            probs[i] = p
    return probs


def train_family(feats: list[list[str]], labels: list[int], weights: list[int], grid=C_GRID,
                 tune: list[bool] | None = None) -> dict:
    """C and threshold by cross-validation (maximising the out-of-fold F1 of the rows marked in `tune`, default
    all), then the model on every row: {"bias", "threshold", "weights", "c", "cv_f1", "tune_f1", "n", "n_tune"}."""
    tune = tune if tune and any(tune) else [True] * len(labels)
    ix = [i for i, t in enumerate(tune) if t]
    scored = []
    for c in grid:
        probs = cross_validate(feats, labels, weights, c)
        threshold, tune_f1 = best_threshold([probs[i] for i in ix], [labels[i] for i in ix], [weights[i] for i in ix])
        cv_f1 = f1_at(probs, labels, weights, threshold)
        scored.append((tune_f1, -c, c, threshold, cv_f1))
    tune_f1, _, c, threshold, cv_f1 = max(scored)
    model = fit(feats, labels, c)
    return {"bias": round(model["bias"], 5), "threshold": threshold, "c": c, "cv_f1": round(cv_f1, 4),
            "tune_f1": round(tune_f1, 4), "n": len(labels), "n_tune": len(ix),
            "weights": dict(sorted(model["weights"].items()))}


# --- the weights file ----------------------------------------------------------------------------------------
def training_files(data_dir: str = "data") -> list[str]:
    """Every file the shipped scorer is trained on: the training texts, the realistic dev split, the mechanism
    texts and the public single-sentence gold set (never a held-out file)."""
    from mirage import artefacts

    return artefacts.judge_training(data_dir) + artefacts.judge_realistic_dev(data_dir) + [artefacts.judge_gold(data_dir)]


def data_record(files: list[str], data_dir: str = "data") -> list[dict]:
    """[{path (relative to the data folder's parent), sha256, rows}] of the training files."""
    root = Path(data_dir).resolve().parent
    out = []
    for f in files:
        p = Path(f).resolve()
        name = p.relative_to(root).as_posix() if p.is_relative_to(root) else p.name
        out.append({"path": name, "sha256": sha256_file(p), "rows": sum(1 for line in p.open(encoding="utf-8")
                                                                              if line.strip())})
    return out


def train(files: list[str], data_dir: str = "data", cache: Path | None = None, grid=C_GRID, progress=None,
          groups: frozenset[str] = ALL_GROUPS) -> dict:
    """The weights document for `files`: one model per language family present, over the feature `groups`."""
    rows = [r for f in files for r in read_rows(f, data_dir)]
    raw = featurise_rows(rows, data_dir, cache)
    scored = scored_rows(rows, raw)
    feats = [select(f, groups) for f in raw]
    models = {}
    for family in sorted({rows[i].family for i in scored}):
        ix = [i for i in scored if rows[i].family == family]
        if progress:
            progress(f"{family}: {len(ix)} rows")
        models[family] = train_family([feats[i] for i in ix], [rows[i].label for i in ix], [rows[i].weight for i in ix],
                                      grid, [rows[i].source == TUNE_ON for i in ix])
    return {"scorer": "parse-v2 learned scorer: logistic regression per language family over "
                      "mirage.judges.features (docs/judge.md)",
            "command": "mirage judge train",
            "settings": {"c_grid": list(grid), "folds": FOLDS, "seed": SEED, "tune_on": TUNE_ON, "min_count": MIN_COUNT,
                         "prune": PRUNE, "groups": sorted(groups)},
            "data": data_record(files, data_dir),
            "models": models}


def write_weights(doc: dict, out: Path = WEIGHTS) -> Path:
    out.parent.mkdir(parents=True, exist_ok=True)
    tmp = out.with_suffix(".tmp")
    tmp.write_text(json.dumps(doc, ensure_ascii=False, sort_keys=True, indent=0) + "\n", encoding="utf-8")
    tmp.replace(out)
    return out
