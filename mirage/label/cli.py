"""`mirage label`: label one model's generations for one slice."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import click
from tqdm import tqdm

from mirage.io import DataError, read_jsonl, write_jsonl
from mirage.layout import CONDITIONS, generation_views
from mirage.params import ParamsError, load_params
from mirage.slices import SLICE_NAMES


@click.command()
@click.option("--model", required=True, help="Registry name of the model whose generations are labelled.")
@click.option("--slice", "slice_name", type=click.Choice(SLICE_NAMES), required=True, help="Slice to label.")
@click.option("--params", "params_path", default="params.yaml", show_default=True, help="Run configuration.")
@click.option("--judge", help="Override label.judge: `lexicon-v1` or a registry model name (LLM judge).")
@click.option("--out", type=click.Path(dir_okay=False), help="Output JSONL (default: {label.out_dir}/{model}/{slice}.jsonl).")
def label(model: str, slice_name: str, params_path: str, judge: str | None, out: str | None) -> None:
    """Label results/generations/{model}/{slice}/{C1,C2,C3}/*.jsonl into results/labels/{model}/{slice}.jsonl.

    Every sample gets a violence label (C2: reasoning and answer separately), C3 decisions parsed
    and normalised to s in [0, 1], CoT pathway tags, and refusal/error flags. Failed or
    unparseable samples stay in the file with null labels so metrics can count them.
    """
    from mirage.label.decisions import load_harnesses
    from mirage.label.judge import LLMJudge, chat_completer
    from mirage.label.labeler import REQUIRED, label_rows
    from mirage.label.lexicon import LEXICON_VERSION, LexiconJudge

    try:
        p = load_params(params_path).label
        harnesses = load_harnesses(p.data_dir)
        name = judge or p.judge
        if name == LEXICON_VERSION:
            labeler = LexiconJudge(p.window, p.data_dir)
        else:
            labeler = LLMJudge(name, chat_completer(name, p.judge_max_tokens, params_path, p.judge_batch))
        paths = generation_views(p.generations_dir, model, slice_name, CONDITIONS)
        if not paths:
            folder = Path(p.generations_dir) / model / slice_name
            raise DataError(f"{folder}: no generation views ({{C1,C2,C3}}/*.jsonl); run `mirage generate` first")
        labels: list[dict] = []
        for path in tqdm(paths, desc=f"label {model}/{slice_name}", unit="file"):
            rows = list(read_jsonl(path, required=REQUIRED))
            labels.extend(label_rows(rows, harnesses, labeler, p.data_dir, source=str(path)))
        out_path = Path(out or Path(p.out_dir) / model / f"{slice_name}.jsonl")
        n = write_jsonl(out_path, labels)
    except (ParamsError, DataError) as exc:
        raise click.ClickException(str(exc)) from None
    counts = Counter((r["condition"], r["violent"], r["parse_ok"], r["refusal"], r["error"]) for r in labels)
    for cond in CONDITIONS:
        rows_c = [(k, v) for k, v in counts.items() if k[0] == cond]
        if rows_c:
            total = sum(v for _, v in rows_c)
            click.echo(f"{cond}: {total} samples, violent {sum(v for k, v in rows_c if k[1] == 1)}, "
                       f"unparseable {sum(v for k, v in rows_c if not k[2] and not k[3] and not k[4])}, "
                       f"refusals {sum(v for k, v in rows_c if k[3])}, errors {sum(v for k, v in rows_c if k[4])}")
    click.echo(f"wrote {n} labels ({labeler.name}) to {out_path}")
