"""`mirage generate` and `mirage estimate`."""

from __future__ import annotations

import sys
from pathlib import Path

import click

from mirage import artefacts
from mirage.io import DataError
from mirage.names import NAME
from mirage.params import ParamsError, load_params
from mirage.protocol import CONDITIONS, SLICE_NAMES


def model_spec(params, name: str):
    if name not in params.models:
        raise click.ClickException(f"unknown model '{name}'; registry (params.yaml models:) has {', '.join(sorted(params.models))}")
    return params.models[name]


def write_views(view: list[dict], shards: list[str], folder: Path) -> None:
    """One file per declared shard (empty when the slice has no rows there); a row of an undeclared shard is an error."""
    from mirage.io import write_jsonl

    by_shard: dict[str, list[dict]] = {name: [] for name in shards}
    for row in view:
        name = artefacts.shard_of(row)
        if name not in by_shard:
            raise DataError(f"request row {row['row_id']}: shard {name!r} is not one this render configuration declares "
                            f"({', '.join(shards)}); re-render the requests")
        by_shard[name].append(row)
    for name, rows in by_shard.items():
        write_jsonl(folder / f"{name}.jsonl", rows)


def write_marker(path: Path, store, run, plan) -> None:
    """The store partition's marker: which shards hold the records these views read, and how many calls were given
    up on (`missing`). Written only when no sample is pending, so it never claims a run that still owes calls."""
    from collections import Counter

    from mirage.io import write_json

    t1, t2 = run.turns()
    used = Counter(store.shard_of(k) for k in [*t1, *t2] if k in store.done)
    write_json(path, {"model": run.name, "revision": run.spec.revision, "calls": plan.calls, "pending": 0,
                      "records_by_shard": dict(sorted(used.items())), "missing": plan.calls - sum(used.values())})


@click.command()
@click.option("--model", "model_name", required=True, type=NAME, help="Registry name (params.yaml `models:`).")
@click.option("--slice", "slice_name", type=click.Choice(SLICE_NAMES), default="demo", show_default=True, help="Requests subset and its sampling overrides.")
@click.option("--condition", type=click.Choice(CONDITIONS), required=True, help="Evaluation condition.")
@click.option("--requests", "requests_path", type=click.Path(dir_okay=False), help=f"Requests JSONL; every row must be of CONDITION.  [default: {artefacts.requests('{condition}')}]")
@click.option("--store", "store_dir", type=click.Path(file_okay=False), help=f"The model's store (every partition is read).  [default: {artefacts.store('{model}')}]")
@click.option("--views-dir", type=click.Path(file_okay=False), help=f"Folder of view shards {{pool}}-{{mitigation}}.jsonl.  [default: {artefacts.views_dir('{model}', '{slice}', '{condition}')}]")
@click.option("--marker", type=click.Path(dir_okay=False), help=f"Store-partition marker to write.  [default: {artefacts.store_marker('{model}', '{slice}', '{condition}')}]")
@click.option("--log", "log_path", type=click.Path(dir_okay=False), help="Also append every message to this file (progress stays on the console).")
@click.option("--params", "params_path", default="params.yaml", show_default=True, help="Run configuration.")
@click.option("--limit", type=click.IntRange(min=1), help=f"Debug: only the first N distinct requests; views go to {artefacts.debug_views_dir('{model}', '{slice}', '{condition}', 'N')}, never over the pipeline's.")
def generate(model_name: str, slice_name: str, condition: str, requests_path: str | None, store_dir: str | None,
             views_dir: str | None, marker: str | None, log_path: str | None, params_path: str, limit: int | None) -> None:
    """Generate completions for one model x slice x condition, resumably.

    Every call is looked up in the model's content-addressed store first; only missing (or failed) calls are
    sent, and new records go to the store partition of SLICE. A model whose store holds every call runs without
    an API key and even when retired (nothing is sent); one that would have to send but cannot (retired,
    unpinned, no key) is refused before any call, naming how many samples are missing and the ways out.

    A failed call whose failure is the model's (a reply that breaks the protocol, a request the server rejects) is
    retried generate.retry_rounds times; if any still fail the command writes what it has and exits 1, so the next
    run retries exactly those (a call that failed generate.max_attempts times is given up on and reported). An
    outage (the key refused at the first 401, quota used up, the server unreachable or failing through its retries)
    uses up no attempt: the run stops starting calls, says the cause and how many samples wait, writes no marker,
    and exits 1; the rerun after the fix sends exactly those. One process at a time writes a store partition and
    condition: a second waits (generate.lock_wait_s) and then sends only what the first left missing. The view
    files (one per retrieval-pool x mitigation shard) are written from the store as it is on disk. Killing this
    command at any time and rerunning it loses nothing and repeats no request. Counts use: request row -> request
    -> sample -> call.
    """
    from mirage.generate.progress import ConsoleProgress, Log
    from mirage.generate.runner import VOCABULARY, GenerationRun, read_requests, settings_for
    from mirage.generate.store import Store
    from mirage.secrets import check_key, watch_registry

    log = Log(log_path)
    try:
        params = load_params(params_path)
        watch_registry(params.models)
        spec = model_spec(params, model_name)
        check_key(spec.api_key_env)
        gen = params.generate
        sl = getattr(params.slices, slice_name)
        st = settings_for(gen, sl.n_samples, sl.max_tokens, condition)
        req = requests_path or artefacts.requests(condition)
        if not Path(req).exists():
            raise DataError(f"{req}: requests file not found (run `mirage render` first)")
        rows = read_requests(req, slice_name, condition, limit)
        if limit is not None:
            views_dir, marker = views_dir or artefacts.debug_views_dir(model_name, slice_name, condition, limit), None
        folder = Path(views_dir or artefacts.views_dir(model_name, slice_name, condition))
        marker_path = Path(marker or artefacts.store_marker(model_name, slice_name, condition)) if limit is None else None
        if log_path:
            log(f"log: {log_path}")
        store = Store.open(store_dir or artefacts.store(model_name), partition=slice_name)
        run = GenerationRun(model_name, spec, st, rows, store, where=req, slice_name=slice_name)
        run.refuse_if_blocked(gen.max_attempts)  # a retired or keyless model runs only when nothing is owed
        with store.locked(condition, gen.lock_wait_s, log):  # one writer per partition and condition
            plan = run.plan()
            log(f"{model_name} {slice_name} {condition}: {plan.describe()}  ({VOCABULARY})")
            run.refuse_if_blocked(gen.max_attempts)  # again: the store may have changed while we waited
            progress = ConsoleProgress(f"{model_name} {slice_name} {condition}", plan.calls, plan.done, spec,
                                       st.max_tokens) if plan.to_send else None
            run.progress = progress
            try:
                if progress is not None:
                    run.provider().on_tokens = progress.tokens
                run.run(gen.retry_rounds, gen.max_attempts)
            finally:
                if progress is not None:
                    progress.close()
                run.close()
                store.close()
            store.reload()  # the views are the store's records as any later reader sees them, not this process's
            failures = run.failures()
            pending = run.pending(gen.max_attempts)
            view = run.view()
            write_views(view, artefacts.view_shards(params.render, condition), folder)
            if marker_path is not None and pending:
                marker_path.unlink(missing_ok=True)  # an earlier marker would claim a complete partition
            elif marker_path is not None:
                write_marker(marker_path, store, run, plan)
            store.close()
    except (ParamsError, DataError, RuntimeError) as exc:
        log(f"error: {exc}", console=False)
        raise click.ClickException(str(exc)) from None
    failed = sum(1 for v in view if v["error"])
    log(f"sent {run.sent} call(s); wrote {len(view)} view rows ({failed} failed) to {folder}")
    for served, n in sorted(run.served.items()):
        log(f"warning: {n} repl{'y' if n == 1 else 'ies'} came from model {served!r}, not {spec.model_id!r} "
            f"(stored with served_model; models.{model_name}.served_model: refuse stores none)")
    total = len(run.firsts) * st.n_samples
    if run.outages:
        log(f"error: stopped: {run.stop_reason()}; {pending} of {total} sample(s) wait; fix it and rerun: the next run "
            "sends exactly those")
        sys.exit(1)
    if pending:
        first = sorted(set(failures.values()))[:3]
        log(f"error: {pending} of {total} sample(s) still failing after {gen.retry_rounds} retry round(s): {first}; "
            f"rerun to retry exactly these (given up after {gen.max_attempts} attempts of the model's)")
        sys.exit(1)
    if failures:
        log(f"gave up on {len(failures)} call(s) after {gen.max_attempts} attempts; they stay as errors in the views")


@click.command()
@click.option("--slice", "slice_name", type=click.Choice(SLICE_NAMES), default="lite", show_default=True)
@click.option("--models", "models", multiple=True, type=NAME, help="Registry names (repeatable; default: the slice's models).")
@click.option("--calibrate", is_flag=True, help="First measure each model's output tokens/s: generate.calibration_samples short "
              "real requests through its provider (local model, vllm, or any OpenAI-compatible/Anthropic server) at its "
              "configured concurrency, stored nowhere but in --calibration. Needs the model's server or API key.")
@click.option("--calibration", "calibration_path", type=click.Path(dir_okay=False), default=artefacts.calibration(), show_default=True,
              help="Measured throughputs per model: written by --calibrate, reused by every later estimate (column source = "
              "measured) while the model's provider, model_id, revision and base_url are unchanged.")
@click.option("--requests-dir", type=click.Path(file_okay=False), default=artefacts.requests_dir(), show_default=True,
              help="Folder of {condition}.jsonl.")
@click.option("--model-set", help="Plan this named model set (params.yaml `model_sets:`, e.g. paper or current) instead of "
              "the slice's models (same as `mirage --model-set NAME estimate`).")
@click.option("--stores", type=click.Path(file_okay=False), default=artefacts.generations_dir(), show_default=True,
              help="Folder of the models' stores ({stores}/{model}/store): calls already stored are not counted.")
@click.option("--whole-slice", is_flag=True, help="Plan every call of the slice as if no store held any and leave out the "
              "status (what the workflow records for the report: the same on every machine).")
@click.option("--out", type=click.Path(dir_okay=False), help=f"Output JSON.  [default: {artefacts.estimate('{slice}')}]")
@click.option("--params", "params_path", default="params.yaml", show_default=True, help="Run configuration.")
@click.option("--power", is_flag=True, help="Instead: for each headline bias claim (ΔV per condition, Δ signed pooled and per "
              "harness) the power of the report's own decision (its frame-level relabelling test at Holm's alpha / m over the "
              "slice's m claims) at --target-effect, the minimum detectable effect at 80 % power and the base prompts "
              "--target-effect needs, simulated from the slice's frames (docs/metrics.md, \"Power planning\").")
@click.option("--pilot", type=click.Path(dir_okay=False, exists=True), help="--power: a pilot's per_prompt.csv (`mirage metrics`): "
              "rates and heterogeneity (frame, base, frame x identity, base x identity sds) are estimated from it.")
@click.option("--base-rate", type=click.FloatRange(0, 1), help="--power: C1/C2 violence rate.  [default: pilot, else 0.2]")
@click.option("--favourability", type=click.FloatRange(0, 1), help="--power: C3 mean decision score.  [default: pilot, else 0.6]")
@click.option("--frame-sd", type=click.FloatRange(0, 1), help="--power: sd of the frame effect.  [default: pilot, else 0]")
@click.option("--frame-identity-sd", type=click.FloatRange(0, 1),
              help="--power: sd of the frame x identity effect (identity effects that vary by frame).  [default: pilot, else 0]")
@click.option("--base-sd", type=click.FloatRange(0, 1), help="--power: sd of the base-prompt effect.  [default: pilot, else 0.15]")
@click.option("--base-identity-sd", type=click.FloatRange(0, 1), help="--power: sd of the base x identity effect.  [default: pilot, else 0]")
@click.option("--refusals/--no-refusals", default=None, help="--power: count the refusal and unparseable gaps among the "
              "claims (they are tested when any sample is refused).  [default: whether the pilot has refusals, else yes]")
@click.option("--target-effect", type=click.FloatRange(0, 1, min_open=True), default=0.05, show_default=True,
              help="--power: effect (0-1 scale; 0.05 = 5 pp) whose power and base-prompt requirement are reported.")
@click.option("--versus", is_flag=True, help="--power: plan telling two runs apart instead (`mirage compare A B`): the effect "
              "is the difference A − B of a claim, tested by swapping A and B within frames; 'how many base prompts do I "
              "need to tell A from B by d pp' is the last column at --target-effect d.")
def estimate(slice_name: str, models: tuple[str, ...], calibrate: bool, calibration_path: str, requests_dir: str,
             model_set: str | None, stores: str, whole_slice: bool, out: str | None, params_path: str, power: bool,
             pilot: str | None, base_rate: float | None, favourability: float | None, frame_sd: float | None,
             frame_identity_sd: float | None, base_sd: float | None, base_identity_sd: float | None,
             refusals: bool | None, target_effect: float, versus: bool) -> None:
    """Before running anything: request rows, requests, samples, calls and tokens per model and condition,
    expected GPU-hours, API cost, local time and wall time (vLLM, API and server models). Never refuses to plan:
    every model's rows carry a `status`: cached (its store holds every call), sendable, needs key (its key variable
    is unset), retired: release only (its snapshot is shut down) or not pinned; tokens, cost and time count only
    the calls still to send (`to_send`). TOTAL sums the rows that can send (needs key: as if the key were set); a
    model that cannot send (retired, not pinned) gets tokens but no cost or time, summed on the line NOT SENDABLE
    instead. Times use each model's throughput (column
    `throughput`, tok/s) and say where it comes from (column `source`): measured (--calibrate, now or in an
    earlier run), assumed (registry throughput_tok_s) or none. A calibration with a failed request writes
    nothing and exits 1. With --power: what the slice can detect (docs/metrics.md, "Power planning")."""
    import datetime as dt
    import os

    from mirage.generate.calibrate import applicable, measure, read_calibration, write_calibration
    from mirage.generate.estimate import build_estimate, format_table
    from mirage.generate.readiness import send_blockers
    from mirage.io import write_json

    try:
        params = load_params(params_path, model_set=model_set)
        names = list(models) or getattr(params.slices, slice_name).models
        if power:
            from mirage.metrics.power import power_report

            overrides = dict(rate=base_rate, favourability=favourability, frame_sd=frame_sd,
                             frame_identity_sd=frame_identity_sd, base_sd=base_sd, base_identity_sd=base_identity_sd)
            result = power_report(params, slice_name, requests_dir, target_effect, pilot=pilot, overrides=overrides,
                                  refusals=refusals, versus=versus)
            path = Path(out or artefacts.power(slice_name))
            write_json(path, result)
            click.echo(result["table"])
            click.echo(f"wrote {path}")
            return
        for n in names:
            model_spec(params, n)
        calibration = read_calibration(calibration_path)
        if calibrate:  # sends: every calibrated model must be able to
            blocked = [f"{n}: {'; '.join(b.values())}" for n in names
                       if (b := send_blockers(n, params.models[n], dt.date.today(), os.environ))]
            if blocked:
                raise RuntimeError(f"--calibrate sends requests, and these models cannot: {'; '.join(blocked)}")
            measured, failed = {}, []
            for n in names:
                try:
                    measured[n] = m = measure(n, params.models[n], params.generate)
                except RuntimeError as exc:
                    failed.append(str(exc))
                    continue
                click.echo(f"calibrated {n}: {m['tok_s']} tok/s at concurrency {m['concurrency']} "
                           f"({m['per_stream_tok_s']} tok/s per stream; {m['tokens_out']} tokens in {m['wall_s']} s)")
            if failed:
                raise RuntimeError(f"calibration failed, nothing written: {'; '.join(failed)}")
            write_calibration(calibration_path, measured)
            calibration.update(measured)
            click.echo(f"wrote {calibration_path}")
        calibration = {n: e for n, e in calibration.items() if n in names and applicable(e, params.models[n])}
        result = build_estimate(params, slice_name, names, requests_dir, calibration, stores, whole_slice)
        result["model_set"] = None if models else params.model_set_of(slice_name)
    except (ParamsError, DataError, RuntimeError) as exc:
        raise click.ClickException(str(exc)) from None
    path = Path(out or artefacts.estimate(slice_name))
    write_json(path, result)
    click.echo(format_table(result))
    click.echo(f"wrote {path}")
