"""`mirage generate` and `mirage estimate`."""

from __future__ import annotations

import time
from pathlib import Path

import click

from mirage.io import DataError
from mirage.params import ParamsError, load_params
from mirage.slices import SLICE_NAMES


def _model_spec(params, name: str):
    if name not in params.models:
        raise click.ClickException(f"unknown model '{name}'; registry (params.yaml models:) has {', '.join(sorted(params.models))}")
    return params.models[name]


@click.command()
@click.option("--model", "model_name", required=True, help="Registry name (params.yaml `models:`).")
@click.option("--slice", "slice_name", type=click.Choice(SLICE_NAMES), default="demo", show_default=True, help="Requests subset and its sampling overrides.")
@click.option("--condition", type=click.Choice(["C1", "C2", "C3"]), required=True, help="Evaluation condition.")
@click.option("--requests", "requests_path", type=click.Path(dir_okay=False), help="Requests JSONL (default: {generate.requests_dir}/{condition}.jsonl).")
@click.option("--out-dir", type=click.Path(file_okay=False), help="Folder of view shards {pool}-{mitigation}.jsonl (default: {generate.out_dir}/{model}/{slice}/{condition}).")
@click.option("--store", "store_dir", type=click.Path(file_okay=False), help="Store folder (default: {generate.out_dir}/{model}/store).")
@click.option("--params", "params_path", default="params.yaml", show_default=True, help="Run configuration.")
@click.option("--limit", type=int, help="Only the first N distinct requests (smoke runs).")
def generate(model_name: str, slice_name: str, condition: str, requests_path: str | None, out_dir: str | None,
             store_dir: str | None, params_path: str, limit: int | None) -> None:
    """Generate completions for one model x slice x condition, resumably.

    Every sample is looked up in the content-addressed store first; only missing (or previously
    failed) samples are sent, and new ones go to the store partition of SLICE. Then one view file per
    retrieval-pool x mitigation shard, {slice}/{condition}/{pool}-{mitigation}.jsonl, is written from the store.
    Killing this command at any time and rerunning it loses nothing and repeats no request.
    """
    from tqdm import tqdm

    from mirage.generate.providers import provider_class
    from mirage.generate.runner import Runner, count_samples, materialise, plan_turns, read_requests, settings_for
    from mirage.generate.store import Store
    from mirage.io import write_jsonl
    from mirage.layout import request_shards, shard_of

    try:
        params = load_params(params_path)
        spec = _model_spec(params, model_name)
        gen = params.generate
        sl = getattr(params.slices, slice_name)
        st = settings_for(gen, sl.n_samples, sl.max_tokens, condition)
        req = requests_path or str(Path(gen.requests_dir) / f"{condition}.jsonl")
        if not Path(req).exists():
            raise click.ClickException(f"{req}: requests file not found (run `mirage render` first)")
        rows = read_requests(req, slice_name, limit)
        base = Path(gen.out_dir) / model_name
        store = Store.open(store_dir or base / "store", partition=slice_name)
        seeded = provider_class(spec.provider).seeded
        total = count_samples(rows, st.n_samples)
        bar = tqdm(total=total, desc=f"{model_name} {slice_name} {condition}", unit="sample", dynamic_ncols=True)
        stats = {"tokens": 0, "errors": 0, "t0": time.perf_counter()}

        def progress(_s, r) -> None:
            stats["tokens"] += r.tokens_out
            stats["errors"] += r.error is not None
            rate = stats["tokens"] / max(time.perf_counter() - stats["t0"], 1e-9)
            bar.set_postfix(tok_s=f"{rate:.1f}", errors=stats["errors"], refresh=False)
            bar.update(r.error is None)

        runner = Runner(model_name, spec, store, progress)
        try:
            t1, m1, _, _ = plan_turns(spec, seeded, rows, st, req, store)
            bar.update(sum(1 for k in {s.key for s in t1} if k in store.done))
            runner.run(t1, m1)
            _, _, t2, m2 = plan_turns(spec, seeded, rows, st, req, store)
            bar.update(sum(1 for k in {s.key for s in t2} if k in store.done))
            runner.run(t2, m2)
        finally:
            bar.close()
            runner.close()
            store.close()
        view = materialise(model_name, spec, seeded, rows, st, store, req)
    except (ParamsError, DataError, RuntimeError) as exc:
        raise click.ClickException(str(exc)) from None
    folder = Path(out_dir or base / slice_name / condition)
    shards = {name: [] for name in request_shards(params.render, condition)}
    for v in view:
        shards.setdefault(shard_of(v), []).append(v)
    for name, shard_rows in shards.items():
        write_jsonl(folder / f"{name}.jsonl", shard_rows)
    failed = sum(1 for v in view if v["error"])
    click.echo(f"sent {runner.sent} sample(s); wrote {len(view)} rows ({failed} failed) in {len(shards)} shards to {folder}")


@click.command()
@click.option("--slice", "slice_name", type=click.Choice(SLICE_NAMES), default="lite", show_default=True)
@click.option("--models", "models", multiple=True, help="Registry names (repeatable; default: the slice's models).")
@click.option("--calibrate", is_flag=True, help="Measure local models' tokens/s with a short real run on this machine.")
@click.option("--requests-dir", type=click.Path(file_okay=False), help="Folder of {condition}.jsonl (default: generate.requests_dir).")
@click.option("--out", type=click.Path(dir_okay=False), help="Output JSON (default: {generate.estimate_dir}/{slice}.json).")
@click.option("--params", "params_path", default="params.yaml", show_default=True, help="Run configuration.")
@click.option("--power", is_flag=True, help="Instead: per template (dV) and harness (Delta), the minimum detectable effect at "
              "80 % power after Holm, and the base prompts --target-effect needs (simulated through the metrics statistics).")
@click.option("--base-rate", type=click.FloatRange(0, 1), default=0.2, show_default=True, help="--power: assumed C1/C2 violence rate.")
@click.option("--favourability", type=click.FloatRange(0, 1), default=0.6, show_default=True, help="--power: assumed C3 mean decision score.")
@click.option("--target-effect", type=click.FloatRange(0, 1, min_open=True), default=0.05, show_default=True,
              help="--power: effect (0-1 scale; 0.05 = 5 pp) whose base-prompt requirement is reported.")
def estimate(slice_name: str, models: tuple[str, ...], calibrate: bool, requests_dir: str | None, out: str | None,
             params_path: str, power: bool, base_rate: float, favourability: float, target_effect: float) -> None:
    """Before running anything: requests, samples and tokens per model and condition, expected
    GPU-hours / API cost (registry prices and throughputs), and local time on this machine.
    With --power: what the slice can detect (docs/metrics.md, "Power planning")."""
    from mirage.generate.estimate import build_estimate, calibrate_local, format_table
    from mirage.io import write_json

    try:
        params = load_params(params_path)
        names = list(models) or getattr(params.slices, slice_name).models
        if power:
            from mirage.metrics.power import power_report

            result = power_report(params, slice_name, len(names), requests_dir or params.generate.requests_dir,
                                  base_rate, favourability, target_effect)
            path = Path(out or Path(params.generate.estimate_dir) / f"{slice_name}-power.json")
            write_json(path, result)
            click.echo(result["table"])
            click.echo(f"wrote {path}")
            return
        for n in names:
            _model_spec(params, n)
        measured = {}
        if calibrate:
            for n in names:
                if params.models[n].provider == "local":
                    measured[n] = calibrate_local(n, params.models[n], params.generate.calibration_samples)
        result = build_estimate(params, slice_name, names, requests_dir or params.generate.requests_dir, measured)
    except (ParamsError, DataError, RuntimeError) as exc:
        raise click.ClickException(str(exc)) from None
    path = Path(out or Path(params.generate.estimate_dir) / f"{slice_name}.json")
    write_json(path, result)
    click.echo(format_table(result))
    click.echo(f"wrote {path}")
