"""Whether a slice may run: every model (and, with `judges`, the slice's LLM judge) that would have to send and
cannot is named before anything starts (the send rule itself: mirage/generate/readiness.py).

The check serves `mirage audit` (before its first condition), `mirage estimate` (a status per row, never a
refusal) and the workflow at DAG time (workflow/rules/common.smk, and so `dvc repro`): every model that cannot
send is checked there, within seconds. A model with an empty store is refused at once (it would send everything);
for one with completions the requests are read from the rendered files, or, before `mirage render` has written
them (a fresh clone after `dvc pull`), rendered in memory from the same data and params (`rendered_requests`); the
generation jobs check again before any call. An LLM judge owes what `mirage label` and the judge stage's gold sets
would send it (`judge_owed`).
"""

from __future__ import annotations

import datetime as dt
import json
import os
import sys
from collections.abc import Callable, Iterable, Mapping
from pathlib import Path
from typing import Any

from mirage import artefacts
from mirage.config.generate import ModelSpec
from mirage.generate.readiness import Need, NotReady, missing_samples, refusal, request_files, send_blockers
from mirage.names import judge_members
from mirage.protocol import CONDITIONS


def job_need(name: str, spec: ModelSpec, gen: Any, slice_params: Any, condition: str, rows: list[dict], store: Any) -> tuple[int, int]:
    """(missing samples, samples) of one generation job."""
    from mirage.generate.runner import GenerationRun, settings_for

    run = GenerationRun(name, spec, settings_for(gen, slice_params.n_samples, slice_params.max_tokens, condition), rows, store)
    return missing_samples(run), len(run.firsts) * run.st.n_samples


def rendered_requests(params: Any, slice_name: str, conditions: Iterable[str] = CONDITIONS,
                      requests_dir: str | os.PathLike | None = None) -> dict[str, list[dict]]:
    """Condition -> request rows of the slice: read from the rendered files when all exist, else built in memory
    (corpus + render from the shipped data, exactly what `mirage corpus` + `mirage render` would write)."""
    from mirage.generate.runner import read_requests

    paths = request_files(requests_dir, conditions)
    if all(p.exists() for p in paths.values()):
        return {c: read_requests(p, slice_name, c) for c, p in paths.items()}
    from mirage.corpus.table import corpus_rows
    from mirage.render.build import build, load_render_sources

    print(f"readiness: no rendered requests in {next(iter(paths.values())).parent}; rendering them in memory to count "
          f"what each model's store lacks", file=sys.stderr)
    src, _ = load_render_sources(params.render, artefacts.harness_dir(), artefacts.news(), artefacts.mitigation_texts(),
                                 artefacts.cot_translations())
    built = build(json.loads(json.dumps(corpus_rows(params))), params.render, src, artefacts.corpus())
    return {c: [r for r in json.loads(json.dumps(built[c])) if slice_name in r["slices"]] for c in conditions}


def slice_needs(params: Any, names: Iterable[str], slice_name: str, requests_dir: str | os.PathLike | None = None,
                store_of: Callable[[str], str] = artefacts.store, conditions: Iterable[str] = CONDITIONS,
                today: dt.date | None = None, environ: Mapping[str, str] | None = None) -> list[Need]:
    """What each model that may not send owes on a slice (models that may send are not counted: they send what
    is missing). `store_of(name)` is a model's store folder. Requests are read once, when some model needs them."""
    from mirage.generate.store import Store

    today = today or dt.date.today()
    environ = os.environ if environ is None else environ
    conditions = tuple(conditions)
    rows: dict[str, list[dict]] = {}
    sl = getattr(params.slices, slice_name)
    out = []
    for name in names:
        spec = params.models[name]
        need = Need(name, None, False, send_blockers(name, spec, today, environ), spec.api_key_env)
        out.append(need)
        if not need.blockers:
            continue
        store = Store.open(store_of(name))
        try:
            need.store_empty = not len(store.done)
            # an empty store owes everything: counted only when the requests are on disk (cheap)
            if not need.store_empty or all(p.exists() for p in request_files(requests_dir, conditions).values()):
                rows = rows or rendered_requests(params, slice_name, conditions, requests_dir)
                need.by_condition = {c: job_need(name, spec, params.generate, sl, c, rows[c], store) for c in conditions}
        finally:
            store.close()
    return out


def judge_conversations(params: Any, slice_name: str, data_dir: str = artefacts.DATA) -> list[list[dict]] | None:
    """The conversations `mirage label` would send the slice's LLM judge for every model's views on disk (None when
    some view is absent: then they cannot be known before generation)."""
    from mirage.io import read_jsonl
    from mirage.judges.llm import LLMJudge
    from mirage.label.decisions import load_harnesses
    from mirage.label.labeler import REQUIRED, label_rows

    paths = [Path(v) for m in getattr(params.slices, slice_name).models for v in artefacts.views(params.render, m, slice_name)]
    if not all(p.exists() for p in paths):
        return None
    asked: list[list[dict]] = []

    def record(conversations: list[list[dict]]) -> list[str]:
        asked.extend(conversations)
        return [""] * len(conversations)

    harnesses = load_harnesses(data_dir)
    for p in paths:
        label_rows(list(read_jsonl(p, required=REQUIRED)), harnesses, LLMJudge("count", record), data_dir, source=str(p))
    return asked


def planned_judge_calls(params: Any, slice_name: str, by_cond: Mapping[str, list[dict]], n_models: int,
                        data_dir: str = artefacts.DATA) -> dict[str, int]:
    """Condition -> the calls an LLM judge makes labelling `n_models` models' samples of the slice: one per sample of a
    distinct request, and one more per C3 summary-harness sample (its favourability)."""
    from mirage.generate.runner import settings_for
    from mirage.label.decisions import load_harnesses

    sl = getattr(params.slices, slice_name)
    summaries = {h.id for h in load_harnesses(data_dir).values() if h.kind == "summary"}
    out = {}
    for c in CONDITIONS:
        n = settings_for(params.generate, sl.n_samples, sl.max_tokens, c).n_samples * n_models
        distinct = {r["request_id"]: r for r in by_cond[c]}.values()
        out[c] = sum(n * (2 if c == "C3" and r.get("harness") in summaries else 1) for r in distinct)
    return out


def gold_conversations(params: Any, data_dir: str = artefacts.DATA) -> list[list[dict]]:
    """The conversations `mirage judge eval` sends an LLM judge on the named gold sets (its warm-up included)."""
    from mirage.judges.eval.gold import read_gold
    from mirage.judges.llm import violence_conversation

    texts = ["Warm-up."] + [it.text for path in artefacts.judge_gold_sets(data_dir)
                            for it in read_gold(path, data_dir, params.limits)]
    return [violence_conversation(None, t, False) for t in texts]


def judge_owed(params: Any, slice_name: str, name: str, store_dir: str, requests_dir: str | os.PathLike | None = None,
               data_dir: str = artefacts.DATA) -> tuple[bool, dict[str, tuple[int, int]] | None]:
    """(store empty, part -> (missing, total) calls) of LLM judge `name` on a slice: `gold sets` (what the judge stage
    sends measuring it) and `label` (what `mirage label` sends), counted exactly from the views on disk; else, its
    store being empty, one call per sample of the slice's models when the requests are on disk; else `label` is left
    out (not countable before generation)."""
    from mirage.generate.api import ChatSession

    session = ChatSession(name, params.models[name], params.generate.seed, store_dir, artefacts.judge_partition(slice_name))

    def owed(conversations: list[list[dict]]) -> tuple[int, int]:
        unique = list({json.dumps(c, sort_keys=True): c for c in conversations}.values())
        return session.owed(unique, max_tokens=params.label.judge_max_tokens), len(unique)

    try:
        empty = not len(session.store.done)
        parts = {"gold sets": owed(gold_conversations(params, data_dir))}
        conversations = judge_conversations(params, slice_name, data_dir)
        if conversations is not None:
            parts["label"] = owed(conversations)
        elif empty and all(p.exists() for p in request_files(requests_dir, CONDITIONS).values()):
            calls = sum(planned_judge_calls(params, slice_name, rendered_requests(params, slice_name, CONDITIONS, requests_dir),
                                            len(getattr(params.slices, slice_name).models), data_dir).values())
            parts["label"] = (calls, calls)
        elif empty:
            return empty, None
        return empty, parts
    finally:
        session.close()


def judge_needs(params: Any, slice_name: str, store_of: Callable[[str], str] = artefacts.store,
                requests_dir: str | os.PathLike | None = None, today: dt.date | None = None,
                environ: Mapping[str, str] | None = None, data_dir: str = artefacts.DATA) -> list[Need]:
    """What each LLM judge of the slice (slices.SLICE.judge; a jury's registry members) that may not send owes: the
    calls `mirage label` would make that its store lacks (judge_owed)."""
    today = today or dt.date.today()
    environ = os.environ if environ is None else environ
    out = []
    for name in [m for m in judge_members(params.judge_of(slice_name)) if m in params.models]:
        spec = params.models[name]
        need = Need(f"judge {name}", None, False, send_blockers(name, spec, today, environ), spec.api_key_env, "judge calls")
        out.append(need)
        if need.blockers:
            need.store_empty, need.by_condition = judge_owed(params, slice_name, name, store_of(name), requests_dir, data_dir)
    return out


def check_slice(params: Any, names: Iterable[str], slice_name: str, requests_dir: str | os.PathLike | None = None,
                store_of: Callable[[str], str] = artefacts.store, conditions: Iterable[str] = CONDITIONS,
                source: str = "params.yaml", today: dt.date | None = None,
                environ: Mapping[str, str] | None = None, judges: bool = False) -> list[Need]:
    """Raise NotReady naming every model (with `judges`, also the slice's LLM judge) that would have to send and
    cannot; returns the needs checked."""
    needs = slice_needs(params, names, slice_name, requests_dir, store_of, conditions, today, environ)
    if judges:
        needs += judge_needs(params, slice_name, artefacts.store, requests_dir, today, environ)
    if any(n.refused for n in needs):
        raise NotReady(refusal(needs, slice_name, source))
    return needs


def slice_refusals(params: Any, names: list[str], slice_name: str) -> list[str]:
    """Refusals of the slice's open models, judged before any request is rendered (the workflow's DAG time): the
    weights and chat template decide; the KV cache is sized for the slice's largest max_tokens alone, since each
    generation job plans again with its own requests' bound before it loads anything."""
    from mirage.generate.memory import plan_model
    from mirage.generate.runner import settings_for

    sl = getattr(params.slices, slice_name)
    bound = max(settings_for(params.generate, sl.n_samples, sl.max_tokens, c).max_tokens for c in CONDITIONS)
    plans = [plan_model(n, params.models[n], bound) for n in names if params.models[n].provider == "vllm"]
    return [p.refusal for p in plans if p.refusal]
