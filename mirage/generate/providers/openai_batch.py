"""OpenAI Batch API path: write the batch JSONL, upload, create, poll, ingest.

Submitted batches are recorded in `{state_dir}/openai-{batch_id}.json` before polling, so a killed
run re-polls and ingests the same batch instead of buying it again.
"""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

from mirage.generate.providers.base import OnResult, Result, Sample
from mirage.io import write_json

TERMINAL = {"completed", "failed", "expired", "cancelled"}


def batch_lines(provider: Any, samples: list[Sample]) -> list[str]:
    """One JSONL line per sample: custom_id = store key."""
    return [json.dumps({"custom_id": s.key, "method": "POST", "url": provider.endpoint(), "body": provider.body(s)},
                       ensure_ascii=False, sort_keys=True) for s in samples]


def ingest(output_jsonl: str, error_jsonl: str | None, by_key: dict[str, Sample], on_result: OnResult) -> set[str]:
    """Report each batch output line for a key in `by_key`; returns the keys reported."""
    from mirage.generate.providers.openai import parse_response

    seen: set[str] = set()
    for text in (output_jsonl, error_jsonl or ""):
        for line in text.splitlines():
            if not line.strip():
                continue
            row = json.loads(line)
            key = row.get("custom_id")
            if key not in by_key or key in seen:
                continue
            resp, err = row.get("response") or {}, row.get("error")
            if err or resp.get("status_code", 200) >= 400:
                detail = err or (resp.get("body") or {}).get("error")
                result = Result.failure(f"batch error: {json.dumps(detail)[:300]}", request_id=resp.get("request_id"))
            else:
                result = parse_response(resp.get("body") or {}, 0.0, resp.get("request_id"))
            on_result(by_key[key], result)
            seen.add(key)
    return seen


def run_batch(provider: Any, samples: list[Sample], on_result: OnResult, poll_s: float = 30.0) -> None:
    """Resume recorded batches first, submit the rest as one batch, poll to the end and ingest."""
    client = provider.client(async_=False)
    state = Path(provider.state_dir)
    by_key = {s.key: s for s in samples}
    for record in sorted(state.glob("openai-*.json")):
        pending = json.loads(record.read_text(encoding="utf-8"))
        done = _finish(client, pending["batch_id"], by_key, on_result, poll_s)
        for key in done:
            by_key.pop(key, None)
        record.rename(record.with_suffix(".ingested"))
    if not by_key:
        return
    content = ("\n".join(batch_lines(provider, list(by_key.values()))) + "\n").encode("utf-8")
    upload = client.files.create(file=("mirage-batch.jsonl", content), purpose="batch")
    batch = client.batches.create(input_file_id=upload.id, endpoint=provider.endpoint(), completion_window="24h")
    record = state / f"openai-{batch.id}.json"
    write_json(record, {"batch_id": batch.id, "input_file_id": upload.id, "keys": sorted(by_key)})
    _finish(client, batch.id, by_key, on_result, poll_s)
    record.rename(record.with_suffix(".ingested"))


def _finish(client: Any, batch_id: str, by_key: dict[str, Sample], on_result: OnResult, poll_s: float) -> set[str]:
    batch = client.batches.retrieve(batch_id)
    while batch.status not in TERMINAL:
        time.sleep(poll_s)
        batch = client.batches.retrieve(batch_id)
    out = client.files.content(batch.output_file_id).text if batch.output_file_id else ""
    err = client.files.content(batch.error_file_id).text if batch.error_file_id else None
    return ingest(out, err, by_key, on_result)
