"""`mirage compare A B --slice S`: which differences between two runs are real."""

from __future__ import annotations

from pathlib import Path

import click

from mirage import artefacts
from mirage.io import DataError, atomic_write, write_json
from mirage.params import ParamsError, load_params, section_hash
from mirage.protocol import SLICE_NAMES


def write_outputs(outs: dict, table, summary: dict, png: bytes, section: str) -> None:
    """A comparison's four files, each written whole (temp file + rename): table CSV, summary JSON, figure, section."""
    with atomic_write(outs["table"]) as fh:
        table.to_csv(fh, index=False, lineterminator="\n")
    write_json(outs["summary"], summary)
    with atomic_write(outs["figure"], "wb", encoding=None) as fh:
        fh.write(png)
    with atomic_write(outs["section"]) as fh:
        fh.write(section)


@click.command()
@click.argument("a")
@click.argument("b")
@click.option("--slice", "slice_name", type=click.Choice(SLICE_NAMES), required=True, help="Slice whose labels both sides come from.")
@click.option("--labels", "label_files", multiple=True, type=click.Path(dir_okay=False),
              help=f"Label files holding both sides' rows (repeatable; a judge comparison names each judge's file).  "
                   f"[default: {artefacts.labels('{model}', '{slice}')} of each side's model]")
@click.option("--params", "params_path", default="params.yaml", show_default=True, help="Run configuration (sections metrics, compare).")
@click.option("--name", help="Name of the comparison (its folder).  [default: the params `compare.pairs` name of (A, B, "
              "slice), else A--B with every character outside letters, digits, '.', '_', '-' as '_']")
@click.option("--out-table", type=click.Path(dir_okay=False), help=f"Per-claim CSV.  [default: {artefacts.compare('{slice}', '{name}')['table']}]")
@click.option("--out-summary", type=click.Path(dir_okay=False), help="JSON summary.  [default: next to the table]")
@click.option("--out-figure", type=click.Path(dir_okay=False), help="PNG of the differences.  [default: next to the table]")
@click.option("--out-section", type=click.Path(dir_okay=False), help="HTML report section.  [default: next to the table]")
def compare(a: str, b: str, slice_name: str, label_files: tuple[str, ...], params_path: str, name: str | None,
            out_table: str | None, out_summary: str | None, out_figure: str | None, out_section: str | None) -> None:
    """Compare the headline claims of two runs A and B on the prompts both have, and say which differences are real.

    A and B are each MODEL[@REVISION][/mitigation=M][/judge=J]:

    \b
      mirage compare gpt-4o claude-opus-4 --slice lite                  two models
      mirage compare gpt-4o@2024-08-06 gpt-4o@2024-05-13 --slice lite   two snapshots (labels' revision column)
      mirage compare llama-3.3-70b/mitigation=M1 llama-3.3-70b --slice lite   a mitigation against none
      mirage compare m/judge=parse-v2 m/judge=lexicon-v1 --slice demo \\
          --labels parse-v2-labels.jsonl --labels lexicon-labels.jsonl        one model's completions, two judges

    Only prompts both sides have are used (the counts are reported). For every headline claim (its excess over the
    identity-placebo floor, as `mirage metrics` tests it): the difference A − B with a paired frame-level interval
    (Rao-Wu, the same weights for both sides, so shared prompts cancel), a paired relabelling test (A and B swapped
    within frames), Holm across the claims, and a verdict: 'A more biased' / 'B more biased' (Holm rejects; the side
    in the direction adverse to the focal identity), 'equivalent' (two one-sided tests: the (1 − 2α) interval inside
    ± compare.margin_pp, CAI ± compare.margin_cai), else 'inconclusive'. Draws, alpha, seed and resampling: params metrics.

    Writes compare.csv (one row per claim), compare.json (sides, shared prompts, verdicts, provenance), compare.png
    (differences, intervals, margin band) and section.html (the report section, figure inlined).
    """
    from mirage.compare.paired import compare_runs
    from mirage.compare.render import figure_png, section_html
    from mirage.compare.sides import select
    from mirage.config.compare import parse_side
    from mirage.metrics.cli import load_labels
    from mirage.provenance import code_version

    try:
        params = load_params(params_path)
        sa, sb = parse_side(a), parse_side(b)
        paths = [Path(x) for x in label_files] or [Path(artefacts.labels(m, slice_name)) for m in dict.fromkeys((sa.model, sb.model))]
        if missing := [str(x) for x in paths if not x.exists()]:
            raise DataError(f"no label file(s): {', '.join(missing)}; run `mirage label` first or name them with --labels")
        import pandas as pd

        labels = pd.concat([load_labels([x]) for x in paths], ignore_index=True)  # one judge's file may repeat another's samples
        click.echo(f"comparing {a} with {b} on slice {slice_name} ...")
        table, counts = compare_runs(select(labels, sa), select(labels, sb), params.metrics, params.compare)
    except (ParamsError, DataError) as exc:
        raise click.ClickException(str(exc)) from None
    named = [k for k, v in params.compare.pairs.items() if (v.a, v.b, v.slice) == (a, b, slice_name)]
    name = name or (named[0] if named else f"{sa.slug}--{sb.slug}")
    default = artefacts.compare(slice_name, name)
    outs = {"table": Path(out_table or default["table"])}
    for key in ("summary", "figure", "section"):
        given = {"summary": out_summary, "figure": out_figure, "section": out_section}[key]
        outs[key] = Path(given or outs["table"].with_name(Path(default[key]).name))
    tested = table[table["p_adj"].notna()]
    summary = {
        "name": name, "slice": slice_name, "a": a, "b": b, "prompts": counts, "alpha": params.metrics.alpha,
        "margin_pp": params.compare.margin_pp, "margin_cai": params.compare.margin_cai, "m": len(tested),
        "verdicts": {str(k): int(v) for k, v in table["verdict"].value_counts().sort_index().items()},
        "claims": [{k: (None if isinstance(v, float) and v != v else v) for k, v in r.items()}
                   for r in table.to_dict("records")],
        "provenance": {"code_version": code_version(), "params_hash": section_hash(params, "metrics", "compare"),
                       "label_files": [str(x) for x in paths]},
    }
    png = figure_png(table, a, b, params.metrics.alpha, params.report.dpi)
    write_outputs(outs, table, summary, png, section_html(table, summary, png))
    verdicts = ", ".join(f"{k} {v}" for k, v in summary["verdicts"].items())
    click.echo(f"{counts['prompts_shared']} shared prompts; {len(table)} claims ({verdicts}); wrote {outs['table']} "
               f"(+ {outs['summary'].name}, {outs['figure'].name}, {outs['section'].name})")


@click.command("over-time")
@click.argument("name")
@click.option("--labels", "label_files", multiple=True, type=click.Path(dir_okay=False),
              help=f"Label files holding the snapshots' rows (repeatable).  [default: {artefacts.labels('{model}', '{slice}')} "
                   "of each snapshot's model]")
@click.option("--params", "params_path", default="params.yaml", show_default=True, help="Run configuration (compare.series.NAME).")
@click.option("--out-table", type=click.Path(dir_okay=False), help=f"CSV.  [default: {artefacts.series('{slice}', '{name}')['table']}]")
def over_time(name: str, label_files: tuple[str, ...], params_path: str, out_table: str | None) -> None:
    """Bias over time: every pooled headline claim of the snapshots of one model family (params `compare.series.NAME`:
    slice and [{side: MODEL@REVISION, date: "YYYY-MM-DD"}, ...], oldest first) against release date, on the prompts every
    snapshot has, each with its frame-bootstrap interval, and the `mirage compare` verdict of each step from one
    snapshot to the next (A = the newer: 'A more biased' = the bias grew).

    Writes series.csv (one row per snapshot x claim), series.json, series.png (one panel per claim) and section.html
    (the report section), beside each other.
    """
    import base64
    import html

    import pandas as pd

    from mirage.compare.series import figure_png
    from mirage.compare.series import over_time as run
    from mirage.compare.sides import select
    from mirage.config.compare import parse_side
    from mirage.metrics.cli import load_labels
    from mirage.provenance import code_version

    try:
        params = load_params(params_path)
        if name not in params.compare.series:
            raise DataError(f"{params_path}: compare.series has no {name!r} (it has: {', '.join(params.compare.series) or 'none'})")
        series = params.compare.series[name]
        sides = [parse_side(s.side) for s in series.snapshots]
        paths = [Path(x) for x in label_files] or [Path(artefacts.labels(m, series.slice)) for m in dict.fromkeys(s.model for s in sides)]
        if missing := [str(x) for x in paths if not x.exists()]:
            raise DataError(f"no label file(s): {', '.join(missing)}; run `mirage label` first or name them with --labels")
        labels = pd.concat([load_labels([x]) for x in paths], ignore_index=True)
        click.echo(f"{name}: {len(sides)} snapshots on slice {series.slice} ...")
        table, counts = run([select(labels, s) for s in sides], series, params.metrics, params.compare)
    except (ParamsError, DataError) as exc:
        raise click.ClickException(str(exc)) from None
    default = artefacts.series(series.slice, name)
    outs = {"table": Path(out_table or default["table"])}
    outs |= {k: outs["table"].with_name(Path(default[k]).name) for k in ("summary", "figure", "section")}
    png = figure_png(table, name, params.metrics.alpha, params.report.dpi)
    summary = {"name": name, "slice": series.slice, "snapshots": [s.model_dump(mode="json") for s in series.snapshots],
               "prompts": counts, "alpha": params.metrics.alpha,
               "rows": [{k: (None if isinstance(v, float) and v != v else v) for k, v in r.items()} for r in table.to_dict("records")],
               "provenance": {"code_version": code_version(), "params_hash": section_hash(params, "metrics", "compare"),
                              "label_files": [str(x) for x in paths]}}
    e = html.escape
    cells = "\n".join(f"<tr><td>{e(r['claim'])}</td><td>{e(r['side'])}</td><td>{r['date']}</td><td>{r['n']}</td>"
                      f"<td>{r['estimate']:.4g}</td><td>[{r['ci_low']:.4g}, {r['ci_high']:.4g}]</td><td>{e(r['step_verdict'])}</td></tr>"
                      for r in table.to_dict("records"))
    section = (f"<section id=\"series-{e(name)}\"><h2>Bias over time: {e(name)} (slice {e(series.slice)})</h2>\n<p>Every pooled "
               f"headline claim of {len(sides)} snapshots on the {counts['prompts_shared']:,} prompts all of them have, with "
               f"{100 * (1 - params.metrics.alpha):g} % frame-bootstrap intervals; 'step' is the paired comparison with the "
               "previous snapshot (A = the newer; Holm over the step's claims).</p>\n"
               f"<img alt=\"claims against release date\" src=\"data:image/png;base64,{base64.b64encode(png).decode()}\">\n"
               "<table><tr><th>claim</th><th>snapshot</th><th>date</th><th>n</th><th>estimate</th><th>interval</th>"
               f"<th>step</th></tr>\n{cells}\n</table></section>\n")
    write_outputs(outs, table, summary, png, section)
    click.echo(f"{len(table)} rows ({table['claim'].nunique()} claims x {len(sides)} snapshots); wrote {outs['table']} "
               f"(+ {outs['summary'].name}, {outs['figure'].name}, {outs['section'].name})")


@click.command("judges")
@click.option("--model", required=True, help="The model whose completions the judges labelled.")
@click.option("--slice", "slice_name", type=click.Choice(SLICE_NAMES), required=True, help="Slice of the labels.")
@click.option("--labels", "label_files", multiple=True, type=click.Path(dir_okay=False),
              help="Label files of the model's completions, one judge each or several, or one jury run (repeatable).  "
                   f"[default: {artefacts.labels('{model}', '{slice}')}]")
@click.option("--judge", "judges", multiple=True, help="Judges to compare, the first the reference (repeatable); a jury's "
              "members are judges too.  [default: every judge in the labels in order of appearance, each jury followed "
              "by its members]")
@click.option("--judge-eval", "judge_evals", multiple=True, type=click.Path(dir_okay=False),
              help="judge_eval.json of each judge or jury member on the same gold sets (repeatable): their error "
                   f"correlation and the effective number of independent judges.  [default: {artefacts.judge_eval('{judge}')} "
                   "of each judge that is not a jury, when present]")
@click.option("--params", "params_path", default="params.yaml", show_default=True, help="Run configuration (metrics, compare).")
@click.option("--out-table", type=click.Path(dir_okay=False),
              help=f"CSV.  [default: {artefacts.judge_sensitivity('{slice}', '{model}')['table']}]")
def judges(model: str, slice_name: str, label_files: tuple[str, ...], judges: tuple[str, ...], judge_evals: tuple[str, ...],
           params_path: str, out_table: str | None) -> None:
    """Judge sensitivity: would another judge have changed the conclusion? For one model's completions labelled by
    several judges, or by a jury (whose label rows keep each member's own labels: one jury run is enough): every
    headline claim under each judge against the reference judge (the first; in a jury run the jury's majority) with the
    paired interval, test, Holm and verdict of `mirage compare` (same prompts, same samples: only the judge differs),
    the sample-level agreement and Cohen's kappa of every two judges, and on the gold sets (their judge_eval.json) each
    judge's error rate, the agreement and error correlation of every two and the effective number of independent
    judges, J / (1 + (J - 1) mean correlation).

    \b
      mirage judges --model m --slice lite                            a jury run (label.judge: [A, B, C])
      mirage judges --model m --slice lite --labels a.jsonl --labels b.jsonl   two judges' runs

    Writes judges.csv (claims per judge against the reference), judges.json and section.html, beside each other.
    """
    from mirage.compare.judges import judge_sensitivity
    from mirage.metrics.cli import load_labels

    try:
        params = load_params(params_path)
        paths = [Path(x) for x in label_files] or [Path(artefacts.labels(model, slice_name))]
        if missing := [str(x) for x in paths if not x.exists()]:
            raise DataError(f"no label file(s): {', '.join(missing)}; run `mirage label` first or name them with --labels")
        import pandas as pd

        labels = pd.concat([load_labels([x], votes=True) for x in paths], ignore_index=True)
        table, summary, section = judge_sensitivity(labels, model, slice_name, list(judges),
                                                    [Path(x) for x in judge_evals] or None, params)
    except (ParamsError, DataError) as exc:
        raise click.ClickException(str(exc)) from None
    summary["provenance"]["label_files"] = [str(x) for x in paths]
    names = summary["judges"]
    default = artefacts.judge_sensitivity(slice_name, model)
    outs = {"table": Path(out_table or default["table"])}
    outs |= {k: outs["table"].with_name(Path(default[k]).name) for k in ("summary", "section")}
    with atomic_write(outs["table"]) as fh:
        table.to_csv(fh, index=False, lineterminator="\n")
    write_json(outs["summary"], summary)
    with atomic_write(outs["section"]) as fh:
        fh.write(section)
    click.echo(f"{len(names)} judges of {model}: {len(table)} claim differences; wrote {outs['table']} "
               f"(+ {outs['summary'].name}, {outs['section'].name})")
