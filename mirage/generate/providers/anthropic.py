"""`anthropic` provider: the official SDK (AsyncAnthropic), bounded concurrency, SDK retries.

The Messages API has no seed parameter: records carry seed=null and a note saying so, and repeated
samples are distinguished only by their sample index. A leading system message becomes `system`.
Thinking blocks (extended thinking) are kept as the reasoning trace. Jobs of at least
`batch_min_requests` go through Message Batches when `use_batch_api` is set.
"""

from __future__ import annotations

import json
import os
import time
from pathlib import Path
from typing import Any

from mirage.generate.params import ModelSpec
from mirage.generate.providers._async import run_bounded
from mirage.generate.providers.base import OnResult, Provider, Result, Sample, normalise_finish
from mirage.io import write_json

NO_SEED_NOTE = "anthropic Messages API has no seed parameter; samples are not reproducible by seed"
TERMINAL = "ended"


class AnthropicProvider(Provider):
    seeded = False

    def __init__(self, name: str, spec: ModelSpec) -> None:
        super().__init__(name, spec)
        self.api_key = os.environ.get(spec.api_key_env) if spec.api_key_env else None
        if spec.api_key_env and not self.api_key:
            raise RuntimeError(f"model '{name}': set the environment variable {spec.api_key_env} to its API key")

    def client(self, async_: bool = True) -> Any:
        import anthropic

        cls = anthropic.AsyncAnthropic if async_ else anthropic.Anthropic
        return cls(api_key=self.api_key or "unused", base_url=self.spec.base_url, max_retries=self.spec.max_retries,
                   timeout=self.spec.timeout_s)

    def params(self, s: Sample) -> dict[str, Any]:
        """Messages API parameters for one sample (live and batch path)."""
        messages = s.message_list
        body: dict[str, Any] = {"model": self.spec.model_id, "max_tokens": s.max_tokens, "temperature": s.temperature}
        if messages and messages[0]["role"] == "system":
            body["system"] = messages[0]["content"]
            messages = messages[1:]
        body["messages"] = messages
        if s.top_p < 1.0:  # newer Claude models reject temperature and top_p together; send top_p only when used
            body["top_p"] = s.top_p
        return body

    def generate(self, samples: list[Sample], on_result: OnResult) -> None:
        if self.spec.use_batch_api and len(samples) >= self.spec.batch_min_requests:
            self._run_batch(samples, on_result)
            return
        async def call(client: Any, s: Sample) -> Result:
            import anthropic

            start = time.perf_counter()
            try:
                body = self.params(s)
                # Sampling settings go in extra_body: recent SDKs dropped them from the typed signature,
                # while the pinned claude-opus-4-20250514 snapshot still accepts them on the wire.
                sampling = {k: body.pop(k) for k in ("temperature", "top_p") if k in body}
                resp = await client.messages.create(**body, extra_body=sampling)
            except anthropic.APIStatusError as exc:
                return Result.failure(f"HTTP {exc.status_code}: {exc.message}", time.perf_counter() - start,
                                      exc.response.headers.get("request-id"))
            except anthropic.APIError as exc:
                return Result.failure(f"{type(exc).__name__}: {exc}", time.perf_counter() - start)
            return parse_message(resp.model_dump(), time.perf_counter() - start, getattr(resp, "_request_id", None))

        run_bounded(samples, self.client, call, on_result, self.spec.max_concurrency, self.spec.requests_per_minute)

    def _run_batch(self, samples: list[Sample], on_result: OnResult, poll_s: float = 30.0) -> None:
        """Message Batches: resume recorded batches, submit the rest, poll until ended, ingest results."""
        client = self.client(async_=False)
        state = Path(self.state_dir or ".")
        by_key = {s.key: s for s in samples}
        records = sorted(state.glob("anthropic-*.json"))
        if by_key and not records:
            batch = client.messages.batches.create(
                requests=[{"custom_id": s.key, "params": self.params(s)} for s in by_key.values()])
            records = [state / f"anthropic-{batch.id}.json"]
            write_json(records[0], {"batch_id": batch.id, "keys": sorted(by_key)})
        for record in records:
            batch_id = json.loads(record.read_text(encoding="utf-8"))["batch_id"]
            while client.messages.batches.retrieve(batch_id).processing_status != TERMINAL:
                time.sleep(poll_s)
            for item in client.messages.batches.results(batch_id):
                row = item.model_dump()
                s = by_key.pop(row["custom_id"], None)
                if s is not None:
                    on_result(s, parse_batch_result(row["result"]))
            record.rename(record.with_suffix(".ingested"))


def parse_message(data: dict[str, Any], latency_s: float = 0.0, request_id: str | None = None) -> Result:
    """Messages API JSON -> Result: text blocks joined, thinking blocks as reasoning, seed-less note."""
    try:
        blocks = data["content"]
        text = "".join(b["text"] for b in blocks if b.get("type") == "text")
        thinking = "\n".join(b.get("thinking", "") for b in blocks if b.get("type") == "thinking") or None
        usage = data.get("usage") or {}
    except (KeyError, TypeError) as exc:
        return Result.failure(f"malformed response: {type(exc).__name__}: {exc}", latency_s, request_id)
    return Result(text=text, reasoning=thinking, finish_reason=normalise_finish(data.get("stop_reason")),
                  tokens_in=int(usage.get("input_tokens") or 0), tokens_out=int(usage.get("output_tokens") or 0),
                  latency_s=latency_s, provider_request_id=request_id or data.get("id"), note=NO_SEED_NOTE,
                  extra={"response_id": data.get("id")})


def parse_batch_result(result: dict[str, Any]) -> Result:
    """One Message Batches result (`succeeded` / `errored` / `canceled` / `expired`)."""
    if result.get("type") == "succeeded":
        return parse_message(result["message"])
    return Result.failure(f"batch {result.get('type')}: {json.dumps(result.get('error'))[:300]}")
