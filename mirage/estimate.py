"""`mirage estimate`: request rows, requests, samples, calls, tokens, GPU-hours, API cost, local and API wall time,
before anything runs.

Counts come from the same `GenerationRun.plan` that `mirage generate` prints (request rows -> requests ->
samples -> calls; an M4 sample takes two calls, the second re-reading the first turn's input and answer).
Input tokens are counted with the model's own tokenizer and chat template where one is available (local
models), else from text length (generate.chars_per_token). Output tokens = calls x max_tokens x
generate.expected_output_fraction (1.0 = upper bound). Times divide output tokens by the model's throughput:
measured (a calibration, mirage/generate/calibrate.py) where one applies, else assumed (registry
throughput_tok_s), else none. local_time_s (local) and wall_time_s (vllm, API and server models) are that time;
GPU-hours (vllm) = wall time x gpus; API cost from registry prices per 1M tokens.

Planning never refuses. Each row says what running it would mean today (`status`, mirage/generate/readiness.py):
`cached` (the store holds every call: nothing to send), `sendable`, `needs key` (the model's key variable is
unset), `retired: release only` (its snapshot is shut down: only released completions can fill it) or `not
pinned`. Tokens, cost and time count only the calls still to send (`to_send`). A retired or unpinned row cannot
send: it shows its calls and tokens (what a release must hold) but no cost or time, and is summed in `unsendable`,
not in `totals` (a `needs key` row is in `totals`, costed as if its key were set). `whole_slice` plans as if no
store held anything and leaves the status out: the deterministic cost of the whole slice that the workflow records
for the report.

`memory`: the GPU memory plan of every open (vllm) model (mirage/generate/memory.py): weights and KV cache of the
slice's longest request against its declared GPUs, the max_model_len and gpu_memory_utilization `mirage generate`
will use, and for a model that cannot fit a refusal naming what would (more GPUs, H200, a 4-bit variant).
"""

from __future__ import annotations

import datetime as dt
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

import click

from mirage import artefacts
from mirage.config.generate import ModelSpec
from mirage.errors import DataError
from mirage.generate.cli import model_spec
from mirage.generate.memory import MemoryPlan, format_plans, plan_models
from mirage.generate.readiness import RETIRED, UNPINNED, request_files, send_blockers, status
from mirage.generate.runner import VOCABULARY, GenerationRun, is_two_turn, settings_for
from mirage.names import NAME
from mirage.params import ParamsError, load_params
from mirage.protocol import CONDITIONS, SLICE_NAMES
from mirage.readiness import rendered_requests


def token_counter(spec: ModelSpec, chars_per_token: float) -> tuple[Callable[[dict], int], str]:
    """(input tokens of a request row, how they are counted): the model's own tokenizer and chat template for
    local models, else characters / chars_per_token."""
    if spec.provider == "local" and spec.gguf_file:
        from mirage.hf import load_tokenizer

        tok = load_tokenizer(spec.model_id, spec.revision, spec.gguf_file)
        if spec.mode == "chat":  # encoded exactly as the local provider encodes a request
            def chat(r: dict) -> int:
                text = tok.apply_chat_template(r["messages"], add_generation_prompt=True, tokenize=False)
                return len(tok(text, add_special_tokens=False)["input_ids"])

            return chat, "model tokenizer + chat template"
        return lambda r: len(tok(r["prompt"])["input_ids"]), "model tokenizer"
    field = "messages" if spec.mode == "chat" else "prompt"

    def chars(row: dict) -> int:
        value = row.get(field) or ""
        return len(value) if isinstance(value, str) else sum(len(m.get("content") or "") for m in value)

    return lambda r: round(chars(r) / chars_per_token), f"characters / {chars_per_token}"


def throughput(spec: ModelSpec, measured: dict[str, Any] | None) -> tuple[float | None, str]:
    """(output tokens/s used for times, its source: measured | assumed | none)."""
    if measured is not None:
        return measured["tok_s"], "measured"
    return (spec.throughput_tok_s, "assumed") if spec.throughput_tok_s else (None, "none")


def build_estimate(params: Any, slice_name: str, names: list[str], requests_dir: str,
                   calibration: dict[str, dict[str, Any]], stores: str | None = None, whole_slice: bool = False,
                   environ: dict[str, str] | None = None, today: dt.date | None = None) -> dict[str, Any]:
    """The estimate of `names` on a slice; `calibration` holds the measurements that apply to these models;
    `stores` the folder of the models' stores (default artefacts.generations_dir())."""
    from mirage.generate.store import Store

    gen = params.generate
    sl = getattr(params.slices, slice_name)
    environ = os.environ if environ is None else environ
    on_disk = all(p.exists() for p in request_files(requests_dir, CONDITIONS).values())
    by_cond = rendered_requests(params, slice_name, CONDITIONS, requests_dir)
    out_rows, counted_by = [], {}
    for name in names:
        spec: ModelSpec = params.models[name]
        count, counted_by[name] = token_counter(spec, gen.chars_per_token)
        tok_s, source = throughput(spec, calibration.get(name))
        blockers = {} if whole_slice else send_blockers(name, spec, today or dt.date.today(), environ)
        store = None if whole_slice else Store.open(artefacts.store(name, stores))
        try:
            for c in CONDITIONS:
                st = settings_for(gen, sl.n_samples, sl.max_tokens, c)
                run = GenerationRun(name, spec, st, by_cond[c], store=store)
                plan = run.plan()
                owed = run.owed_calls() if store is not None else None
                out_per = st.max_tokens * gen.expected_output_fraction
                sizes = {rid: count(row) for rid, row in run.firsts.items()}
                if owed is None:  # every call: a second turn re-reads its first turn's input and answer
                    tin = sum(st.n_samples * (n * 2 + out_per if is_two_turn(run.firsts[rid]) else n) for rid, n in sizes.items())
                    calls = plan.calls
                else:
                    tin = sum(sizes[rid] + (sizes[rid] + out_per if turn == 2 else 0) for rid, _, turn in owed)
                    calls = len(owed)
                row_status = None if whole_slice else status(blockers, calls)
                tokens_in, tokens_out = round(tin), round(calls * out_per)
                sends = row_status not in (RETIRED, UNPINNED)
                out_rows.append({"model": name, "condition": c, "status": row_status, "request_rows": plan.request_rows,
                                 "requests": plan.requests, "samples": plan.samples, "calls": plan.calls,
                                 "stored": plan.calls - calls, "to_send": calls, "tokens_in": tokens_in, "tokens_out": tokens_out,
                                 **(_costs(spec, tokens_in, tokens_out, tok_s) if sends else dict.fromkeys(COST_KEYS)),
                                 "throughput": tok_s, "source": source})
        finally:
            if store is not None:
                store.close()
    out_rows += judge_rows(params, slice_name, names, by_cond, stores, whole_slice, environ, today or dt.date.today())
    keys = ("request_rows", "requests", "samples", "calls", "stored", "to_send", "tokens_in", "tokens_out", *COST_KEYS)
    unsendable = [r for r in out_rows if r["status"] in (RETIRED, UNPINNED)]
    totals = {k: _sum(r[k] for r in out_rows if r["status"] not in (RETIRED, UNPINNED)) for k in keys}
    max_tokens = {c: settings_for(gen, sl.n_samples, sl.max_tokens, c).max_tokens for c in CONDITIONS}
    memory = [p.as_dict() for p in plan_models(params, names, by_cond, max_tokens)]
    return {
        "slice": slice_name, "rows": out_rows, "totals": totals, "memory": memory,
        "unsendable": {k: _sum(r[k] for r in unsendable) for k in keys} if unsendable else None,
        "assumptions": {
            "chars_per_token": gen.chars_per_token, "expected_output_fraction": gen.expected_output_fraction,
            "input_tokens_counted_by": counted_by,
            "n_samples": sl.n_samples or gen.n_samples,
            "max_tokens": {c: settings_for(gen, sl.n_samples, sl.max_tokens, c).max_tokens for c in CONDITIONS},
            "throughput_tok_s": {n: params.models[n].throughput_tok_s for n in names},
            "calibration": {n: calibration[n] for n in names if n in calibration},
            "prices_per_mtok": {n: [params.models[n].price_in_per_mtok, params.models[n].price_out_per_mtok] for n in names},
            "store": "ignored: the whole slice is planned" if whole_slice else "calls already in each model's store are not counted",
            "requests": f"read from {requests_dir}" if on_disk else f"rendered in memory ({requests_dir} holds no rendered requests)",
            "judge": JUDGE_NOTE,
            "note": f"{VOCABULARY}; tokens, cost and time count the calls to send (to_send; all calls with --whole-slice); "
                    "TOTAL sums the rows that can send (a `needs key` row costed as if its key were set); a model that "
                    "cannot send (status retired or not pinned) shows its tokens but no cost or time and is summed apart "
                    "(NOT SENDABLE), not in TOTAL; tokens_out = calls x max_tokens x expected_output_fraction (an upper "
                    "bound at 1.0); times = tokens_out / throughput (tok/s; source: measured by `mirage estimate "
                    "--calibrate`, assumed from the registry, or none: no time, `-`); wall_time_s of a vllm model is its "
                    "GPUs' time, gpu_hours = wall_time_s x gpus / 3600",
        },
    }


COST_KEYS = ("gpu_hours", "api_cost_usd", "local_time_s", "wall_time_s")
JUDGE_NOTE = ("rows with condition `judge`: the slice's LLM judge (slices.SLICE.judge), one call per sample of every model "
              "plus one per C3 summary-harness sample; tokens_in = its instructions + the sample's max_tokens x "
              "expected_output_fraction, tokens_out = label.judge_max_tokens per call (upper bounds); stored = replies "
              "already in its store, counted exactly when every view of the slice is on disk (else none)")


def judge_rows(params: Any, slice_name: str, names: list[str], by_cond: dict[str, list[dict]], stores: str | None,
               whole_slice: bool, environ: Any, today: dt.date) -> list[dict[str, Any]]:
    """One estimate row per LLM judge of the slice (condition `judge`): the calls `mirage label` makes labelling
    every model's samples, what they cost and, unless `whole_slice`, how many its store already holds."""
    from mirage.judges.llm import VIOLENCE_INSTRUCTIONS
    from mirage.names import judge_members
    from mirage.readiness import judge_owed, planned_judge_calls

    judges = [m for m in judge_members(params.judge_of(slice_name)) if m in params.models]
    if not judges:
        return []
    gen, sl = params.generate, getattr(params.slices, slice_name)
    planned = planned_judge_calls(params, slice_name, by_cond, len(names))
    calls = sum(planned.values())
    samples = sum(len({r["request_id"] for r in by_cond[c]}) * settings_for(gen, sl.n_samples, sl.max_tokens, c).n_samples
                  for c in CONDITIONS) * len(names)
    out_chars = sum(planned[c] * settings_for(gen, sl.n_samples, sl.max_tokens, c).max_tokens for c in CONDITIONS) \
        * gen.expected_output_fraction * gen.chars_per_token
    out = []
    for name in judges:
        spec = params.models[name]
        owed = None if whole_slice else (judge_owed(params, slice_name, name, artefacts.store(name, stores))[1] or {}).get("label")
        # exact when every view is on disk (the distinct conversations `mirage label` sends, as readiness counts them)
        n_calls, to_send = (calls, calls) if owed is None else (owed[1], owed[0])
        stored = n_calls - to_send
        per_call_in = (len(VIOLENCE_INSTRUCTIONS) / gen.chars_per_token) + (out_chars / gen.chars_per_token / calls if calls else 0)
        tokens_in, tokens_out = round(to_send * per_call_in), to_send * params.label.judge_max_tokens
        row_status = None if whole_slice else status(send_blockers(name, spec, today, environ), to_send)
        sends = row_status not in (RETIRED, UNPINNED)
        tok_s, source = throughput(spec, None)
        out.append({"model": name, "condition": "judge", "status": row_status, "request_rows": None, "requests": None,
                    "samples": samples, "calls": n_calls, "stored": stored, "to_send": to_send, "tokens_in": tokens_in,
                    "tokens_out": tokens_out, **(_costs(spec, tokens_in, tokens_out, tok_s) if sends else dict.fromkeys(COST_KEYS)),
                    "throughput": tok_s, "source": source})
    return out


def _sum(values: Any) -> float | None:
    vals = [v for v in values if v is not None]
    return round(sum(vals), 4) if vals else None


def _costs(spec: ModelSpec, tin: int, tout: int, tok_s: float | None) -> dict[str, Any]:
    gpu_hours = api_cost = local_time = wall_time = None
    if spec.provider in ("openai", "anthropic") and spec.price_in_per_mtok is not None and spec.price_out_per_mtok is not None:
        api_cost = round(tin / 1e6 * spec.price_in_per_mtok + tout / 1e6 * spec.price_out_per_mtok, 4)
    if tok_s:
        if spec.provider == "local":
            local_time = round(tout / tok_s, 1)
        else:
            wall_time = round(tout / tok_s, 1)
        if spec.provider == "vllm":
            gpu_hours = round(tout / tok_s / 3600 * spec.gpus, 4)
    return {"gpu_hours": gpu_hours, "api_cost_usd": api_cost, "local_time_s": local_time, "wall_time_s": wall_time}


def format_table(result: dict[str, Any]) -> str:
    """Plain-text table of the estimate rows and totals."""
    cols = ("model", "condition", "status", "request_rows", "requests", "samples", "calls", "stored", "to_send", "tokens_in",
            "tokens_out", "gpu_hours", "api_cost_usd", "local_time_s", "wall_time_s", "throughput", "source")
    rows = [[str(r[c]) if r.get(c) is not None else "-" for c in cols] for r in result["rows"]]
    for label, sums in (("TOTAL", result["totals"]), ("NOT SENDABLE", result.get("unsendable"))):
        if sums is not None:
            rows.append([label, "", ""] + [str(sums[c]) if sums.get(c) is not None else "-" for c in cols[3:-2]] + ["", ""])
    widths = [max(len(c), *(len(r[i]) for r in rows)) for i, c in enumerate(cols)]
    fmt = "  ".join(f"{{:<{w}}}" for w in widths)
    head = f"slice {result['slice']}" + (f" (model set {result['model_set']})" if result.get("model_set") else "")
    plans = format_plans([MemoryPlan(**m) for m in result.get("memory", [])])
    return "\n".join([head, fmt.format(*cols)] + [fmt.format(*r) for r in rows]
                     + [result["assumptions"]["note"]] + ([plans] if plans else []))


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
    from mirage.generate.calibrate import applicable, measure, read_calibration, write_calibration
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
