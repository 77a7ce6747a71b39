"""`mirage report`: figures, tables and the self-contained HTML page for one slice."""

from __future__ import annotations

from pathlib import Path

import click
import yaml

from mirage import artefacts, secrets
from mirage.io import DataError
from mirage.params import ParamsError, load_params, params_hash
from mirage.protocol import SLICE_NAMES


def harness_titles(harness_dir: Path) -> dict[str, str]:
    """H1..H4 -> task title from the harness files (axis labels); empty when the folder is absent."""
    out = {}
    for path in sorted(harness_dir.glob("*.yaml")):
        spec = yaml.safe_load(path.read_text(encoding="utf-8")) or {}
        out[str(spec.get("id", path.stem))] = str(spec.get("title", ""))
    return out


def judge_sections(label_paths: list[Path], models: list[str], slice_name: str, params, given: list[str]) -> list[str]:
    """The `mirage judges` section of each of `models` (labelled by more than one judge) that `given` lacks."""
    import html

    import pandas as pd

    from mirage.compare.judges import judge_sensitivity
    from mirage.metrics.cli import load_labels

    todo = [m for m in models if not any(f'<section id="judges-{html.escape(m)}">' in g for g in given)]
    if not todo:
        return []
    labels = pd.concat([load_labels([p], votes=True) for p in label_paths if p.exists()], ignore_index=True)
    return [judge_sensitivity(labels, m, slice_name, [], None, params)[2] for m in todo]


@click.command()
@click.option("--slice", "slice_name", type=click.Choice(SLICE_NAMES), default="demo", show_default=True, help="Which run to report on.")
@click.option("--params", "params_path", default="params.yaml", show_default=True, help="Run configuration.")
@click.option("--metrics", "metrics_csv", type=click.Path(dir_okay=False), help=f"metrics.csv (summary.json beside it).  [default: {artefacts.metrics('{slice}')['table']}]")
@click.option("--labels", "label_files", multiple=True, type=click.Path(dir_okay=False), help="Label files (repeatable).  [default: the slice's models]")
@click.option("--view", "views", multiple=True, type=click.Path(dir_okay=False), help="Generation views (repeatable).  [default: the slice's declared views]")
@click.option("--estimate", "estimate_path", type=click.Path(dir_okay=False), help=f"`mirage estimate` output.  [default: {artefacts.estimate('{slice}')}]")
@click.option("--probe", "probe_files", multiple=True, type=click.Path(dir_okay=False), help="Logit-lens lambda.csv files (repeatable, optional; table7.csv beside each).")
@click.option("--harness-dir", type=click.Path(file_okay=False), default=artefacts.harness_dir(), show_default=True, help="Harness titles for axis labels.")
@click.option("--news", type=click.Path(dir_okay=False), default=artefacts.news(), show_default=True,
              help="The news corpus the requests were rendered with (named among the protocol deviations).")
@click.option("--corpus-stats", type=click.Path(dir_okay=False), default=artefacts.corpus_stats()["csv"], show_default=True,
              help="Corpus depth table from `mirage corpus` (frames, words, near-duplicates, cues); optional.")
@click.option("--judge-eval", "judge_eval", type=click.Path(dir_okay=False),
              help=f"judge_eval.json of the judge that labelled V (`mirage judge eval`).  [default: {artefacts.judge_eval('{judge}')} for the judge named in the labels]")
@click.option("--requests-dir", default=artefacts.requests_dir(), show_default=True, type=click.Path(file_okay=False),
              help="Rendered requests ({C1,C2,C3}.jsonl from `mirage render`): the prompts shown in the sample browser.")
@click.option("--figures-dir", type=click.Path(file_okay=False), help=f"Output figures.  [default: {artefacts.figures_dir('{slice}')}]")
@click.option("--tables-dir", type=click.Path(file_okay=False), help=f"Output tables.  [default: {artefacts.tables_dir('{slice}')}]")
@click.option("--compare-section", "compare_sections", multiple=True, type=click.Path(dir_okay=False, exists=True),
              help="section.html of `mirage compare`, `mirage over-time` or `mirage judges` (repeatable): shown under "
                   "'Comparisons'. A model whose completions more than one judge labelled (several judges' label rows, or "
                   "a jury's) gets its `mirage judges` section without one.")
@click.option("--out", "out_html", type=click.Path(dir_okay=False), help=f"Output page (the sample browser and its data folder beside it).  [default: {artefacts.report('{slice}')}]")
def report(slice_name: str, params_path: str, metrics_csv: str | None, label_files: tuple[str, ...], views: tuple[str, ...],
           estimate_path: str | None, probe_files: tuple[str, ...], harness_dir: str, news: str, corpus_stats: str,
           judge_eval: str | None,
           requests_dir: str, figures_dir: str | None, tables_dir: str | None, compare_sections: tuple[str, ...],
           out_html: str | None) -> None:
    """Build the paper's figures (2-6, the placebo-floor plot, the probe; PNG+SVG), tables (1, 3, 4, 6-15 as far as
    the run produced them; CSV, Markdown, LaTeX), one self-contained HTML page and a sample browser for SLICE,
    from its metrics plus labels, generations, requests, the compute estimate, the judge's evaluation (held-out realistic split, single-sentence gold set)
    and (optionally) the logit-lens probe.

    Every number carries its n; degenerate intervals are not shown; bias estimates are shown with their
    identity-placebo floor. Parts the run did not produce are shown as "not computed" with the reason.
    """
    from tqdm import tqdm

    from mirage.report import data, figures, html, protocol, samples, tables

    try:
        params = load_params(params_path)
    except ParamsError as exc:
        raise click.ClickException(str(exc)) from None
    p = params.report
    metrics_csv = Path(metrics_csv or artefacts.metrics(slice_name)["table"])
    if not metrics_csv.exists():
        raise click.ClickException(f"{metrics_csv} not found: run `mirage metrics --slice {slice_name}` first")
    slice_params = getattr(params.slices, slice_name)
    fig_dir = Path(figures_dir or artefacts.figures_dir(slice_name))
    tab_dir = Path(tables_dir or artefacts.tables_dir(slice_name))
    out_html = Path(out_html or artefacts.report(slice_name))
    out_samples = out_html.with_name(Path(artefacts.samples_page(slice_name)).name)
    out_samples_data = out_html.with_name(Path(artefacts.samples_data(slice_name)).name)
    label_paths = [Path(x) for x in label_files] or [Path(artefacts.labels(m, slice_name)) for m in slice_params.models]
    view_paths = [Path(x) for x in views] or [Path(v) for m in slice_params.models for v in artefacts.views(params.render, m, slice_name)]
    steps = tqdm(total=6, desc=f"report {slice_name}", unit="step")
    try:
        df = data.load_metrics(metrics_csv)
        summary = metrics_csv.with_name(Path(artefacts.metrics(slice_name)["summary"]).name)
        prov = data.load_provenance(summary, slice_name, slice_params.model_dump(exclude={"models"}))
        prov.params_hash = params_hash(params)
        if params.model_set_of(slice_name):
            prov.model_set = f"{params.model_set_of(slice_name)} (params model_sets.{params.model_set_of(slice_name)})"
        models = figures.ordered(df["model"].unique(), slice_params.models)
        labels = data.load_jsonl_frame(label_paths, ("model", "condition"))
        gens, texts = data.load_generations(view_paths)
        estimate = data.load_estimate(Path(estimate_path or artefacts.estimate(slice_name)))
        probe_paths = [Path(x) for x in probe_files]
        probe = data.load_probe(probe_paths)
        judges = [protocol.load_judge(j, Path(judge_eval) if judge_eval else Path(artefacts.judge_eval(j)))
                  for j in protocol.judges_of(labels, params.judge_of(slice_name))]
        devs = protocol.deviations(params, slice_name, labels, df, judges, prov.deviations, news)
        comparisons = [Path(x).read_text(encoding="utf-8") for x in compare_sections]
        comparisons += judge_sections(label_paths, data.judged_more_than_once(labels), slice_name, params, comparisons)
        steps.update()
        rendered = figures.build_all(df, models, prov, fig_dir, p.figure_formats, p.dpi, harness_titles(Path(harness_dir)), probe, labels)
        steps.update()
        built = tables.build_all(tables.Inputs(df, models, labels, gens, estimate, data.load_probe_onsets([x.with_name(Path(artefacts.probe("m")["table7"]).name) for x in probe_paths]),
                                                data.load_csv(Path(corpus_stats)), protocol.sampling_settings(params, slice_name),
                                                params.metrics.alpha, data.load_correction_notes(summary), judges=judges), tab_dir)
        steps.update()
        cells = html.drilldown(labels, gens, texts, models, p.examples_per_cell, p.max_example_chars)
        sample_rows = samples.rows(labels, gens)
        prompts = samples.load_prompts(Path(requests_dir), set(sample_rows["request_id"].dropna()))
        steps.update()
        fig_files = {s: [f"{s}.{f}" for f in p.figure_formats] for s, r in rendered.items() if r.png}
        tab_files = {t.stem: [f"{t.stem}.{e}" for e in ("csv", "md", "tex")] for t in built if t.data is not None}
        page = html.render(prov, models, rendered, fig_files, built, tab_files, cells,
                           yaml.safe_dump(secrets.public(params.model_dump(mode="json")), sort_keys=False, allow_unicode=True), str(fig_dir), str(tab_dir),
                           headlines=html.headline(df, models, params.metrics.alpha, slice_name), judges=judges, deviations=devs, counts=html.counts(gens, models),
                           samples_href=out_samples.name, placebo_computed=df.attrs.get("placebo_computed", False),
                           comparisons=comparisons,
                           judge_banner=protocol.offline_judge_banner(slice_name, judges, params.models))
        samples.write(sample_rows, texts, prompts, models, out_samples, out_samples_data, slice_name, f"{requests_dir}/{{C1,C2,C3}}.jsonl",
                      out_html.name)
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
