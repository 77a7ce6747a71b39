"""`mirage leaderboard`: submit a run as a bundle, verify bundles into a board, build the board page."""

from __future__ import annotations

from pathlib import Path

import click

from mirage import artefacts
from mirage.io import DataError
from mirage.names import NAME
from mirage.params import ParamsError, load_params
from mirage.untrusted import clean


def _fail(exc: Exception | str) -> None:
    click.echo(f"error: {clean(str(exc))}", err=True)
    raise SystemExit(2)


@click.group()
def leaderboard() -> None:
    """Verifiable leaderboard submissions (docs/leaderboard.md).

    \b
    1. mirage leaderboard submit --model NAME --split lite   # bundle a finished run
    2. mirage leaderboard verify BUNDLE                     # recompute everything, add to the board
    3. mirage leaderboard build                             # static page: the board's index.html

    The held-out test split exists only where MIRAGE_PRIVATE_DIR was set for `mirage corpus`.
    """


@leaderboard.command()
@click.option("--model", required=True, type=NAME, help="Registry name of the model (params.yaml models:).")
@click.option("--split", "split", type=click.Choice(["test", "lite", "demo"]), required=True,
              help="test: the held-out split (private); lite: the public 15% split; demo: the CPU smoke slice.")
@click.option("--out", type=click.Path(), help=f"Bundle to write: a folder, or a file ending .tar.gz.  [default: {artefacts.submission('{model}', '{split}')}]")
@click.option("--params", "params_path", default="params.yaml", show_default=True, help="Run configuration.")
@click.option("--views", type=click.Path(file_okay=False), help=f"Generation views of the run.  [default: {artefacts.slice_views_dir('{model}', '{split}')}]")
@click.option("--requests-dir", type=click.Path(file_okay=False), default=artefacts.requests_dir(), show_default=True,
              help="Rendered requests.")
@click.option("--judge-eval-dir", default=artefacts.judge_root(), show_default=True, type=click.Path(file_okay=False),
              help="Where `mirage judge eval` wrote JUDGE/judge_eval.json; its gold-set, held-out and per-set scores go into the manifest.")
@click.option("--report", type=click.Path(dir_okay=False, exists=True), help="Optional self-contained HTML report to ship in the bundle.")
def submit(model: str, split: str, out: str | None, params_path: str, views: str | None, requests_dir: str,
           judge_eval_dir: str, report: str | None) -> None:
    """Bundle MODEL's finished run on SPLIT: its completions (every request x n samples), the labels
    (params label.judge) and metrics computed from them, and a manifest pinning the model revision,
    sampling settings, code version, params hash, split hash, judge (+ gold-set and held-out scores) and statistics,
    with the SHA-256 of every file. Fails, writing nothing, if the run does not cover the split."""
    from mirage.leaderboard.submit import make_bundle

    try:
        params = load_params(params_path)
        target = Path(out or artefacts.submission(model, split))
        m = make_bundle(params, params_path, model, split, Path(views or artefacts.slice_views_dir(model, split)),
                        Path(requests_dir), target, Path(judge_eval_dir), Path(report) if report else None)
    except (ParamsError, DataError) as exc:
        _fail(exc)
    click.echo(f"{model} on {split}: {m.n_requests} requests x {m.settings.n_samples} samples, judge {m.judge.name}")
    def num(x) -> str:
        return "n/a" if x is None else f"{x:.4f}"

    for name, h in m.headline.items():
        level = f"{100 * (1 - m.statistics.get('alpha', 0.05)):g}%"
        ci = "no interval" if h.get("ci_low") is None else f"{level} CI [{num(h.get('ci_low'))}, {num(h.get('ci_high'))}]"
        floor = f"  placebo floor {num(h['placebo'])}" if h.get("placebo") is not None else ""
        click.echo(f"  {name:18s} {num(h.get('estimate')):>8s}  {ci}  n = {h.get('n')}{floor}")
    click.echo(f"wrote bundle {target}")


@leaderboard.command()
@click.argument("bundle", type=click.Path())
@click.option("--board", default=artefacts.board_dir(), show_default=True, type=click.Path(file_okay=False), help="Board folder that accepted bundles join.")
@click.option("--check-only", is_flag=True, help="Verify only; add nothing to the board.")
@click.option("--params", "params_path", default="params.yaml", show_default=True, help="This board's protocol: sampling, judge settings, statistics, model registry.")
@click.option("--requests-dir", type=click.Path(file_okay=False), default=artefacts.requests_dir(), show_default=True,
              help="This board's rendered requests of the split.")
@click.option("--judge-eval-dir", default=artefacts.judge_root(), show_default=True, type=click.Path(file_okay=False),
              help="This board's judge evaluations (JUDGE/judge_eval.json); when present, the bundle's judge scores must match (held-out and per-set scores where the bundle has them).")
@click.option("--date-from-bundle", is_flag=True, help="Record the completions' date (the manifest's `created`) as the "
              "verification date instead of the clock's, so rebuilding the board from the same bundle gives the same files "
              "(the pipeline's own demo board); the entry says which (verified.date_source).")
@click.option("--supersede", is_flag=True, help="Replace the board's accepted row for the same model x split; the old row "
              "(entry, bundle, report) is kept under BOARD/history/. Without it such a bundle is refused.")
def verify(bundle: str, board: str, check_only: bool, params_path: str, requests_dir: str, judge_eval_dir: str,
           date_from_bundle: bool, supersede: bool) -> None:
    """Verify BUNDLE (folder or .tar.gz): manifest schema and file hashes; the split hash and the
    protocol settings against this board's requests and params; coverage (every request x n samples
    once, no extras, one model at one pinned revision); then labels and metrics recomputed from the raw
    completions with the pinned judge and statistics, compared with the bundle's. The first problem is
    reported (exit 2) and nothing is added to the board; a valid bundle becomes the board's row for
    its model x split, never silently replacing an accepted one (--supersede). Everything a bundle holds is
    read within the limits of params `limits:` (sizes, members, lines, JSON depth; docs/leaderboard.md)."""
    from mirage.leaderboard.verify import accept, verify_bundle

    try:
        params = load_params(params_path)
        req = Path(requests_dir)
        if check_only:
            v = verify_bundle(bundle, params, params_path, req, judge_eval_dir=judge_eval_dir)
            where = "not added (--check-only)"
        else:
            v, path, outcome = accept(bundle, Path(board), params, params_path, req, judge_eval_dir, supersede,
                                      date_from_bundle=date_from_bundle)
            where = {"added": f"added to {path}", "superseded": f"replaced the row in {path} (the old one is in history/)",
                     "unchanged": f"already the board's row ({path}); nothing changed"}[outcome]
    except (ParamsError, DataError) as exc:
        _fail(exc if str(exc).startswith(bundle) else f"{bundle}: {exc}")
    m = v.manifest
    click.echo(clean(f"{bundle}: valid: {m.model} ({m.model_spec.revision}) on {m.split}, {m.n_completions} completions, "
                     f"labels ({m.judge.name}) and {len(m.headline)} headline metrics recomputed and equal; {where}"))


@leaderboard.command()
@click.option("--board", default=artefacts.board_dir(), show_default=True, type=click.Path(file_okay=False), help="Board folder (entries/ from verify).")
@click.option("--out", type=click.Path(file_okay=False), help="Where index.html, leaderboard.json and entries/ go (default: the board folder).")
def build(board: str, out: str | None) -> None:
    """Build the static board: index.html (one row per model x split, headline metrics with CIs, n and
    placebo floors; sortable and filterable; lite rows marked; each row linked to its report), a page
    per entry and leaderboard.json, from the entries that `verify` accepted."""
    from mirage.leaderboard.board import build as build_board

    try:
        n = build_board(Path(board), Path(out or board))
    except DataError as exc:
        _fail(exc)
    click.echo(f"wrote {Path(out or board) / 'index.html'} ({n} row(s)) and leaderboard.json")
