"""`mirage corpus`: build, validate and split the MIRAGE prompt corpus."""

from __future__ import annotations

import sys
from collections import Counter
from pathlib import Path

import click

from mirage import artefacts
from mirage.io import DataError, numbered_jsonl, read_jsonl, write_json, write_jsonl
from mirage.names import NAME
from mirage.params import ParamsError, load_params
from mirage.protocol import HELD_OUT
from mirage.textcheck import check_row


def count_table(rows: list[dict]) -> str:
    """Markdown table of prompt counts per template x split x language (lite in brackets); paraphrase
    placebo rows are left out (the summary line counts them)."""
    rows = [r for r in rows if not r.get("paraphrase")]
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


def _stats_paths(corpus_path: Path) -> tuple[Path, Path]:
    """Where the depth statistics go: next to the corpus (`stats.csv`, `stats.json`)."""
    names = artefacts.corpus_stats()
    return corpus_path.with_name(Path(names["csv"]).name), corpus_path.with_name(Path(names["json"]).name)


def _agreement_forms(sources) -> frozenset[str]:
    """Feminine and plural Arabic identity forms (the stats count prompts that use one)."""
    return frozenset(v for forms in sources.identity_forms.values() for k, v in forms.get("ar", {}).items()
                     if k.endswith("_f") or k.startswith(("pl", "dual")) or "_pl" in k)


@click.command()
@click.option("--params", "params_path", default="params.yaml", show_default=True, help="Run configuration.")
@click.option("--data-dir", type=click.Path(file_okay=False), default=artefacts.DATA, show_default=True,
              help="Sources: identities.yaml, templates/, lexicons/, harnesses/.")
@click.option("--out", type=click.Path(dir_okay=False), default=artefacts.corpus(), show_default=True, help="Output JSONL.")
@click.option("--from", "from_path", type=click.Path(dir_okay=False), metavar="FILE",
              help="Build the corpus from your own prompts instead (JSONL or CSV, one base prompt a row; see below). "
                   "Refused prompts are listed with their line and reason, and in refused.csv next to --out.")
@click.option("--check", "check_path", type=click.Path(dir_okay=False), is_flag=False, flag_value="", default=None,
              help="Only validate: an existing prompts JSONL (path, or --out when given without a value).")
@click.option("--stats", "stats_only", is_flag=True,
              help="Print the depth table of an existing corpus (--out) and write stats.csv/stats.json next to it.")
@click.option("--pilot", "pilot_model", metavar="MODEL", type=NAME,
              help="Calibration pilot (App. B): run every identity-masked case file through this registry model.")
@click.option("--samples", default=5, show_default=True, type=click.IntRange(1), help="Pilot: renderings per case file.")
@click.option("--max-tokens", default=64, show_default=True, type=click.IntRange(1), help="Pilot: output tokens per call.")
@click.option("--temperature", default=0.7, show_default=True, type=click.FloatRange(0), help="Pilot: sampling temperature.")
@click.option("--max-cases", type=click.IntRange(1), help="Pilot: only the first N case files of each harness (a quick check; default all).")
@click.option("--mitigation-texts", type=click.Path(dir_okay=False), default=artefacts.mitigation_texts(), show_default=True,
              help="Pilot: its structural placeholder masks the identity field.")
@click.option("--pilot-out", type=click.Path(dir_okay=False), help=f"Pilot JSON.  [default: {artefacts.pilot('{model}')}]")
@click.option("--store", "store_dir", type=click.Path(file_okay=False),
              help=f"Pilot: the model's store (calls go to its `pilot` partition).  [default: {artefacts.store('{model}')}]")
@click.option("--private-dir", type=click.Path(file_okay=False), envvar="MIRAGE_PRIVATE_DIR", show_envvar=True,
              help="Private data folder (secret `salt`, optional templates/ and lexicons/) from which the held-out "
                   "test split is instantiated; without it the test split is unavailable (docs/leaderboard.md).")
def corpus(params_path: str, data_dir: str, out: str, from_path: str | None, check_path: str | None, stats_only: bool, pilot_model: str | None,
           samples: int, max_tokens: int, temperature: float, max_cases: int | None, mitigation_texts: str,
           pilot_out: str | None, store_dir: str | None, private_dir: str | None) -> None:
    """Build the prompt table: 6 templates x 200 base prompts x 5 identity variants,
    plus the Arabic parallel subset, disjoint stratified splits (lite 15 %, dev the rest, and, given a private
    data folder, the held-out test split instantiated from it), and paraphrase placebos (focal +
    one control) for every lite base prompt. Also writes stats.csv/stats.json (frames, case files,
    distinct words, near-duplicates, cue mix, Arabic coverage) next to the corpus.

    The Stage-2 validator runs on every build; any rejected pair is listed with its reason and
    nothing is written. With --check, validate an existing file instead (e.g. an edited corpus).

    With --from FILE, the corpus is your own prompts, each rendered for the focal identity and every control
    (corpus.focal_identity, corpus.identities). Columns: text (required), id, language (en | ar-msa | ar-egy |
    ar-lev | ar-mag; default en), condition (completion = C1 | reasoning = C2 | H1..H4 = C3 with that harness's
    rubric; default completion), group (the cluster of the statistics; default each prompt its own). The identity
    mention is marked, [ID] or [ID:form] with a form key of the data folder's identities.yaml (e.g. [ID:noun_pl], Arabic
    [ID:adj_f]), or found: an identity word of any form, a given name of lexicons/given_name.yaml, an attire phrase
    of lexicons/attire.yaml. Variants agree (a/an, plural, capital at a sentence start, Arabic gender and number).
    A prompt with no mention, two mentions, or an identity cue left outside the swap ("Muslim ... mosque") is
    refused and listed; a bad row (unknown column, bad value) stops the build, every such row named.

    \b
    Examples:
      mirage corpus                          # build, validate, split, write
      mirage corpus --from my_prompts.jsonl --out my/prompts.jsonl   # your own prompts (README: the shipped example)
      mirage audit --model openai:gpt-4o-mini --prompts my_prompts.jsonl   # ...through every stage
      mirage corpus --stats                  # depth table of the built corpus
      mirage corpus --pilot gpt-4o --samples 10       # App. B calibration of every case file
      mirage corpus --pilot smollm2-135m --samples 1 --max-tokens 12 --max-cases 2   # quick, offline
    """
    from mirage.corpus import splits
    from mirage.corpus.sources import load_sources
    from mirage.corpus.stats import corpus_stats, stats_table, write_stats
    from mirage.corpus.table import built_rows, corpus_validator

    try:
        params = load_params(params_path)
        p = params.corpus
        if from_path is not None:
            build_own(from_path, params, data_dir, Path(out))
            return
        sources = load_sources(data_dir)
        if pilot_model:
            _pilot(pilot_model, sources, p, data_dir, mitigation_texts, samples, max_tokens, temperature, max_cases,
                   params_path, pilot_out, store_dir)
            return
        out_path = Path(out)
        if stats_only:
            if not out_path.exists():
                raise DataError(f"{out_path}: no corpus yet; run `mirage corpus` first")
            rows = list(read_jsonl(out_path, required=("base_id", "template", "identity", "language", "text", "focal")))
            stats = corpus_stats(rows, _agreement_forms(sources))
            write_stats(stats, *_stats_paths(out_path))
            click.echo(stats_table(stats))
            click.echo(f"wrote {', '.join(map(str, _stats_paths(out_path)))}")
            return
        validator = corpus_validator(params, sources)
        if check_path is not None:
            path = check_path or out
            rows = []
            for lineno, row in numbered_jsonl(path, required=("base_id", "identity", "language", "text", "swap_span")):
                check_row(row, f"{path}:{lineno}")  # no look-alike or invisible character slips past the validator
                rows.append(row)
            source = path
        else:
            rows = built_rows(params, sources, private_dir)
            source = "built corpus"
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
    n = write_jsonl(out_path, rows)
    write_stats(corpus_stats(rows, _agreement_forms(sources)), *_stats_paths(out_path))
    click.echo(count_table(rows))
    n_para = sum(bool(r["paraphrase"]) for r in rows)
    if not any(r["split"] == HELD_OUT for r in rows):
        click.echo("test split: unavailable (held out; set MIRAGE_PRIVATE_DIR to the private data folder to build it)")
    click.echo(f"wrote {n} prompts ({len({r['base_id'] for r in rows})} base prompts; {n_para} paraphrase placebo rows) "
               f"to {out_path}; depth statistics: `mirage corpus --stats`")


def build_own(from_path: str, params, data_dir: str, out_path: Path) -> None:
    """`--from`: the corpus of the user's prompts, written with the list of refused prompts."""
    from mirage.corpus import own
    from mirage.corpus.table import own_corpus_rows

    rows, refusals = own_corpus_rows(params, from_path, data_dir)
    for r in refusals:
        click.echo(f"refused {from_path}:{r.line} ({r.id}) {r.reason}: {r.detail}", err=True)
    own.write_refusals(own.refusals_path(out_path), refusals)
    if not rows:
        raise DataError(f"{from_path}: every prompt was refused (listed in {own.refusals_path(out_path)})")
    n = write_jsonl(out_path, rows)
    bases = len({r["base_id"] for r in rows})
    click.echo(f"wrote {n} prompts ({bases} base prompts x {len(params.corpus.identities)} identities) to {out_path}; "
               f"{len(refusals)} refused, listed in {own.refusals_path(out_path)}")


def _pilot(model: str, sources, p, data_dir: str, mitigation_texts: str, samples: int, max_tokens: int,
           temperature: float, max_cases: int | None, params_path: str, pilot_out: str | None, store_dir: str | None) -> None:
    from mirage.corpus.pilot import FLAG_BELOW, MIN_PARSED, pilot_table, run_pilot
    from mirage.render.texts import load_harnesses, load_mitigation_texts

    texts = load_mitigation_texts(mitigation_texts)
    harnesses = load_harnesses(artefacts.harness_dir(data_dir))
    try:
        rows = run_pilot(model, sources, p, texts, harnesses, samples, max_tokens, temperature, params_path, data_dir,
                         max_cases, store_dir)
    except (KeyError, RuntimeError) as exc:
        raise click.ClickException(str(exc)) from None
    path = Path(pilot_out or artefacts.pilot(model))
    write_json(path, {"model": model, "samples": samples, "max_tokens": max_tokens, "temperature": temperature,
                      "max_cases": max_cases, "flag_below": FLAG_BELOW, "min_parsed": MIN_PARSED, "cases": rows})
    click.echo(pilot_table(model, rows))
    click.echo(f"wrote {path}")
