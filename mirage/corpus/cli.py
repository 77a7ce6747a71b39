"""`mirage corpus`: build, validate and split the MIRAGE prompt corpus."""

from __future__ import annotations

import sys
from collections import Counter
from pathlib import Path

import click

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
@click.option("--out", type=click.Path(dir_okay=False), help="Output JSONL (default: corpus.out from params).")
@click.option("--check", "check_path", type=click.Path(dir_okay=False), is_flag=False, flag_value="", default=None,
              help="Only validate: an existing prompts JSONL (path, or corpus.out when given without a value).")
@click.option("--private-dir", type=click.Path(file_okay=False), envvar="MIRAGE_PRIVATE_DIR", show_envvar=True,
              help="Private data folder (secret `salt`, optional templates/ and lexicons/) from which the held-out "
                   "test split is instantiated; without it the test split is unavailable (docs/leaderboard.md).")
def corpus(params_path: str, out: str | None, check_path: str | None, private_dir: str | None) -> None:
    """Build results/corpus/prompts.jsonl: 6 templates x 200 base prompts x 5 identity variants,
    plus the Arabic parallel subset, with disjoint stratified splits: lite (15%) and dev (the rest),
    and, given a private data folder, the held-out test split instantiated from it.

    The Stage-2 validator runs on every build; any rejected pair is listed with its reason and
    nothing is written. With --check, validate an existing file instead (e.g. an edited corpus).
    """
    from mirage.corpus import splits
    from mirage.corpus.build import build_rows
    from mirage.corpus.sources import load_sources
    from mirage.corpus.validate import Validator

    try:
        p = load_params(params_path).corpus
        sources = load_sources(p.data_dir)
        validator = Validator(sources.identity_tokens, sources.presupposing_terms, sources.identity_forms, p.identities)
        if check_path is not None:
            path = check_path or p.out
            rows = list(read_jsonl(path, required=("base_id", "identity", "language", "text", "swap_span")))
            source = path
        else:
            rows = build_rows(sources, p)
            source = "built corpus"
            splits.assign_splits(rows, p.lite_fraction, p.seed)
            private = splits.private_dir(private_dir)
            if private is not None:
                rows += splits.held_out_rows(sources, p, rows, private)
        splits.check_disjoint(rows, source)
    except (ParamsError, DataError) as exc:
        raise click.ClickException(str(exc)) from None
    issues = validator.check(rows)
    if issues:
        for issue in issues:
            click.echo(f"rejected {issue}", err=True)
        click.echo(f"{source}: {len(issues)} rejected item(s); nothing written.", err=True)
        sys.exit(1)
    if check_path is not None:
        click.echo(f"{source}: {len(rows)} prompts, {len({r['base_id'] for r in rows})} base prompts, all pairs valid, splits disjoint")
        return
    out_path = Path(out or p.out)
    n = write_jsonl(out_path, rows)
    click.echo(count_table(rows))
    if not any(r["split"] == "test" for r in rows):
        click.echo("test split: unavailable (held out; set MIRAGE_PRIVATE_DIR to the private data folder to build it)")
    click.echo(f"wrote {n} prompts ({len({r['base_id'] for r in rows})} base prompts) to {out_path}")
