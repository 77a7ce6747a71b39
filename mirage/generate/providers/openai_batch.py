"""Batch API driver (shared by OpenAI Batch and Anthropic Message Batches) and the OpenAI Batch path.

Every submitted batch is recorded in `{state_dir}/{prefix}-{batch_id}.json` (its id and keys) right
after it is created and before polling, so a killed run re-polls and ingests the same batch instead of
buying it again. A run resumes only the recorded batches that share keys with it (a batch of another
condition waits for its own run); a record keeps the keys no run has ingested yet and is retired
(renamed `.ingested`) when none are left. Jobs are split into batches within the API's size limits and, for
OpenAI, within the account's enqueued-token limit (`batch_enqueued_tokens`): a batch that would pass it fails whole
(`token_limit_exceeded`), so the next part is submitted only when the batches in flight leave room for it.
A key that a finished batch returns no result for is reported as an outage (cause `server`: the provider's failure,
no attempt used up), and so is a per-request error the provider's status calls one (5xx, 429, 401...); the run then
stops and the next run sends exactly those keys again.
"""

from __future__ import annotations

import abc
import json
import time
from collections import deque
from collections.abc import Callable
from pathlib import Path
from typing import Any

from mirage.generate.providers.base import OnResult, Result, Sample
from mirage.generate.providers.openai_reply import parse_response
from mirage.io import write_json

TERMINAL = {"completed", "failed", "expired", "cancelled"}


class BatchJob(abc.ABC):
    """One provider's batch API: submit requests, poll a batch, collect its results."""

    prefix: str
    max_requests: int
    max_bytes: int
    #: The account's enqueued-token limit (OpenAI Batch), None where the API has none.
    max_enqueued_tokens: int | None = None

    def __init__(self, client: Any, poll_s: float) -> None:
        self.client, self.poll_s = client, poll_s

    @abc.abstractmethod
    def request(self, s: Sample) -> dict[str, Any]:
        """The batch request for one sample (custom_id = store key)."""

    @abc.abstractmethod
    def submit(self, requests: list[dict[str, Any]]) -> dict[str, Any]:
        """Create one batch; returns the fields to record, at least `batch_id`."""

    @abc.abstractmethod
    def poll(self, batch_id: str) -> Any | None:
        """The batch once it has finished, else None."""

    @abc.abstractmethod
    def collect(self, batch: Any, wanted: dict[str, Sample], on_result: OnResult) -> str:
        """Report the results of a finished batch for keys in `wanted`, popping them; returns its final status."""

    def tokens(self, s: Sample) -> int:
        """Estimated tokens one request enqueues (None-limited jobs never ask): an upper bound of its input
        (UTF-8 bytes, mirage.generate.memory.input_bound) + its max_tokens."""
        from mirage.generate.memory import input_bound

        return input_bound(s.messages if s.messages is not None else s.prompt) + s.max_tokens

    def run(self, state_dir: str | None, samples: list[Sample], on_result: OnResult) -> None:
        """Resume the recorded batches that hold any of `samples`, submit the rest, poll, ingest. With an
        enqueued-token limit (`max_enqueued_tokens`), parts stay under it and a part is submitted only when the
        batches in flight leave room for it; after an outage no further part is submitted (its samples stay
        pending for the next run)."""
        if not state_dir:
            raise RuntimeError("the batch API needs a state_dir to record submitted batches in")
        state = Path(state_dir)
        pending = {s.key: s for s in samples}
        active = open_records(state, self.prefix, pending)
        resumed = {k for _, data in active for k in data["keys"]}
        todo = [s for k, s in pending.items() if k not in resumed]
        limit = self.max_enqueued_tokens
        cost = {s.key: self.tokens(s) for s in todo} if limit else {}
        parts = deque(chunked([self.request(s) for s in todo], self.max_requests, self.max_bytes,
                              tokens=lambda r: cost[r["custom_id"]] if limit else 0, max_tokens=limit))
        enqueued = sum(data.get("tokens", 0) for _, data in active)
        handled, outage = set(pending), []

        def report(s: Sample, r: Result) -> None:
            if r.outage:
                outage.append(r)
            on_result(s, r)

        while active or (parts and not outage):
            while parts and not outage and (limit is None or not active or
                                            enqueued + part_tokens(parts[0], cost) <= limit):
                part = parts.popleft()
                fields = self.submit(part)
                path = state / f"{self.prefix}-{fields['batch_id']}.json"
                data = {**fields, "keys": sorted(r["custom_id"] for r in part), "tokens": part_tokens(part, cost)}
                write_json(path, data)
                active.append((path, data))
                enqueued += data["tokens"]
            waiting = []
            for path, data in active:
                batch = self.poll(data["batch_id"]) if any(k in pending for k in data["keys"]) else "ingested"
                if batch is None:
                    waiting.append((path, data))
                    continue
                wanted = {k: pending.pop(k) for k in data["keys"] if k in pending}
                status = self.collect(batch, wanted, report) if wanted else batch
                for s in wanted.values():  # the provider's failure, not the model's: pending, no attempt used
                    report(s, Result.failure(f"batch {data['batch_id']} {status}: no result for this request",
                                             cause="server"))
                settle(path, data, handled)
                enqueued -= data.get("tokens", 0)
            if waiting and len(waiting) == len(active):
                time.sleep(self.poll_s)
            active = waiting


def part_tokens(part: list[dict], cost: dict[str, int]) -> int:
    return sum(cost.get(r["custom_id"], 0) for r in part)


def open_records(state: Path, prefix: str, keys: dict[str, Any]) -> list[tuple[Path, dict]]:
    """Recorded, not yet retired batches of `prefix` that hold at least one of `keys`."""
    out = []
    for path in sorted(state.glob(f"{prefix}-*.json")):
        data = json.loads(path.read_text(encoding="utf-8"))
        if any(k in keys for k in data["keys"]):
            out.append((path, data))
    return out


def settle(path: Path, data: dict, handled: set[str]) -> None:
    """Drop the keys this run handled from a record; retire it once none are left."""
    left = [k for k in data["keys"] if k not in handled]
    if left:
        write_json(path, {**data, "keys": left})
    else:
        path.rename(path.with_suffix(".ingested"))


def chunked(requests: list[dict], max_requests: int, max_bytes: int,
            size: Callable[[dict], int] = lambda r: len(json.dumps(r, ensure_ascii=False)) + 1,
            tokens: Callable[[dict], int] = lambda r: 0, max_tokens: int | None = None) -> list[list[dict]]:
    """Consecutive parts of at most `max_requests` requests, `max_bytes` bytes of JSONL and `max_tokens`
    estimated tokens each (a single request over the token limit is a part of its own)."""
    parts: list[list[dict]] = []
    used = spent = 0
    for r in requests:
        n, t = size(r), tokens(r)
        if not parts or len(parts[-1]) >= max_requests or used + n > max_bytes or \
                max_tokens is not None and spent + t > max_tokens:
            parts.append([])
            used = spent = 0
        parts[-1].append(r)
        used, spent = used + n, spent + t
    return parts


def batch_lines(provider: Any, samples: list[Sample]) -> list[str]:
    """One JSONL line per sample: custom_id = store key."""
    return [json.dumps(OpenAIBatch.line(provider, s), ensure_ascii=False, sort_keys=True) for s in samples]


def ingest(output_jsonl: str, error_jsonl: str | None, by_key: dict[str, Sample], on_result: OnResult) -> set[str]:
    """Report each batch output line for a key in `by_key`; returns the keys reported."""
    from mirage.generate.providers._http import status_cause

    seen: set[str] = set()
    for text in (output_jsonl, error_jsonl or ""):
        for line in text.splitlines():
            if not line.strip():
                continue
            try:
                row = json.loads(line)
            except (ValueError, RecursionError):
                continue  # a garbled line: its key gets no result and is reported as such
            key = row.get("custom_id") if isinstance(row, dict) else None
            if not isinstance(key, str) or key not in by_key or key in seen:
                continue
            resp, err = row.get("response"), row.get("error")
            resp = resp if isinstance(resp, dict) else {}
            body = resp.get("body") if isinstance(resp.get("body"), dict) else {}
            rid = resp.get("request_id") if isinstance(resp.get("request_id"), str) else None
            status = resp.get("status_code", 200)
            if err or not isinstance(status, int) or status >= 400:
                cause = status_cause(status, body) if isinstance(status, int) and status >= 400 else "server"
                result = Result.failure(f"batch error: {json.dumps(err or body.get('error'))}", request_id=rid, cause=cause)
            else:
                result = parse_response(body, 0.0, rid, by_key[key].max_tokens)
            on_result(by_key[key], result)
            seen.add(key)
    return seen


class OpenAIBatch(BatchJob):
    """OpenAI Batch API: upload a JSONL file, create a batch on the model's endpoint, download output and errors."""

    prefix = "openai"
    max_requests = 50_000  # API limit per batch
    max_bytes = 190 * 2**20  # under the 200 MB input-file limit

    def __init__(self, provider: Any) -> None:
        super().__init__(provider.client(), provider.spec.batch_poll_s)
        self.provider = provider
        self.max_enqueued_tokens = provider.spec.batch_enqueued_tokens

    @staticmethod
    def line(provider: Any, s: Sample) -> dict[str, Any]:
        return {"custom_id": s.key, "method": "POST", "url": provider.endpoint(), "body": provider.body(s)}

    def request(self, s: Sample) -> dict[str, Any]:
        return self.line(self.provider, s)

    def submit(self, requests: list[dict[str, Any]]) -> dict[str, Any]:
        content = "".join(json.dumps(r, ensure_ascii=False, sort_keys=True) + "\n" for r in requests).encode("utf-8")
        upload = self.client.files.create(file=("mirage-batch.jsonl", content), purpose="batch")
        batch = self.client.batches.create(input_file_id=upload.id, endpoint=self.provider.endpoint(), completion_window="24h")
        return {"batch_id": batch.id, "input_file_id": upload.id}

    def poll(self, batch_id: str) -> Any | None:
        batch = self.client.batches.retrieve(batch_id)
        return batch if batch.status in TERMINAL else None

    def collect(self, batch: Any, wanted: dict[str, Sample], on_result: OnResult) -> str:
        out = self.client.files.content(batch.output_file_id).text if batch.output_file_id else ""
        err = self.client.files.content(batch.error_file_id).text if batch.error_file_id else None
        for key in ingest(out, err, wanted, on_result):
            del wanted[key]
        errors = [str(e.message) for e in (batch.errors.data or [])] if batch.errors else []
        return batch.status + (f" ({'; '.join(errors)})" if errors else "")  # cut by Result.failure, after redaction


def run_batch(provider: Any, samples: list[Sample], on_result: OnResult) -> None:
    """Generate `samples` through the OpenAI Batch API, resuming batches recorded under the provider's state_dir."""
    OpenAIBatch(provider).run(provider.state_dir, samples, on_result)
