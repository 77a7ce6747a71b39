"""Plan, run and materialise one (model, slice, condition): the store decides what is still missing.

Turn 1 samples are keyed on the rendered request; M4 rows (with `followup`) then get a second turn
keyed on the request plus the stored first-turn text, so turn 2 always runs from the stored turn 1.
Rows sharing a `request_id` share keys. Only missing keys are sent; errored keys are retried.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from mirage.generate.params import GenerateParams, ModelSpec
from mirage.generate.providers import Provider, build_provider, provider_class
from mirage.generate.providers.base import Result, Sample
from mirage.generate.split import split_reasoning
from mirage.generate.store import Store, sample_key, sample_seed
from mirage.hashing import content_hash
from mirage.io import DataError, read_jsonl

REQUIRED = ("row_id", "request_id", "condition", "slices")
COPIED = ("row_id", "request_id", "prompt_id", "base_id", "template", "harness", "identity", "focal", "language",
          "condition", "rag_pool", "mitigation", "lite", "split")


@dataclass(frozen=True)
class Settings:
    """Output-changing settings of one run."""

    n_samples: int
    max_tokens: int
    temperature: float
    top_p: float
    root_seed: int


def read_requests(path: str | Path, slice_name: str, limit: int | None = None) -> list[dict]:
    """Rows of a requests file that belong to `slice_name`; `limit` keeps the first N distinct request ids."""
    rows, seen = [], set()
    for row in read_jsonl(path, required=REQUIRED):
        if slice_name not in row["slices"]:
            continue
        if limit is not None and row["request_id"] not in seen and len(seen) >= limit:
            continue
        seen.add(row["request_id"])
        rows.append(row)
    return rows


def sent_input(spec: ModelSpec, row: dict, first_turn: str | None = None, where: str = "") -> dict[str, Any]:
    """The exact input sent for a row (turn 2 when `first_turn` is given), as {"messages": ...} or {"prompt": ...}."""
    field = "messages" if spec.mode == "chat" else "prompt"
    if not row.get(field):
        raise DataError(f"{where}: request {row.get('row_id')} has no '{field}' (model mode is {spec.mode})")
    if first_turn is None:
        return {field: row[field]}
    if spec.mode == "chat":
        if not row.get("followup"):
            raise DataError(f"{where}: request {row.get('row_id')} has no 'followup'")
        return {"messages": [*row["messages"], {"role": "assistant", "content": first_turn},
                             {"role": "user", "content": row["followup"]}]}
    if not row.get("followup_prompt"):
        raise DataError(f"{where}: request {row.get('row_id')} has no 'followup_prompt'")
    return {"prompt": row["followup_prompt"].replace("{response}", first_turn)}


def output_params(spec: ModelSpec, st: Settings) -> dict[str, Any]:
    """Settings that change the output and so enter the key (never concurrency, retries or batch size)."""
    params: dict[str, Any] = {"temperature": st.temperature, "top_p": st.top_p, "max_tokens": st.max_tokens}
    if spec.provider in ("local", "vllm"):
        params.update(dtype=spec.dtype, quantization=spec.quantization, gguf_file=spec.gguf_file)
    if spec.sampling_extra:  # only when set, so keys of models without extras stay as they were
        params["extra"] = dict(sorted(spec.sampling_extra.items()))
    return params


def make_sample(spec: ModelSpec, seeded: bool, request_id: str, i: int, sent: dict, st: Settings) -> Sample:
    seed = sample_seed(st.root_seed, request_id, i) if seeded else None
    key = sample_key(spec.provider, spec.model_id, spec.revision, sent, output_params(spec, st), i, seed)
    msgs = tuple(dict(m) for m in sent["messages"]) if "messages" in sent else None
    return Sample(key=key, sample_index=i, seed=seed, max_tokens=st.max_tokens, temperature=st.temperature,
                  top_p=st.top_p, prompt=sent.get("prompt"), messages=msgs)


class Runner:
    """Sends the missing samples of a model to its provider and records every result in the store."""

    def __init__(self, name: str, spec: ModelSpec, store: Store,
                 progress: Callable[[Sample, Result], None] | None = None) -> None:
        self.name, self.spec, self.store = name, spec, store
        self.seeded = provider_class(spec.provider).seeded
        self.progress = progress
        self._provider: Provider | None = None
        self.sent = 0

    def provider(self) -> Provider:
        if self._provider is None:
            self._provider = build_provider(self.name, self.spec)
            self._provider.state_dir = str(self.store.write_dir / "batches")
            Path(self._provider.state_dir).mkdir(parents=True, exist_ok=True)
        return self._provider

    def missing(self, samples: list[Sample]) -> list[Sample]:
        """Samples whose key is not done, each key once."""
        out: dict[str, Sample] = {}
        for s in samples:
            if s.key not in self.store.done:
                out.setdefault(s.key, s)
        return list(out.values())

    def run(self, samples: list[Sample], meta: dict[str, dict]) -> None:
        """Generate the missing ones; `meta[key]` is stored with each record (request id, turn)."""
        todo = self.missing(samples)
        if not todo:
            return
        self.sent += len(todo)

        def record(s: Sample, r: Result) -> None:
            self.store.append({
                "key": s.key, "model": self.name, "provider": self.spec.provider, "model_id": self.spec.model_id,
                "revision": self.spec.revision, "sample_index": s.sample_index, "seed": s.seed,
                "temperature": s.temperature, "top_p": s.top_p, "max_tokens": s.max_tokens,
                "input_hash": content_hash({"prompt": s.prompt, "messages": s.message_list}),
                "text": r.text, "reasoning": r.reasoning, "finish_reason": r.finish_reason, "tokens_in": r.tokens_in,
                "tokens_out": r.tokens_out, "latency_s": round(r.latency_s, 4), "error": r.error,
                "provider_request_id": r.provider_request_id, "system_fingerprint": r.system_fingerprint,
                "note": r.note, "created": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()), **meta.get(s.key, {}),
            })
            if self.progress:
                self.progress(s, r)

        self.provider().generate(todo, record)

    def close(self) -> None:
        if self._provider is not None:
            self._provider.close()


def plan_turns(spec: ModelSpec, seeded: bool, rows: list[dict], st: Settings, where: str,
               store: Store) -> tuple[list[Sample], dict[str, dict], list[Sample], dict[str, dict]]:
    """Turn-1 samples for every distinct request, and turn-2 samples for M4 rows whose turn 1 is stored."""
    t1, m1, t2, m2 = [], {}, [], {}
    firsts: dict[str, dict] = {}
    for row in rows:
        firsts.setdefault(row["request_id"], row)
    for rid, row in firsts.items():
        for i in range(st.n_samples):
            s = make_sample(spec, seeded, rid, i, sent_input(spec, row, where=where), st)
            t1.append(s)
            m1[s.key] = {"request_id": rid, "turn": 1}
            done = store.done.get(s.key)
            if (row.get("followup") or row.get("followup_prompt")) and done is not None:
                s2 = make_sample(spec, seeded, rid, i, sent_input(spec, row, done["text"], where), st)
                t2.append(s2)
                m2[s2.key] = {"request_id": rid, "turn": 2, "first_turn_key": s.key}
    return t1, m1, t2, m2


def count_samples(rows: list[dict], n: int) -> int:
    """Samples a run produces: n per distinct request, twice for M4 requests."""
    firsts = {r["request_id"]: r for r in rows}
    return sum(n * (2 if (r.get("followup") or r.get("followup_prompt")) else 1) for r in firsts.values())


def materialise(name: str, spec: ModelSpec, seeded: bool, rows: list[dict], st: Settings, store: Store,
                where: str) -> list[dict]:
    """One view row per (request row, sample), from the store; missing or failed samples carry their error."""
    out = []
    for row in rows:
        rid = row["request_id"]
        m4 = bool(row.get("followup") or row.get("followup_prompt"))
        for i in range(st.n_samples):
            s1 = make_sample(spec, seeded, rid, i, sent_input(spec, row, where=where), st)
            rec1 = store.done.get(s1.key)
            first_turn, rec, key = None, rec1 or store.failed.get(s1.key), s1.key
            if m4 and rec1 is not None:
                first_turn = rec1["text"]
                key = make_sample(spec, seeded, rid, i, sent_input(spec, row, first_turn, where), st).key
                rec = store.done.get(key) or store.failed.get(key)
            elif m4:
                rec = {"error": "first turn failed: " + str((rec or {}).get("error") or "not generated")}
            view = {c: row.get(c) for c in COPIED}
            view.update(key=key, model=name, provider=spec.provider, model_id=spec.model_id, revision=spec.revision,
                        sample_index=i, seed=s1.seed, first_turn=first_turn, created=(rec or {}).get("created"))
            view.update(_result_columns(rec, row["condition"]))
            out.append(view)
    return out


def _result_columns(rec: dict | None, condition: str) -> dict[str, Any]:
    if rec is None or rec.get("error") is not None:
        err = (rec or {}).get("error") or "not generated"
        return {"text": "", "reasoning": None, "answer": "", "finish_reason": "error", "tokens_in": (rec or {}).get("tokens_in", 0),
                "tokens_out": 0, "latency_s": (rec or {}).get("latency_s", 0.0), "error": err}
    text = rec["text"]
    if condition == "C2":
        reasoning, answer = split_reasoning(text, rec.get("reasoning"))
    else:
        reasoning, answer = rec.get("reasoning"), text
    return {"text": text, "reasoning": reasoning, "answer": answer, "finish_reason": rec["finish_reason"],
            "tokens_in": rec["tokens_in"], "tokens_out": rec["tokens_out"], "latency_s": rec["latency_s"], "error": None}


def settings_for(gen: GenerateParams, n_samples: int | None, max_tokens: dict[str, int] | None, condition: str) -> Settings:
    """Protocol settings with the slice's overrides applied."""
    mt = (max_tokens or {}).get(condition, gen.max_tokens[condition])
    return Settings(n_samples=n_samples or gen.n_samples, max_tokens=mt, temperature=gen.temperature, top_p=gen.top_p,
                    root_seed=gen.seed)
