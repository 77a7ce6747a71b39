"""`mirage generate`."""

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
