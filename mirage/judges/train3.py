"""Train parse-v3's learned layer and measure it leave-one-source-out (`mirage judge train --judge parse-v3`,
`mirage judge eval --judge parse-v3 --loso`).

Training rows: the synthetic training texts of parse-v2 (its training files, the realistic dev split, the public
single-sentence set) and the **dev sources** of the real-text gold set (`artefacts.judge_real`, rows whose
`source_split` is `dev`); the held-out sources are never read here. One L2-regularised logistic regression per
language family over `parse3.featurise`.

Selection is by held-out-source F1, never by a dev score alone: for every C of the grid, each dev source of a family
is scored by a model trained without it (leave-one-source-out), an asserted agent hit counting as 1 whatever the
model says (as it does when labelling). Among the (C, threshold) pairs that keep the synthetic floors, C is that of
the best pooled LOSO F1; that C's thresholds within one bootstrap standard error of the best are equivalent on real
text, and of them the one that labels the writer rounds best (synthetic training files left out in folds) is
chosen, so that a threshold on a flat stretch of real-text F1 does not give up the pipeline's own shapes. The weights
file records every training file's sha256, the settings and the per-source LOSO figures. Needs scikit-learn (the
`test` extra); labelling does not.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass
from pathlib import Path

from mirage import artefacts
from mirage.judges.eval.gold import read_gold
from mirage.judges.train import PRUNE, SEED, CachedParser, _matrix, data_record, read_rows, training_files

C_GRID = (0.1, 0.3, 1.0)
THRESHOLDS = tuple(k / 100 for k in range(10, 91, 5))
SYNTHETIC = "synthetic"
MIN_COUNT = 2
#: Synthetic sets left out whole as constraints on the choice (each scored by a model trained without it), with
#: the F1 each must reach, per language family: the realistic dev split (with its mechanism texts) and the public
#: single-sentence set. Arabic has no single-sentence floor: no Arabic pair reached one without giving up the real
#: text (pooled LOSO F1 0.21), and the issue's Arabic bar is 0.75 (docs/judge.md).
CONSTRAINTS = {"en": {"realistic": (("dev.jsonl", "dev_extra.jsonl"), "dev.jsonl", 0.85),
                      "single": (("gold.jsonl",), "gold.jsonl", 0.90)},
               "ar": {"realistic": (("dev.jsonl", "dev_extra.jsonl"), "dev.jsonl", 0.75)}}
#: Weight of a synthetic training text against a real one (real text decides; the synthetic texts teach the
#: pipeline's shapes): chosen by pooled LOSO F1 with the realistic and single-sentence sets as constraints
#: (docs/judge.md, "How parse-v3 was chosen").
SYNTHETIC_WEIGHT = 0.3
#: Writer-round folds and bootstrap resamples of the selection (train_family).
WRITER_FOLDS = 5
BOOTSTRAP = 200


@dataclass(frozen=True)
class Row:
    text: str
    label: int
    family: str
    source: str  # the real source's name, or SYNTHETIC
    file: str = ""  # a synthetic row's gold file name

    @property
    def synthetic(self) -> bool:
        return self.source == SYNTHETIC


def real_rows(path: str | Path, data_dir: str = "data", split: str | None = "dev") -> list[Row]:
    """The real-text gold rows of `path` (all, or those whose `source_split` is `split`)."""
    return [Row(it.text, it.label, it.family, str(it.extra.get("source", Path(path).stem)))
            for it in read_gold(path, data_dir) if split is None or it.extra.get("source_split") == split]


def synthetic_rows(data_dir: str = "data") -> list[Row]:
    return [Row(r.text, r.label, r.family, SYNTHETIC, r.source) for f in training_files(data_dir)
            for r in read_rows(f, data_dir)]


def featurised(rows: list[Row], data_dir: str = "data", cache: Path | None = None) -> list[tuple[str, list[str], bool]]:
    from mirage.judges.parse3 import featurise

    return featurise([r.text for r in rows], [False] * len(rows), data_dir, CachedParser(cache))


def fit(feats: list[list[str]], labels: list[int], weights: list[float], c: float) -> dict:
    """A weighted logistic regression on binary features: {"bias", "weights"} (features of >= MIN_COUNT texts)."""
    from collections import Counter

    from sklearn.linear_model import LogisticRegression

    df = Counter(f for fs in feats for f in set(fs))
    vocab = {f: i for i, f in enumerate(sorted(f for f, n in df.items() if n >= MIN_COUNT))}
    model = LogisticRegression(C=c, solver="liblinear", max_iter=1000, random_state=SEED)
    model.fit(_matrix(feats, vocab), labels, sample_weight=weights)
    names = sorted(vocab, key=vocab.get)
    return {"bias": float(model.intercept_[0]),
            "weights": {f: round(float(w), 5) for f, w in zip(names, model.coef_[0], strict=True) if abs(w) >= PRUNE}}


def row_weight(row: Row) -> float:
    return SYNTHETIC_WEIGHT if row.source == SYNTHETIC else 1.0


def _f1(y: list[int], p: list[int]) -> float:
    tp = sum(a and b for a, b in zip(y, p, strict=True))
    wrong = sum(a != b for a, b in zip(y, p, strict=True))
    return 2 * tp / (2 * tp + wrong) if tp + wrong else 0.0


def _probabilities(model: dict, feats: list[list[str]]) -> list[float]:
    from mirage.judges.scorer import LinearModel

    m = LinearModel(model["bias"], 0.5, model["weights"])
    return [m.probability(f) for f in feats]


def loso_probabilities(rows: list[Row], feats: list[list[str]], c: float, held: list[int]) -> dict[int, float]:
    """For each index in `held` (real rows), the probability of a model trained on every row but those of its source."""
    out: dict[int, float] = {}
    by_source: dict[str, list[int]] = defaultdict(list)
    for i in held:
        by_source[rows[i].source].append(i)
    for source, test in sorted(by_source.items()):
        train = [i for i, r in enumerate(rows) if r.source != source]
        model = fit([feats[i] for i in train], [rows[i].label for i in train], [row_weight(rows[i]) for i in train], c)
        out.update(zip(test, _probabilities(model, [feats[i] for i in test]), strict=True))
    return out


def per_source(rows: list[Row], ix: list[int], pred: dict[int, int]) -> dict[str, dict]:
    groups: dict[str, list[int]] = defaultdict(list)
    for i in ix:
        groups[rows[i].source].append(i)
    return {s: {"n": len(g), "positives": sum(rows[i].label for i in g),
                "f1": round(_f1([rows[i].label for i in g], [pred[i] for i in g]), 4)} for s, g in sorted(groups.items())}


def left_out(rows: list[Row], feats: list[list[str]], c: float, train_out: tuple[str, ...], scored: str) -> dict[int, float]:
    """Probabilities of the synthetic file `scored` from a model trained without the files `train_out`."""
    test = [i for i, r in enumerate(rows) if r.synthetic and r.file == scored]
    if not test:
        return {}
    train = [i for i, r in enumerate(rows) if not (r.synthetic and r.file in train_out)]
    model = fit([feats[i] for i in train], [rows[i].label for i in train], [row_weight(rows[i]) for i in train], c)
    return dict(zip(test, _probabilities(model, [feats[i] for i in test]), strict=True))


def writer_folds(rows: list[Row], k: int = WRITER_FOLDS) -> list[set[str]]:
    """The synthetic training files (`t*.jsonl`, one writer round each) in `k` folds (fewer when there are fewer
    files)."""
    files = sorted({r.file for r in rows if r.synthetic and r.file.startswith("t")})
    return [set(files[j::k]) for j in range(min(k, len(files)))]


def writer_rounds(rows: list[Row], feats: list[list[str]], c: float) -> dict[int, float]:
    """Probabilities of the writer rounds (`writer_folds`), each fold from a model trained without it:
    realistic-shape text from rounds the model never saw."""
    out: dict[int, float] = {}
    for fold in writer_folds(rows):
        test = [i for i, r in enumerate(rows) if r.synthetic and r.file in fold]
        train = [i for i, r in enumerate(rows) if not (r.synthetic and r.file in fold)]
        model = fit([feats[i] for i in train], [rows[i].label for i in train], [row_weight(rows[i]) for i in train], c)
        out.update(zip(test, _probabilities(model, [feats[i] for i in test]), strict=True))
    return out


def bootstrap_se(y: list[int], pred: list[int], n: int = BOOTSTRAP, seed: int = SEED) -> float:
    """Standard error of F1 over `n` resamples of the rows."""
    import numpy as np

    rng = np.random.default_rng(seed)
    y_, p_ = np.asarray(y), np.asarray(pred)
    scores = []
    for _ in range(n):
        ix = rng.integers(0, len(y_), len(y_))
        scores.append(_f1(y_[ix].tolist(), p_[ix].tolist()))
    return float(np.std(scores))


def train_family(rows: list[Row], feats: list[list[str]], hits: list[bool], grid=C_GRID, progress=None,
                 constraints: dict | None = None) -> dict:
    """C and threshold. Among the pairs whose left-out synthetic sets (CONSTRAINTS: the realistic dev split, the
    single-sentence set, each scored by a model trained without it) reach their floors (when none does: those with
    the best worst-floor margin), C is that of the best pooled leave-one-source-out F1 over the family's real dev
    rows; the thresholds of that C whose LOSO F1 is within one bootstrap standard error of the best are equivalent on
    real text, and of them the one that labels the writer rounds best (`writer_rounds`) is chosen. Then the model
    on all rows."""
    real = [i for i, r in enumerate(rows) if not r.synthetic]
    y = [rows[i].label for i in real]
    floors = constraints or {}
    pairs = []  # (margin, LOSO F1, writer-round F1, c, t, pred, checks)
    for c in grid:
        probs = loso_probabilities(rows, feats, c, real)
        held = {name: left_out(rows, feats, c, out, scored) for name, (out, scored, _) in floors.items()}
        rounds = writer_rounds(rows, feats, c)
        for t in THRESHOLDS:
            pred = {i: int(hits[i] or probs[i] >= t) for i in real}
            checks = {name: _f1([rows[i].label for i in p], [int(hits[i] or p[i] >= t) for i in p])
                      for name, p in held.items() if p}
            margin = min(min([checks[n] - floors[n][2] for n in checks], default=0.0), 0.0)
            round_f1 = _f1([rows[i].label for i in rounds], [int(hits[i] or rounds[i] >= t) for i in rounds])
            pairs.append((margin, _f1(y, [pred[i] for i in real]), round_f1, c, t, pred, checks))
        if progress:
            progress(f"  C={c}: best LOSO F1 so far {max(p[1] for p in pairs):.3f}")
    top = max(p[0] for p in pairs)
    admissible = [p for p in pairs if p[0] == top]
    best = max(admissible, key=lambda p: p[1])
    se = bootstrap_se(y, [best[5][i] for i in real])
    equivalent = [p for p in admissible if p[3] == best[3] and p[1] >= best[1] - se]
    margin, score, round_f1, c, t, pred, checks = max(equivalent, key=lambda p: (p[2], p[1]))
    model = fit(feats, [r.label for r in rows], [row_weight(r) for r in rows], c)
    return {"bias": round(model["bias"], 5), "threshold": t, "c": c, "loso_f1": round(score, 4), "n": len(rows),
            "best_loso_f1": round(best[1], 4), "loso_se": round(se, 4), "writer_rounds_f1": round(round_f1, 4),
            "left_out_f1": {k: round(v, 4) for k, v in checks.items()},
            "n_real": len(real), "loso_by_source": per_source(rows, real, pred),
            "weights": dict(sorted(model["weights"].items()))}


def training_data(data_dir: str = "data") -> tuple[list[str], list[Row]]:
    """(files, rows): the synthetic training files and the real set's dev rows."""
    real_file = artefacts.judge_real(data_dir)
    return [*training_files(data_dir), real_file], synthetic_rows(data_dir) + real_rows(real_file, data_dir, "dev")


def train(data_dir: str = "data", cache: Path | None = None, grid=C_GRID, progress=None) -> dict:
    """The parse-v3 weights document."""
    files, rows = training_data(data_dir)
    out = featurised(rows, data_dir, cache)
    models = {}
    for family in sorted({r.family for r in rows}):
        ix = [i for i, r in enumerate(rows) if r.family == family]
        if progress:
            progress(f"{family}: {len(ix)} rows ({sum(rows[i].source != SYNTHETIC for i in ix)} real)")
        models[family] = train_family([rows[i] for i in ix], [out[i][1] for i in ix], [out[i][2] for i in ix], grid,
                                      progress, CONSTRAINTS.get(family))
    return {"scorer": "parse-v3 learned layer: logistic regression per language family over mirage.judges.parse3 "
                      "features; C and threshold by leave-one-source-out F1 on the real-text dev sources (docs/judge.md)",
            "command": "mirage judge train --judge parse-v3",
            "settings": {"c_grid": list(grid), "thresholds": [THRESHOLDS[0], THRESHOLDS[-1], 0.05],
                         "constraints": {f: {k: {"left_out": list(v[0]), "floor": v[2]} for k, v in c.items()}
                                         for f, c in CONSTRAINTS.items()},
                         "synthetic_weight": SYNTHETIC_WEIGHT, "min_count": MIN_COUNT, "seed": SEED,
                         "writer_folds": WRITER_FOLDS, "bootstrap": BOOTSTRAP,
                         "selection": "among (C, threshold) pairs whose left-out synthetic sets reach their floors: "
                                      "C of the best pooled leave-one-source-out F1 of the real dev rows; of that "
                                      "C's thresholds within one bootstrap standard error of it, the best F1 on the "
                                      "writer rounds left out"},
            "data": data_record(files, data_dir),
            "models": models}


def loso_labels(items: list, data_dir: str = "data", weights: str | None = None, cache: Path | None = None) -> list[int]:
    """parse-v3's label of each real gold item from a model that never saw the item's source: a dev source is scored
    by a model retrained without it (the shipped C and threshold), a held-out source by the shipped model (trained
    without any held-out source)."""
    from mirage.judges.parse3 import WEIGHTS, decide
    from mirage.judges.scorer import LinearModel, load_models

    shipped = load_models(weights or str(WEIGHTS))
    files, train_rows = training_data(data_dir)
    train_out = featurised(train_rows, data_dir, cache)
    test = [Row(it.text, it.label, it.family, str(it.extra.get("source", ""))) for it in items]
    test_out = featurised(test, data_dir, cache)
    dev_sources = {r.source for r in train_rows if r.source != SYNTHETIC}
    labels = [0] * len(items)
    groups: dict[tuple[str, str], list[int]] = defaultdict(list)
    for k, r in enumerate(test):
        groups[r.family, r.source if r.source in dev_sources else ""].append(k)
    for (family, source), ks in sorted(groups.items()):
        model = shipped[family]
        if source:
            ix = [i for i, r in enumerate(train_rows) if r.family == family and r.source != source]
            c = model_c(weights, family)
            m = fit([train_out[i][1] for i in ix], [train_rows[i].label for i in ix],
                    [row_weight(train_rows[i]) for i in ix], c)
            model = LinearModel(m["bias"], model.threshold, m["weights"])
        for k in ks:
            labels[k] = decide({family: model}, family, test_out[k][1], test_out[k][2])
    return labels


def model_c(weights: str | None, family: str) -> float:
    import json

    from mirage.judges.parse3 import WEIGHTS

    return float(json.loads(Path(weights or WEIGHTS).read_text(encoding="utf-8"))["models"][family]["c"])
