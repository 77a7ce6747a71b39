"""`mirage corpus`: build, validate and split the MIRAGE prompt corpus."""

from __future__ import annotations

import sys
from collections import Counter
from pathlib import Path

import click

from mirage import artefacts
from mirage.io import DataError, read_jsonl, write_jsonl
from mirage.params import ParamsError, load_params


def count_table(rows: list[dict]) -> str:
    """Markdown table of prompt counts per template x split x language (lite in brackets)."""
    langs = sorted({r["language"] for r in rows}, key=lambda lang: (lang != "en", lang))
    total, lite = Counter(), Counter()
    for r in rows:
        key = (r["template"], r["split"], r["language"])
        total[key] += 1
        lite[key] += r["lite"]
    lines = ["| template | split | " + " | ".join(langs) + " |", "|---|---|" + "---|" * len(langs)]
    for t, s in sorted({(k[0], k[1]) for k in total}):
        cells = [f"{total[(t, s, lang)]} ({lite[(t, s, lang)]} lite)" for lang in langs]
        lines.append(f"| {t} | {s} | " + " | ".join(cells) + " |")
    cells = [f"{sum(v for k, v in total.items() if k[2] == lang)} ({sum(v for k, v in lite.items() if k[2] == lang)} lite)" for lang in langs]
    lines.append("| all | all | " + " | ".join(cells) + " |")
    return "\n".join(lines)


@click.command()
@click.option("--params", "params_path", default="params.yaml", show_default=True, help="Run configuration.")
@click.option("--data-dir", type=click.Path(file_okay=False), default=artefacts.DATA, show_default=True,
              help="Sources: identities.yaml, templates/, lexicons/, harnesses/.")
@click.option("--out", type=click.Path(dir_okay=False), default=artefacts.corpus(), show_default=True, help="Output JSONL.")
@click.option("--check", "check_path", type=click.Path(dir_okay=False), is_flag=False, flag_value="", default=None,
              help="Only validate: an existing prompts JSONL (path, or --out when given without a value).")
def corpus(params_path: str, data_dir: str, out: str, check_path: str | None) -> None:
    """Build the prompt table: 6 templates x 200 base prompts x 5 identity variants,
    plus the Arabic parallel subset, with stratified lite/test splits.

    The Stage-2 validator runs on every build; any rejected pair is listed with its reason and
    nothing is written. With --check, validate an existing file instead (e.g. an edited corpus).
    """
    from mirage.corpus.build import build_rows
    from mirage.corpus.sources import load_sources
    from mirage.corpus.splits import assign_splits
    from mirage.corpus.validate import Validator

    try:
        p = load_params(params_path).corpus
        sources = load_sources(data_dir)
        validator = Validator(sources.identity_tokens, sources.presupposing_terms, sources.identity_forms, p.identities)
        if check_path is not None:
            path = check_path or out
            rows = list(read_jsonl(path, required=("base_id", "identity", "language", "text", "swap_span")))
            source = path
        else:
            rows = build_rows(sources, p)
            source = "built corpus"
    except (ParamsError, DataError) as exc:
        raise click.ClickException(str(exc)) from None
    issues = validator.check(rows)
    if issues:
        for issue in issues:
            click.echo(f"rejected {issue}", err=True)
        click.echo(f"{source}: {len(issues)} rejected item(s); nothing written.", err=True)
        sys.exit(1)
    if check_path is not None:
        click.echo(f"{source}: {len(rows)} prompts, {len({r['base_id'] for r in rows})} base prompts, all pairs valid")
        return
    assign_splits(rows, p.lite_fraction, p.test_fraction, p.seed)
    out_path = Path(out)
    n = write_jsonl(out_path, rows)
    click.echo(count_table(rows))
    click.echo(f"wrote {n} prompts ({len({r['base_id'] for r in rows})} base prompts) to {out_path}")
