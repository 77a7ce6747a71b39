"""One generation run: which samples a model owes for a set of request rows (plan), sending the missing ones
(run), and the view rows they yield (view). Shared by `mirage generate`, the LLM judge and `mirage estimate`.

Vocabulary (printed by every stage that counts): a *request row* is one prompt x condition x pool x mitigation
row of the rendered requests; a *request* is a distinct input (rows with identical inputs share a `request_id` and
are sent once); a *sample* is one of n independent draws of a request; a *call* is one model invocation, and
an M4 (critique-and-revise) sample takes two calls, one per *turn*, the second keyed on the stored first.
Only calls missing from the content-addressed store are sent; errored calls are retried, up to
`generate.retry_rounds` times within a run and `generate.max_attempts` times over all runs. Only a failure that
is the model's (its reply broke the protocol, or the server rejected this one request: `base.COUNTED`) is stored
and uses up an attempt; an outage (a refused key, an empty account, a server down: `base.OUTAGES`) is stored
nowhere, stops the run, and leaves its calls *pending* for the next run.
"""

from __future__ import annotations

import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from mirage.config.dialects import dialect_for
from mirage.config.generate import GenerateParams, ModelSpec
from mirage.generate.providers import Provider, build_provider
from mirage.generate.providers.base import OUTAGES, Result, Sample
from mirage.generate.providers.reply import served_model_matches
from mirage.generate.split import split_reasoning
from mirage.generate.store import Store, sample_key, sample_seed
from mirage.hashing import content_hash
from mirage.io import DataError, read_jsonl
from mirage.secrets import redact_obj

REQUIRED = ("row_id", "request_id", "condition", "slices")
COPIED = ("row_id", "request_id", "prompt_id", "base_id", "template", "harness", "identity", "focal", "language",
          "condition", "rag_pool", "mitigation", "lite", "split", "frame_id", "case_id", "cue", "gender", "paraphrase")
#: Why an M4 sample whose stored first turn is empty (written before empty answers were failed calls) gets no second.
EMPTY_FIRST_TURN = ("first turn stored empty: no second turn sent (an empty assistant turn is no answer to revise, "
                    "and Anthropic refuses such a conversation with a permanent HTTP 400)")
VOCABULARY = ("request row = prompt x condition x pool x mitigation; request = distinct input (sent once); "
              "sample = one of n draws of a request; call = one model invocation (M4 samples take two turns)")


@dataclass(frozen=True)
class Settings:
    """Output-changing settings of one run."""

    n_samples: int
    max_tokens: int
    temperature: float
    top_p: float
    root_seed: int


def settings_for(gen: GenerateParams, n_samples: int | None, max_tokens: dict[str, int] | None, condition: str) -> Settings:
    """Protocol settings with the slice's overrides applied."""
    mt = (max_tokens or {}).get(condition, gen.max_tokens[condition])
    return Settings(n_samples=n_samples or gen.n_samples, max_tokens=mt, temperature=gen.temperature, top_p=gen.top_p,
                    root_seed=gen.seed)


def read_requests(path: str | Path, slice_name: str, condition: str | None = None, limit: int | None = None) -> list[dict]:
    """Rows of a requests file in `slice_name`; `limit` keeps the first N distinct requests. A row of another
    condition than `condition` is an error (a C2 file passed for C1 would otherwise land in C1's views)."""
    rows, seen = [], set()
    for lineno, row in enumerate(read_jsonl(path, required=REQUIRED), 1):
        if condition is not None and row["condition"] != condition:
            raise DataError(f"{path}:{lineno}: field condition: {row['condition']!r}, but this run is for {condition}")
        if slice_name not in row["slices"]:
            continue
        if limit is not None and row["request_id"] not in seen and len(seen) >= limit:
            continue
        seen.add(row["request_id"])
        rows.append(row)
    return rows


def is_two_turn(row: dict) -> bool:
    return bool(row.get("followup") or row.get("followup_prompt"))


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


def key_parts(spec: ModelSpec) -> tuple[list, dict[str, Any]]:
    """The model's part of every sample key: ([provider, model_id, revision], other output settings)."""
    model = spec.output_settings()
    model.pop("mode")  # decides the shape of `sent`, which is keyed itself
    return [model.pop(k) for k in ("provider", "model_id", "revision")], model


def make_sample(spec: ModelSpec, seeded: bool, request_id: str, i: int, sent: dict, st: Settings,
                draw: str | None = None, parts: tuple[list, dict[str, Any]] | None = None) -> Sample:
    """A sample keyed on everything that changes its output (spec.output_settings(), the input, the sampling
    settings, index and seed). `draw` separates requests whose first turn is the same input but which must be
    independent draws (M4's turn 1 vs the unmitigated request) on providers without a seed. `parts` is
    `key_parts(spec)` when the caller keys many samples of one model."""
    seed = sample_seed(st.root_seed, request_id, i) if seeded else None
    ident, model = parts or key_parts(spec)
    params = {"temperature": st.temperature, "top_p": st.top_p, "max_tokens": st.max_tokens, **model}
    if draw is not None:
        params["draw"] = draw
    msgs = tuple(dict(m) for m in sent["messages"]) if "messages" in sent else None
    return Sample(key=sample_key(*ident, sent, params, i, seed), sample_index=i, seed=seed, max_tokens=st.max_tokens,
                  temperature=st.temperature, top_p=st.top_p, prompt=sent.get("prompt"), messages=msgs)


@dataclass(frozen=True)
class Plan:
    """What a run owes: the counts every stage prints (see the module docstring for the vocabulary)."""

    request_rows: int
    requests: int
    samples: int
    calls: int
    done: int

    @property
    def to_send(self) -> int:
        return self.calls - self.done

    def describe(self) -> str:
        return (f"{self.request_rows} request rows -> {self.requests} requests -> {self.samples} samples -> "
                f"{self.calls} calls; {self.done} already in the store, {self.to_send} to send")


Progress = Callable[[Sample, Result], None]


class GenerationRun:
    """One model over a set of request rows with fixed settings, backed by its store (None: plan only)."""

    def __init__(self, name: str, spec: ModelSpec, settings: Settings, rows: list[dict], store: Store | None,
                 where: str = "", progress: Progress | None = None, slice_name: str = "") -> None:
        self.name, self.spec, self.st, self.rows, self.store, self.where = name, spec, settings, rows, store, where
        self.slice_name = slice_name
        self.seeded = dialect_for(spec).seed
        self.progress = progress
        self.firsts: dict[str, dict] = {}
        for row in rows:
            self.firsts.setdefault(row["request_id"], row)
        self._provider: Provider | None = None
        self._parts = key_parts(spec)
        self._firsts: dict[tuple[str, int], Sample] = {}  # turn-1 samples, keyed once per run
        self.sent = 0
        self.outages: dict[str, Result] = {}  # key -> the outage that left it pending (never stored)
        self.served: Counter[str] = Counter()  # model names a server answered as, other than model_id (warn policy)

    # --- plan -------------------------------------------------------------------------------------

    def _first(self, rid: str, row: dict, i: int) -> Sample:
        s = self._firsts.get((rid, i))
        if s is None:
            draw = rid if (is_two_turn(row) and not self.seeded) else None
            s = self._firsts[rid, i] = make_sample(self.spec, self.seeded, rid, i, sent_input(self.spec, row, where=self.where),
                                                   self.st, draw, self._parts)
        return s

    def _second(self, rid: str, row: dict, i: int, first_text: str) -> Sample:
        return make_sample(self.spec, self.seeded, rid, i, sent_input(self.spec, row, first_text, self.where), self.st,
                           parts=self._parts)

    def _first_text(self, key: str) -> str | None:
        """The stored first turn's text, where it can carry a second turn (None: not stored, or empty)."""
        if not self._is_done(key):
            return None
        text = self.store.done[key]["text"]
        return text if text.strip() else None

    def _is_done(self, key: str) -> bool:
        """Membership only: the record itself stays on disk."""
        return self.store is not None and key in self.store.done

    def turns(self) -> tuple[dict[str, tuple[Sample, dict]], dict[str, tuple[Sample, dict]]]:
        """(turn-1 calls, turn-2 calls whose first turn is stored), each key -> (sample, record metadata)."""
        t1: dict[str, tuple[Sample, dict]] = {}
        t2: dict[str, tuple[Sample, dict]] = {}
        for rid, row in self.firsts.items():
            for i in range(self.st.n_samples):
                s = self._first(rid, row, i)
                t1.setdefault(s.key, (s, {"request_id": rid, "turn": 1}))
                first = self._first_text(s.key) if is_two_turn(row) else None
                if first:
                    s2 = self._second(rid, row, i, first)
                    t2.setdefault(s2.key, (s2, {"request_id": rid, "turn": 2, "first_turn_key": s.key}))
        return t1, t2

    def owed_calls(self) -> list[tuple[str, int, int]]:
        """(request_id, sample index, turn) of every call not in the store, by membership: the second turn of a
        sample whose first is missing is owed too; a stored first turn is read only to key its second (M4), and an
        empty one owes none (EMPTY_FIRST_TURN)."""
        out = []
        for rid, row in self.firsts.items():
            two = is_two_turn(row)
            for i in range(self.st.n_samples):
                s = self._first(rid, row, i)
                if not self._is_done(s.key):
                    out += [(rid, i, 1), (rid, i, 2)] if two else [(rid, i, 1)]
                elif two and (first := self._first_text(s.key)) and \
                        not self._is_done(self._second(rid, row, i, first).key):
                    out.append((rid, i, 2))
        return out

    def plan(self) -> Plan:
        two = sum(1 for r in self.firsts.values() if is_two_turn(r))
        samples = len(self.firsts) * self.st.n_samples
        t1, t2 = self.turns()
        done = sum(1 for k in [*t1, *t2] if self._is_done(k))
        return Plan(len(self.rows), len(self.firsts), samples, samples + two * self.st.n_samples, done)

    # --- run --------------------------------------------------------------------------------------

    def provider(self) -> Provider:
        if self._provider is None:
            from mirage.generate.memory import longest_request

            longest = longest_request([(list(self.firsts.values()), self.st.max_tokens)], self.spec.mode)
            self._provider = build_provider(self.name, self.spec, longest)
            self._provider.state_dir = str(self.store.write_dir / "batches")
            Path(self._provider.state_dir).mkdir(parents=True, exist_ok=True)
        return self._provider

    def owed(self, max_attempts: int | None = None) -> list[tuple[Sample, dict]]:
        """Calls not in the store whose failures so far are below `max_attempts` (None: no limit)."""
        t1, t2 = self.turns()
        out = []
        for key, item in [*t1.items(), *t2.items()]:
            if not self._is_done(key) and (max_attempts is None or self.store.attempts.get(key, 0) < max_attempts):
                out.append(item)
        return out

    def refuse_if_blocked(self, max_attempts: int | None = None) -> None:
        """Raise NotReady, before any call, when calls are owed and the model may not send them (retired,
        unpinned, keyless): mirage.generate.readiness."""
        import datetime as dt
        import os

        from mirage.generate.readiness import Need, NotReady, missing_samples, refusal, send_blockers

        blockers = send_blockers(self.name, self.spec, dt.date.today(), os.environ)
        if blockers and self.owed(max_attempts):
            conditions = sorted({r["condition"] for r in self.rows})
            need = Need(self.name, {"/".join(conditions): (missing_samples(self), len(self.firsts) * self.st.n_samples)},
                        False, blockers, self.spec.api_key_env)
            raise NotReady(refusal([need], self.slice_name))

    def run(self, retry_rounds: int = 0, max_attempts: int | None = None) -> None:
        """Send what is owed until nothing is: turn 2 follows its stored turn 1 (no retry needed for that);
        a call that failed in this run is sent again at most `retry_rounds` times; an outage ends the run at once
        (`outages`). Refused before any call when something is owed that the model may not send
        (`refuse_if_blocked`)."""
        self.refuse_if_blocked(max_attempts)
        attempted: set[str] = set()
        retries = 0
        while not self.outages:
            todo = self.owed(max_attempts)
            fresh = [t for t in todo if t[0].key not in attempted]
            if len(fresh) < len(todo):
                if retries < retry_rounds:
                    retries += 1
                else:
                    todo = fresh
            if not todo:
                return
            attempted.update(s.key for s, _ in todo)
            self._send(todo)

    def _send(self, todo: list[tuple[Sample, dict]]) -> None:
        meta = {s.key: m for s, m in todo}
        self.sent += len(todo)

        def record(s: Sample, r: Result) -> None:
            if r.outage:
                self.outages[s.key] = r
            else:
                self.store_result(s, r, meta.get(s.key, {}))
            if self.progress:
                self.progress(s, r)

        self.provider().generate([s for s, _ in todo], record)

    def store_result(self, s: Sample, r: Result, meta: dict) -> None:
        """Append the record of one answered call (a success, or a failure that is the model's)."""
        if r.served_model is not None and not served_model_matches(r.served_model, self.spec.model_id):
            self.served[r.served_model] += 1
        self.store.append(redact_obj({
            "key": s.key, "model": self.name, "provider": self.spec.provider, "model_id": self.spec.model_id,
            "revision": self.spec.revision, "sample_index": s.sample_index, "seed": s.seed,
            "temperature": s.temperature, "top_p": s.top_p, "max_tokens": s.max_tokens,
            "input_hash": content_hash({"prompt": s.prompt, "messages": s.message_list}),
            "text": r.text, "reasoning": r.reasoning, "finish_reason": r.finish_reason, "tokens_in": r.tokens_in,
            "tokens_out": r.tokens_out, "latency_s": round(r.latency_s, 4), **_phases(r), "error": r.error,
            "provider_request_id": r.provider_request_id, "system_fingerprint": r.system_fingerprint,
            "note": r.note, "cause": r.cause, "served_model": r.served_model,
            "created": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()), **meta,
        }))

    def failures(self) -> dict[str, str]:
        """Key -> last error of every owed call that is still missing after the run."""
        t1, t2 = self.turns()
        out = {}
        for key in [*t1, *t2]:
            if not self._is_done(key):
                outage = self.outages.get(key)
                out[key] = outage.error if outage else (self.store.failed.get(key) or {}).get("error") or "not generated"
        return out

    def pending(self, max_attempts: int | None) -> int:
        """Samples with a call still owed and not given up on (below `max_attempts` failures): what a rerun sends."""
        return len({(m["request_id"], s.sample_index) for s, m in self.owed(max_attempts)})

    def stop_reason(self) -> str | None:
        """One line naming the outage that stopped the run, or None."""
        if not self.outages:
            return None
        causes = Counter(r.cause for r in self.outages.values())
        cause, _ = causes.most_common(1)[0]
        first = next(r.error for r in self.outages.values() if r.cause == cause)
        return f"{OUTAGES.get(cause, cause)} ({first})"

    def close(self) -> None:
        if self._provider is not None:
            self._provider.close()
            self._provider = None

    # --- view -------------------------------------------------------------------------------------

    def view(self) -> list[dict]:
        """One row per (request row, sample), from the store; missing or failed samples carry their error."""
        out = []
        for row in self.rows:
            rid = row["request_id"]
            for i in range(self.st.n_samples):
                s1 = self._first(rid, row, i)
                rec1 = self.store.done.get(s1.key)
                first_turn, rec, key = None, rec1 or self.store.failed.get(s1.key), s1.key
                if is_two_turn(row) and rec1 is not None and not rec1["text"].strip():
                    first_turn, rec = rec1["text"], {"error": EMPTY_FIRST_TURN}
                elif is_two_turn(row) and rec1 is not None:
                    first_turn = rec1["text"]
                    key = self._second(rid, row, i, first_turn).key
                    rec = self.store.done.get(key) or self.store.failed.get(key)
                elif is_two_turn(row):
                    rec = {"error": "first turn failed: " + str((rec or {}).get("error") or "not generated")}
                view = {c: row.get(c) for c in COPIED}
                view.update(key=key, model=self.name, provider=self.spec.provider, model_id=self.spec.model_id,
                            revision=self.spec.revision, sample_index=i, seed=s1.seed, first_turn=first_turn,
                            created=(rec or {}).get("created"))
                view.update(_result_columns(rec, row["condition"]))
                out.append(view)
        return out


def _phases(r: Result) -> dict[str, float]:
    """queue_s (to the first token) and generation_s (first token to end) of a streamed call; {} otherwise."""
    return {k: round(v, 4) for k, v in (("queue_s", r.queue_s), ("generation_s", r.generation_s)) if v is not None}


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
