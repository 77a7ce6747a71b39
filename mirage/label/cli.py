"""`mirage label`: label one model's generations for one slice."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import click
from tqdm import tqdm

from mirage import artefacts
from mirage.io import DataError, read_jsonl, write_jsonl
from mirage.names import JUDGE, NAME
from mirage.params import ParamsError, load_params
from mirage.protocol import CONDITIONS, SLICE_NAMES


@click.command()
@click.option("--model", required=True, type=NAME, help="Registry name of the model whose generations are labelled.")
@click.option("--slice", "slice_name", type=click.Choice(SLICE_NAMES), required=True, help="Slice to label.")
@click.option("--view", "views", multiple=True, type=click.Path(dir_okay=False),
              help="A generation view file (repeatable).  [default: every view the render configuration declares for MODEL x SLICE]")
@click.option("--data-dir", type=click.Path(file_okay=False), default=artefacts.DATA, show_default=True,
              help="Holds harnesses/ (C3 decision definitions) and identities.yaml.")
@click.option("--params", "params_path", default="params.yaml", show_default=True, help="Run configuration.")
@click.option("--judge", type=JUDGE, help="Override the slice's judge (slices.SLICE.judge, else label.judge): `parse-v2`, `parse-v1`, "
                                "`lexicon-v1`, a registry model name (LLM judge) or `jury:A,B,C` (majority vote).")
@click.option("--judge-store", type=click.Path(file_okay=False),
              help=f"LLM judge: its store (new replies go to its partition `{artefacts.judge_partition('{slice}')}`, "
                   f"which a release carries).  [default: {artefacts.store('{judge}')}]")
@click.option("--out", type=click.Path(dir_okay=False), help=f"Output JSONL.  [default: {artefacts.labels('{model}', '{slice}')}]")
def label(model: str, slice_name: str, views: tuple[str, ...], data_dir: str, params_path: str, judge: str | None,
          judge_store: str | None, out: str | None) -> None:
    """Label the generation views of MODEL x SLICE into one label file.

    Every sample gets a violence label (C2: reasoning and answer separately), C3 decisions parsed
    and normalised to s in [0, 1], CoT pathway tags, and refusal/error flags. Failed or
    unparseable samples stay in the file with null labels so metrics can count them.
    """
    from mirage.label.labeler import REQUIRED, label_batches

    try:
        params = load_params(params_path)
        paths = [Path(v) for v in views] or [Path(v) for v in artefacts.views(params.render, model, slice_name)]
        missing = [str(x) for x in paths if not x.exists()]
        if missing:
            raise DataError(f"{missing[0]}: generation view not found ({len(missing)} missing); run `mirage generate` first")
        with tqdm(paths, desc=f"read {model}/{slice_name}", unit="file") as bar:
            batches = [(str(path), list(read_jsonl(path, required=REQUIRED))) for path in bar]
        labels, judge_used = label_batches(params, batches, data_dir, judge or params.judge_of(slice_name), judge_store,
                                        params_path, artefacts.judge_partition(slice_name))
        out_path = Path(out or artefacts.labels(model, slice_name))
        n = write_jsonl(out_path, labels)
    except (ParamsError, DataError, RuntimeError) as exc:
        raise click.ClickException(str(exc)) from None
    counts = Counter((r["condition"], r["violent"], r["parse_ok"], r["refusal"], r["error"]) for r in labels)
    for cond in CONDITIONS:
        rows_c = [(k, v) for k, v in counts.items() if k[0] == cond]
        if rows_c:
            total = sum(v for _, v in rows_c)
            click.echo(f"{cond}: {total} samples, violent {sum(v for k, v in rows_c if k[1] == 1)}, "
                       f"unparseable {sum(v for k, v in rows_c if not k[2] and not k[3] and not k[4])}, "
                       f"refusals {sum(v for k, v in rows_c if k[3])}, errors {sum(v for k, v in rows_c if k[4])}")
    click.echo(f"wrote {n} labels ({judge_used}) to {out_path}")
