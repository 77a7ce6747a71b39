"""`mirage report`: figures, tables and the self-contained HTML page for one slice."""

from __future__ import annotations

from pathlib import Path

import click
import yaml

from mirage.io import DataError
from mirage.layout import generation_views
from mirage.params import ParamsError, load_params
from mirage.slices import SLICE_NAMES


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
def report(slice_name: str, params_path: str) -> None:
    """Build the paper's figures (2-6, PNG+SVG), tables (3, 4, 6, 8-12, 15; CSV, Markdown, LaTeX) and one
    self-contained HTML page for SLICE from results/metrics/{slice}/ plus labels, generations, the
    compute estimate and (optionally) the logit-lens probe.

    Parts the run did not produce are shown as "not computed in this run". Outputs:
    results/figures/{slice}/, results/tables/{slice}/, results/report/{slice}/index.html.
    """
    from tqdm import tqdm

    from mirage.report import data, figures, html, tables

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
    steps = tqdm(total=5, desc=f"report {slice_name}", unit="step")
    try:
        df = data.load_metrics(metrics_csv)
        prov = data.load_provenance(metrics_dir / "summary.json", slice_name, slice_params.model_dump(exclude={"models"}))
        models = figures.ordered(df["model"].unique(), slice_params.models)
        labels = data.load_jsonl_frame([Path(p.labels_dir) / m / f"{slice_name}.jsonl" for m in models], ("model", "condition"))
        gens = data.load_jsonl_frame([v for m in models for v in generation_views(p.generations_dir, m, slice_name)],
                                     ("key", "model", "condition", "text"))
        estimate = data.load_estimate(Path(p.estimate_dir) / f"{slice_name}.json")
        probe = data.load_probe(Path(p.probe_dir), models)
        steps.update()
        pngs = figures.build_all(df, models, prov, fig_dir, p.figure_formats, p.dpi, harness_titles(Path(params.corpus.data_dir)), probe)
        steps.update()
        built = tables.build_all(tables.Inputs(df, models, labels, gens, estimate), tab_dir)
        steps.update()
        cells = html.drilldown(labels, gens, models, p.examples_per_cell, p.max_example_chars)
        steps.update()
        fig_files = {s: [f"{s}.{f}" for f in p.figure_formats] for s, png in pngs.items() if png}
        tab_files = {t.stem: [f"{t.stem}.{e}" for e in ("csv", "md", "tex")] for t in built if t.data is not None}
        page = html.render(prov, models, pngs, fig_files, built, tab_files, cells,
                           yaml.safe_dump(params.model_dump(mode="json"), sort_keys=False, allow_unicode=True), str(fig_dir), str(tab_dir))
        html.write(out_html, page)
        steps.update()
    except DataError as exc:
        raise click.ClickException(str(exc)) from None
    finally:
        steps.close()
    n_fig = sum(png is not None for png in pngs.values())
    n_tab = sum(t.data is not None for t in built)
    click.echo(f"{n_fig}/{len(pngs)} figures -> {fig_dir}; {n_tab}/{len(built)} tables -> {tab_dir}; page -> {out_html}")
    for t in built:
        if t.missing:
            click.echo(f"  not computed: {t.title} ({t.missing})")
