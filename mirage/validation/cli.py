"""`mirage validate export|import`: human spot-validation of the violence labels (App. H)."""

from __future__ import annotations

import csv
from pathlib import Path

import click

from mirage import artefacts, untrusted
from mirage.io import DataError, atomic_write, read_jsonl, write_json
from mirage.limits import LimitsParams
from mirage.names import NAME
from mirage.params import ParamsError, load_params
from mirage.protocol import SLICE_NAMES

LABEL_CONFIG = """<View>
  <Header value="Prompt ($template, $condition)"/><Text name="prompt" value="$prompt"/>
  <Header value="Reasoning (C2 only)"/><Text name="reasoning" value="$reasoning"/>
  <Header value="Response"/><Text name="response" value="$response"/>
  <Choices name="violent" toName="response" choice="single" required="true">
    <Choice value="violent"/><Choice value="non-violent"/><Choice value="ambiguous"/>
  </Choices>
</View>
"""
VALUES = {"1": 1, "yes": 1, "violent": 1, "true": 1, "0": 0, "no": 0, "non-violent": 0, "nonviolent": 0, "false": 0,
          "ambiguous": 0}


@click.group()
def validate() -> None:
    """Human spot-validation of the violence labels: export a blind 10% sample, import annotations, report kappa."""


def _write_csv(path: Path, columns: list[str], rows: list[dict]) -> None:
    with atomic_write(path) as fh:
        w = csv.DictWriter(fh, fieldnames=columns, lineterminator="\n")
        w.writeheader()
        w.writerows({c: r.get(c, "") for c in columns} for r in rows)


@validate.command("export")
@click.option("--slice", "slice_name", type=click.Choice(SLICE_NAMES), required=True, help="Slice to sample.")
@click.option("--model", required=True, type=NAME, help="Model whose labels are validated.")
@click.option("--params", "params_path", default="params.yaml", show_default=True, help="Run configuration.")
@click.option("--labels", "labels_path", type=click.Path(dir_okay=False), help=f"Label file.  [default: {artefacts.labels('{model}', '{slice}')}]")
@click.option("--view", "views", multiple=True, type=click.Path(dir_okay=False),
              help="Generation views holding the sampled completions (repeatable).  [default: the slice's declared views]")
@click.option("--corpus", "corpus_path", type=click.Path(dir_okay=False), default=artefacts.corpus(), show_default=True,
              help="Corpus whose swap spans mask the identity in exported prompts.")
@click.option("--data-dir", type=click.Path(file_okay=False), default=artefacts.DATA, show_default=True, help="Holds identities.yaml.")
@click.option("--out-dir", type=click.Path(file_okay=False), help=f"Output folder.  [default: {artefacts.validation_dir('{slice}', '{model}')}]")
def export(slice_name: str, model: str, params_path: str, labels_path: str | None, views: tuple[str, ...],
           corpus_path: str, data_dir: str, out_dir: str | None) -> None:
    """Draw label.validation.fraction of the labelled samples per template x identity x condition,
    mask every identity-related term (identities.yaml forms, identity tokens and presupposing terms,
    identity-bound lexicon entries, with derived forms, in English and Arabic), and write items.csv (for annotators), tasks.json + label_config.xml
    (Label Studio) and key.csv (judge labels and identities; keep it away from annotators)."""
    from mirage.validation.export import (
        ITEM_COLUMNS,
        KEY_COLUMNS,
        draw_sample,
        identity_pattern,
        identity_terms,
        mask_prompt,
        mask_text,
    )

    try:
        params = load_params(params_path)
        vp = params.label.validation
        labels_path = labels_path or artefacts.labels(model, slice_name)
        sample = draw_sample(list(read_jsonl(labels_path, required=("key", "template", "identity", "condition", "violent", "prompt_id"))),
                             vp.fraction, vp.seed)
        keys = {r["key"] for r in sample}
        gens = {}
        for path in views or artefacts.views(params.render, model, slice_name):
            if Path(path).exists():
                gens.update({g["key"]: g for g in read_jsonl(path, required=("key", "answer")) if g["key"] in keys})
        corpus = {c["prompt_id"]: c for c in read_jsonl(corpus_path, required=("prompt_id", "text", "swap_span"))}
        pattern = identity_pattern(identity_terms(Path(data_dir)))
    except (ParamsError, DataError, OSError) as exc:
        raise click.ClickException(str(exc)) from None
    missing = sorted(keys - set(gens))
    if missing:
        raise click.ClickException(f"{len(missing)} sampled label key(s) have no generation row (first: {missing[0]}); relabel after generating")
    items, key_rows = [], []
    for n, lab in enumerate(sample, 1):
        gen, item_id = gens[lab["key"]], f"v{n:05d}"
        c = corpus.get(lab["prompt_id"])
        prompt = mask_prompt(c, vp.mask) if c else ""
        items.append({"item_id": item_id, "template": lab["template"], "condition": lab["condition"],
                      "prompt": mask_text(prompt, pattern, vp.mask), "reasoning": mask_text(gen.get("reasoning"), pattern, vp.mask),
                      "response": mask_text(gen["answer"], pattern, vp.mask)})
        key_rows.append({"item_id": item_id, "key": lab["key"], "model": model, "template": lab["template"],
                         "condition": lab["condition"], "identity": lab["identity"], "language": lab.get("language", ""),
                         "judge": lab.get("judge", ""), "judge_violent": lab["violent"]})
    out = Path(out_dir or artefacts.validation_dir(slice_name, model))
    _write_csv(out / "items.csv", ITEM_COLUMNS, items)
    _write_csv(out / "key.csv", KEY_COLUMNS, key_rows)
    write_json(out / "tasks.json", [{"id": i + 1, "data": it} for i, it in enumerate(items)])
    with atomic_write(out / "label_config.xml") as fh:
        fh.write(LABEL_CONFIG)
    click.echo(f"exported {len(items)} items to {out} (items.csv, tasks.json, label_config.xml; key.csv is not for annotators)")


def _label(value: str, where: str) -> int | None:
    v = str(value).strip().lower()
    if not v:
        return None
    if v not in VALUES:
        raise DataError(f"{where}: field violent: {value!r} is not one of {', '.join(sorted(VALUES))}")
    return VALUES[v]


def _get(obj: object, key: str, kind: type | tuple[type, ...], where: str, default: object = None) -> object:
    """obj[key] of the expected type (Label Studio exports are read as untrusted input)."""
    if not isinstance(obj, dict):
        raise DataError(f"{where}: expected a JSON object, got {type(obj).__name__}")
    value = obj.get(key, default)
    if value is not None and not isinstance(value, kind):
        names = " or ".join(k.__name__ for k in (kind if isinstance(kind, tuple) else (kind,)))
        raise DataError(f"{where}: field {key}: expected {names}, got {type(value).__name__}")
    return value


def read_annotations(path: Path, limits: LimitsParams = untrusted.LIMITS) -> dict[str, dict[str, int]]:
    """annotator -> item_id -> 0/1 from an items.csv filled in by annotators or a Label Studio JSON export, both
    read as untrusted input (mirage.untrusted)."""
    out: dict[str, dict[str, int]] = {}
    if path.suffix == ".json":
        tasks = untrusted.load_json(path, "Label Studio export", limits)
        if not isinstance(tasks, list):
            raise DataError(f"{path}: expected a JSON list of tasks, got {type(tasks).__name__}")
        for t, task in enumerate(tasks):
            where = f"{path}: task {t}"
            item = _get(_get(task, "data", dict, where) or {}, "item_id", str, f"{where} data")
            if not item:
                raise DataError(f"{where}: field data.item_id missing")
            for a, ann in enumerate(_get(task, "annotations", list, where, [])):
                who = str(_get(ann, "completed_by", (str, int), f"{where} annotation {a}", "annotator"))
                for res in _get(ann, "result", list, f"{where} annotation {a}", []):
                    value = _get(res, "value", dict, f"{where} annotation {a} result") or {}
                    choices = _get(value, "choices", list, f"{where} annotation {a} result value") or []
                    if choices:
                        y = _label(choices[0], where)
                        if y is not None:
                            out.setdefault(who, {})[item] = y
        return out
    for lineno, row in untrusted.iter_csv(path, "annotation file", limits):
        need = {"item_id", "annotator", "violent"} - set(row)
        if need:
            raise DataError(f"{path}:1: missing column(s) {', '.join(sorted(need))}")
        y = _label(row["violent"], f"{path}:{lineno}")
        if y is not None:
            if not row["annotator"].strip():
                raise DataError(f"{path}:{lineno}: field annotator: empty")
            out.setdefault(row["annotator"].strip(), {})[row["item_id"]] = y
    return out


def read_key(path: Path, limits: LimitsParams = untrusted.LIMITS) -> list[dict[str, str]]:
    """key.csv from `validate export`: item_id, template, identity and judge_violent (0/1) per item."""
    rows = []
    for lineno, row in untrusted.iter_csv(path, "key file", limits):
        need = {"item_id", "template", "judge_violent"} - set(row)
        if need:
            raise DataError(f"{path}:1: missing column(s) {', '.join(sorted(need))}")
        if row["judge_violent"] not in ("0", "1"):
            raise DataError(f"{path}:{lineno}: field judge_violent: {row['judge_violent'][:40]!r} is not 0 or 1")
        rows.append(row)
    return rows


@validate.command("import")
@click.argument("files", nargs=-1, required=True, type=click.Path(exists=True, dir_okay=False))
@click.option("--key", "key_path", type=click.Path(exists=True, dir_okay=False), help="key.csv from export (default: next to the first FILE).")
@click.option("--out", type=click.Path(dir_okay=False), help="Report JSON (default: kappa.json next to key.csv).")
@click.option("--params", "params_path", default="params.yaml", show_default=True, type=click.Path(dir_okay=False),
              help="Run configuration whose `limits:` bound what is read from FILES (built-in limits when absent).")
def import_(files: tuple[str, ...], key_path: str | None, out: str | None, params_path: str) -> None:
    """Read annotated items.csv files or Label Studio exports and report Cohen's kappa: judge vs the
    majority human label, overall, per template (Table 10) and per identity (from key.csv: the judge must be
    as accurate on control variants as on focal ones), and between each pair of annotators; and the judge's
    sensitivity and specificity per language family x condition (`judge_accuracy`), which `mirage metrics`
    uses to correct V and dV for judge error."""
    from mirage.validation.kappa import agreement_report

    key_file = Path(key_path or Path(files[0]).with_name("key.csv"))
    try:
        if not key_file.exists():
            raise DataError(f"{key_file}: key file not found; pass --key")
        limits = load_params(params_path).limits if Path(params_path).exists() else untrusted.LIMITS
        key_rows = read_key(key_file, limits)
        judge = {r["item_id"]: int(r["judge_violent"]) for r in key_rows}
        template = {r["item_id"]: r["template"] for r in key_rows}
        identity = {r["item_id"]: r.get("identity") or "unknown" for r in key_rows}
        cells = {r["item_id"]: (r.get("model") or "", r.get("judge") or "",
                                f"{(r.get('language') or 'en').split('-')[0]}/{r['condition']}") for r in key_rows}
        annotations: dict[str, dict[str, int]] = {}
        for f in files:
            for who, labels in read_annotations(Path(f), limits).items():
                unknown = sorted(set(labels) - set(judge))
                if unknown:
                    raise DataError(f"{f}: item_id {unknown[0]} is not in {key_file}")
                annotations.setdefault(who, {}).update(labels)
    except (DataError, ParamsError) as exc:
        raise click.ClickException(str(exc)) from None
    if not annotations:
        raise click.ClickException("no annotations found (is the `violent` column filled in?)")
    report = agreement_report(annotations, judge, template, identity, cells)
    report["annotator_counts"] = {a: len(v) for a, v in sorted(annotations.items())}
    out_path = Path(out or key_file.with_name("kappa.json"))
    write_json(out_path, report)
    click.echo("judge vs human (majority) Cohen's kappa:")
    for t, r in report["judge_vs_human"].items():
        click.echo(f"  {t:8s} kappa={r['kappa']} n={r['n']}")
    click.echo("judge vs human (majority) Cohen's kappa per identity:")
    for ident, r in report["judge_vs_human_by_identity"].items():
        click.echo(f"  {ident:10s} kappa={r['kappa']} n={r['n']}")
    for pair, rep in report["annotators"].items():
        click.echo(f"annotators {pair}: kappa={rep['overall']['kappa']} n={rep['overall']['n']}")
    click.echo("judge vs human (majority): sensitivity / specificity (used by `mirage metrics` to correct V and dV):")
    for acc in report["judge_accuracy"]:
        for cell, c in [("all", acc["overall"]), *acc["by_language_condition"].items()]:
            click.echo(f"  {acc['model']} {acc['judge']} {cell:6s} Se={c['sensitivity']} ({c['tp']}/{c['tp'] + c['fn']}) "
                       f"Sp={c['specificity']} ({c['tn']}/{c['tn'] + c['fp']})")
    click.echo(f"wrote {out_path}")
