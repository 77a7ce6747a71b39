"""`mirage report`: figures, tables and the self-contained HTML page for one slice."""

from __future__ import annotations

from pathlib import Path

import click
import yaml

from mirage.io import DataError
from mirage.layout import generation_views
from mirage.params import ParamsError, load_params
from mirage.report.protocol import JUDGE_EVAL
from mirage.slices import SLICE_NAMES

REQUESTS_DIR = "results/requests"
SAMPLES_PAGE = "samples.html"


def harness_titles(data_dir: Path) -> dict[str, str]:
    """H1..H4 -> task title from data/harnesses/*.yaml (axis labels); empty when the folder is absent."""
    out = {}
    for path in sorted(data_dir.glob("harnesses/*.yaml")):
        spec = yaml.safe_load(path.read_text(encoding="utf-8")) or {}
        out[str(spec.get("id", path.stem))] = str(spec.get("title", ""))
    return out


@click.command()
@click.option("--slice", "slice_name", type=click.Choice(SLICE_NAMES), default="demo", show_default=True, help="Which run to report on.")
@click.option("--params", "params_path", default="params.yaml", show_default=True, help="Run configuration (paths in its `report:` section).")
@click.option("--judge-eval", "judge_eval", type=click.Path(dir_okay=False),
              help=f"judge_eval.json of the judge that labelled V (`mirage judge eval`); default: {JUDGE_EVAL} for the judge named in the labels.")
@click.option("--requests-dir", default=REQUESTS_DIR, show_default=True, type=click.Path(file_okay=False),
              help="Rendered requests ({C1,C2,C3}.jsonl from `mirage render`): the prompts shown in the sample browser.")
def report(slice_name: str, params_path: str, judge_eval: str | None, requests_dir: str) -> None:
    """Build the paper's figures (2-6, the placebo-floor plot, the probe; PNG+SVG), tables (1, 3, 4, 6-15 as far as
    the run produced them; CSV, Markdown, LaTeX), one self-contained HTML page and a sample browser for SLICE,
    from results/metrics/{slice}/ plus labels, generations, requests, the compute estimate, the judge's
    gold-set evaluation and (optionally) the logit-lens probe.

    Every number carries its n; degenerate intervals are not shown; bias estimates are shown with their
    identity-placebo floor. Parts the run did not produce are shown as "not computed" with the reason. Outputs:
    results/figures/{slice}/, results/tables/{slice}/, results/report/{slice}/index.html and samples.html.
    """
    from tqdm import tqdm

    from mirage.report import data, figures, html, protocol, samples, tables

    try:
        params = load_params(params_path)
    except ParamsError as exc:
        raise click.ClickException(str(exc)) from None
    p = params.report
    metrics_dir = Path(p.metrics_dir) / slice_name
    metrics_csv = metrics_dir / "metrics.csv"
    if not metrics_csv.exists():
        raise click.ClickException(f"{metrics_csv} not found: run `mirage metrics --slice {slice_name}` first")
    slice_params = getattr(params.slices, slice_name)
    fig_dir, tab_dir = Path(p.figures_dir) / slice_name, Path(p.tables_dir) / slice_name
    out_html = Path(p.out_dir) / slice_name / "index.html"
    out_samples = out_html.with_name(SAMPLES_PAGE)
    steps = tqdm(total=6, desc=f"report {slice_name}", unit="step")
    try:
        df = data.load_metrics(metrics_csv)
        prov = data.load_provenance(metrics_dir / "summary.json", slice_name, slice_params.model_dump(exclude={"models"}))
        models = figures.ordered(df["model"].unique(), slice_params.models)
        labels = data.load_jsonl_frame([Path(p.labels_dir) / m / f"{slice_name}.jsonl" for m in models], ("model", "condition"))
        gens = data.load_jsonl_frame([v for m in models for v in generation_views(p.generations_dir, m, slice_name)],
                                     ("key", "model", "condition", "text"))
        estimate = data.load_estimate(Path(p.estimate_dir) / f"{slice_name}.json")
        probe = data.load_probe(Path(p.probe_dir), models)
        judges = [protocol.load_judge(j, Path(judge_eval) if judge_eval else Path(JUDGE_EVAL.format(judge=j)))
                  for j in protocol.judges_of(labels, params.label.judge)]
        devs = protocol.deviations(params, slice_name, labels, df, judges, prov.deviations)
        steps.update()
        rendered = figures.build_all(df, models, prov, fig_dir, p.figure_formats, p.dpi, harness_titles(Path(params.corpus.data_dir)), probe, labels)
        steps.update()
        built = tables.build_all(tables.Inputs(df, models, labels, gens, estimate, data.load_probe_onsets(Path(p.probe_dir), models)), tab_dir)
        steps.update()
        cells = html.drilldown(labels, gens, models, p.examples_per_cell, p.max_example_chars)
        sample_rows = samples.rows(labels, gens)
        prompts = samples.load_prompts(Path(requests_dir), set(sample_rows["request_id"].dropna()))
        steps.update()
        fig_files = {s: [f"{s}.{f}" for f in p.figure_formats] for s, r in rendered.items() if r.png}
        tab_files = {t.stem: [f"{t.stem}.{e}" for e in ("csv", "md", "tex")] for t in built if t.data is not None}
        page = html.render(prov, models, rendered, fig_files, built, tab_files, cells,
                           yaml.safe_dump(params.model_dump(mode="json"), sort_keys=False, allow_unicode=True), str(fig_dir), str(tab_dir),
                           headlines=html.headline(df, models), judges=judges, deviations=devs, counts=html.counts(gens, models),
                           samples_href=SAMPLES_PAGE, placebo_computed=df.attrs.get("placebo_computed", False))
        html.write(out_samples, samples.render(sample_rows, prompts, slice_name, f"{requests_dir}/{{C1,C2,C3}}.jsonl", out_html.name))
        html.write(out_html, page)
        steps.update()
    except DataError as exc:
        raise click.ClickException(str(exc)) from None
    finally:
        steps.close()
    n_fig = sum(r.png is not None for r in rendered.values())
    n_tab = sum(t.data is not None for t in built)
    click.echo(f"{n_fig}/{len(rendered)} figures -> {fig_dir}; {n_tab}/{len(built)} tables -> {tab_dir}; page -> {out_html}; "
               f"{len(sample_rows):,} samples -> {out_samples}")
    for stem, r in rendered.items():
        if r.png is None:
            click.echo(f"  not drawn: {stem} ({r.note})")
    for t in built:
        if t.missing:
            click.echo(f"  not computed: {t.title} ({t.missing})")
