"""`mirage label`: label one model's generations for one slice."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import click
from tqdm import tqdm

from mirage import artefacts
from mirage.io import DataError, read_jsonl, write_jsonl
from mirage.params import ParamsError, load_params
from mirage.protocol import CONDITIONS, SLICE_NAMES


def build_judge(name: str, p, params_path: str, data_dir: str, judge_store: str | None = None):
    """The labeler named `name`: the offline lexicon judge, or a registry model as LLM judge (store opened once)."""
    from mirage.label.judge import LLMJudge, chat_completer
    from mirage.label.lexicon import LEXICON_VERSION, LexiconJudge

    if name == LEXICON_VERSION:
        return LexiconJudge(p.window, data_dir), None
    from mirage.generate.api import open_session

    try:
        session = open_session(name, params_path, judge_store)
    except KeyError as exc:
        raise DataError(f"label.judge: {exc.args[0]}") from None
    return LLMJudge(name, chat_completer(session, p.judge_max_tokens, p.judge_batch)), session


@click.command()
@click.option("--model", required=True, help="Registry name of the model whose generations are labelled.")
@click.option("--slice", "slice_name", type=click.Choice(SLICE_NAMES), required=True, help="Slice to label.")
@click.option("--view", "views", multiple=True, type=click.Path(dir_okay=False),
              help="A generation view file (repeatable).  [default: every view the render configuration declares for MODEL x SLICE]")
@click.option("--data-dir", type=click.Path(file_okay=False), default=artefacts.DATA, show_default=True,
              help="Holds harnesses/ (C3 decision definitions) and identities.yaml.")
@click.option("--params", "params_path", default="params.yaml", show_default=True, help="Run configuration.")
@click.option("--judge", help="Override label.judge: `lexicon-v1` or a registry model name (LLM judge).")
@click.option("--judge-store", type=click.Path(file_okay=False),
              help=f"LLM judge: its store (calls go to the `judge` partition).  [default: {artefacts.store('{judge}')}]")
@click.option("--out", type=click.Path(dir_okay=False), help=f"Output JSONL.  [default: {artefacts.labels('{model}', '{slice}')}]")
def label(model: str, slice_name: str, views: tuple[str, ...], data_dir: str, params_path: str, judge: str | None,
          judge_store: str | None, out: str | None) -> None:
    """Label the generation views of MODEL x SLICE into one label file.

    Every sample gets a violence label (C2: reasoning and answer separately), C3 decisions parsed
    and normalised to s in [0, 1], CoT pathway tags, and refusal/error flags. Failed or
    unparseable samples stay in the file with null labels so metrics can count them.
    """
    from mirage.label.decisions import load_harnesses
    from mirage.label.labeler import REQUIRED, label_rows

    session = None
    try:
        params = load_params(params_path)
        p = params.label
        harnesses = load_harnesses(data_dir)
        labeler, session = build_judge(judge or p.judge, p, params_path, data_dir, judge_store)
        paths = [Path(v) for v in views] or [Path(v) for v in artefacts.views(params.render, model, slice_name)]
        missing = [str(x) for x in paths if not x.exists()]
        if missing:
            raise DataError(f"{missing[0]}: generation view not found ({len(missing)} missing); run `mirage generate` first")
        labels: list[dict] = []
        for path in tqdm(paths, desc=f"label {model}/{slice_name}", unit="file"):
            rows = list(read_jsonl(path, required=REQUIRED))
            labels.extend(label_rows(rows, harnesses, labeler, data_dir, source=str(path)))
        out_path = Path(out or artefacts.labels(model, slice_name))
        n = write_jsonl(out_path, labels)
    except (ParamsError, DataError, RuntimeError) as exc:
        raise click.ClickException(str(exc)) from None
    finally:
        if session is not None:
            session.close()
    counts = Counter((r["condition"], r["violent"], r["parse_ok"], r["refusal"], r["error"]) for r in labels)
    for cond in CONDITIONS:
        rows_c = [(k, v) for k, v in counts.items() if k[0] == cond]
        if rows_c:
            total = sum(v for _, v in rows_c)
            click.echo(f"{cond}: {total} samples, violent {sum(v for k, v in rows_c if k[1] == 1)}, "
                       f"unparseable {sum(v for k, v in rows_c if not k[2] and not k[3] and not k[4])}, "
                       f"refusals {sum(v for k, v in rows_c if k[3])}, errors {sum(v for k, v in rows_c if k[4])}")
    click.echo(f"wrote {n} labels ({labeler.name}) to {out_path}")
