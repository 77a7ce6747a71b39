"""Model selection of parse-v2's learned scorer (docs/judge.md, issue 23): each feature variant is trained on the
training texts ONLY (data/judge/train/*.jsonl; C and threshold by cross-validation there) and measured on the
realistic dev split and on the public single-sentence gold set, which it never saw.

    python -m benchmarks.bench_judge_training [--cache /tmp/parse_cache.pkl] [--variants words,roles,...]

Scores are weighted like `mirage judge eval` (a placeholder row counts once per identity; identity forms are
canonicalised, so every identity of a row gets the same label). The row `rules` is parse-v2's rule verdict alone.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from mirage import artefacts
from mirage.judges import train as T
from mirage.judges.scorer import LinearModel, label

VARIANTS = {
    "words": {"bow"},
    "roles": {"role", "agent"},
    "words+roles": {"bow", "role", "agent"},
    "words+roles+rules": {"bow", "role", "agent", "rule"},
}


def f1(pairs: list[tuple[int, int, int]]) -> str:
    tp = sum(w for y, p, w in pairs if y and p)
    fp = sum(w for y, p, w in pairs if not y and p)
    fn = sum(w for y, p, w in pairs if y and not p)
    if not tp + fp + fn:
        return "-"
    return f"{2 * tp / (2 * tp + fp + fn):.2f} ({tp / max(1, tp + fp):.2f}/{tp / max(1, tp + fn):.2f})"


def table_row(name: str, dev: list, gold: list, cv: str) -> str:
    """dev: (row, predicted) pairs; columns: overall, en, ar, C1, C2, C3, gold overall / en / ar, CV F1."""
    def cell(pairs, keep=lambda r: True):
        return f1([(r.label, p, r.weight) for r, p in pairs if keep(r)])

    cells = [cell(dev), cell(dev, lambda r: r.family == "en"), cell(dev, lambda r: r.family == "ar")]
    cells += [cell(dev, lambda r, c=c: r.condition == c) for c in ("C1", "C2", "C3")]
    cells += [cell(gold), cell(gold, lambda r: r.family == "en"), cell(gold, lambda r: r.family == "ar"), cv]
    return f"| {name} | " + " | ".join(cells) + " |"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--data-dir", default=artefacts.DATA)
    ap.add_argument("--cache", help="pickle of parsed texts (speed only)")
    ap.add_argument("--variants", default=",".join(VARIANTS))
    args = ap.parse_args()
    cache = Path(args.cache) if args.cache else None
    sets = {}
    for name, files in (("train", artefacts.judge_training(args.data_dir)),
                        ("dev", artefacts.judge_realistic_dev(args.data_dir)[:1]),
                        ("gold", [artefacts.judge_gold(args.data_dir)])):
        rows = [r for f in files for r in T.read_rows(f, args.data_dir)]
        sets[name] = (rows, T.featurise_rows(rows, args.data_dir, cache))
    print(f"training rows: {len(sets['train'][0])}; dev rows: {len(sets['dev'][0])}; gold rows: {len(sets['gold'][0])}")
    head = ("| variant | dev F1 (P/R) | dev en | dev ar | dev C1 | dev C2 | dev C3 | gold.jsonl | gold en | gold ar "
            "| CV F1 en / ar |")
    print(head)
    print("|" + "---|" * (head.count("|") - 1))
    rules = {name: [(r, int("R:1" in f)) for r, f in zip(*sets[name], strict=True)] for name in ("dev", "gold")}
    print(table_row("rules (parse-v2 rule verdict)", rules["dev"], rules["gold"], "-"))
    rows, raw = sets["train"]
    scored = T.scored_rows(rows, raw)
    for variant in args.variants.split(","):
        groups = frozenset(VARIANTS[variant])
        models, cv = {}, []
        for family in ("en", "ar"):
            ix = [i for i in scored if rows[i].family == family]
            m = T.train_family([T.select(raw[i], groups) for i in ix], [rows[i].label for i in ix],
                               [rows[i].weight for i in ix])
            models[family] = LinearModel(m["bias"], m["threshold"], m["weights"])
            cv.append(f"{m['cv_f1']:.2f}")
        out = {name: [(r, label(models, r.family, T.select(f, groups) + [x for x in f if x.startswith(("T:", "R:"))]))
                      for r, f in zip(*sets[name], strict=True)] for name in ("dev", "gold")}
        print(table_row(variant, out["dev"], out["gold"], " / ".join(cv)), flush=True)


if __name__ == "__main__":
    main()
