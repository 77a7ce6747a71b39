"""`anthropic` provider: the Messages API through the lean aiohttp client (`_http`) and the shared driver
(`_async`: adaptive bounded concurrency, retries with backoff honouring Retry-After); Message Batches through the
official SDK.

The request speaks the Anthropic dialect (`dialects.ANTHROPIC`): no seed parameter (records carry seed=null and
the dialect's note, and repeated samples are distinguished only by their sample index), thinking never switched on.
A leading system message becomes `system`. Thinking blocks (extended thinking) are kept as the reasoning trace. A
reply without visible text is a failed call (`reply.answered`), so no M4 second turn follows an empty first turn
(the API refuses a conversation with an empty assistant turn, HTTP 400, for good). Jobs of at least
`batch_min_requests` go through Message Batches when `use_batch_api` is set.
"""

from __future__ import annotations

import json
from typing import Any

from mirage.config.generate import ModelSpec
from mirage.generate.providers import reply as check
from mirage.generate.providers._async import run_bounded
from mirage.generate.providers._http import Failed, HttpClient, reply_cap
from mirage.generate.providers.base import OnResult, Provider, Result, Sample, normalise_finish
from mirage.generate.providers.openai_batch import BatchJob

ANTHROPIC_URL = "https://api.anthropic.com"
API_VERSION = "2023-06-01"
#: Causes of the error types of an `errored` Message Batches result (others, `canceled` and `expired`: server).
BATCH_ERROR_CAUSES = {"invalid_request_error": "request", "authentication_error": "auth", "permission_error": "auth",
                      "not_found_error": "endpoint", "rate_limit_error": "rate_limit", "billing_error": "quota"}


class AnthropicProvider(Provider):
    def __init__(self, name: str, spec: ModelSpec) -> None:
        super().__init__(name, spec)
        self.api_key = self.api_key_from_env()

    def client(self) -> Any:
        """The official SDK's client (Message Batches path)."""
        import anthropic

        return anthropic.Anthropic(api_key=self.api_key or "unused", base_url=self.spec.base_url,
                                   max_retries=self.spec.max_retries, timeout=self.spec.timeout_s)

    def http(self) -> HttpClient:
        """The live path's client: keep-alive pool sized to the concurrency."""
        headers = {"x-api-key": self.api_key or "unused", "anthropic-version": API_VERSION}
        return HttpClient(self.spec.base_url or ANTHROPIC_URL, headers, self.spec.max_concurrency, "request-id")

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
            AnthropicBatch(self).run(self.state_dir, samples, on_result)
            return

        async def call(client: HttpClient, s: Sample) -> Result:
            # The body as built here, parsed as plain JSON: temperature/top_p stay on the wire although recent SDKs
            # dropped them from the typed signature.
            try:
                reply = await client.post_json("/v1/messages", self.params(s), self.spec.timeout_s, reply_cap(s.max_tokens))
            except Failed as exc:
                return Result.failure(exc.error, request_id=exc.request_id, cause=exc.cause)
            return self.check_served(self.noted(parse_message(reply.data, request_id=reply.request_id,
                                                              max_tokens=s.max_tokens)))

        run_bounded(samples, self.http, call, on_result, self.spec.max_concurrency, self.spec.requests_per_minute,
                    self.spec.max_retries, self.spec.adaptive_concurrency)


class AnthropicBatch(BatchJob):
    """Message Batches: create with the live path's parameters, poll until `ended`, stream the JSONL results."""

    prefix = "anthropic"
    max_requests = 100_000  # API limit per batch
    max_bytes = 250 * 2**20  # under the 256 MB request limit

    def __init__(self, provider: AnthropicProvider) -> None:
        super().__init__(provider.client(), provider.spec.batch_poll_s)
        self.provider = provider

    def request(self, s: Sample) -> dict[str, Any]:
        return {"custom_id": s.key, "params": self.provider.params(s)}

    def submit(self, requests: list[dict[str, Any]]) -> dict[str, Any]:
        return {"batch_id": self.client.messages.batches.create(requests=requests).id}

    def poll(self, batch_id: str) -> Any | None:
        batch = self.client.messages.batches.retrieve(batch_id)
        return batch if batch.processing_status == "ended" else None

    def collect(self, batch: Any, wanted: dict[str, Sample], on_result: OnResult) -> str:
        for item in self.client.messages.batches.results(batch.id):
            row = item.model_dump()
            s = wanted.pop(row["custom_id"], None)
            if s is not None:
                on_result(s, self.provider.noted(parse_batch_result(row["result"], s.max_tokens)))
        return batch.processing_status


def parse_message(data: dict[str, Any], latency_s: float = 0.0, request_id: str | None = None,
                  max_tokens: int | None = None) -> Result:
    """Messages API JSON -> Result, every field checked (mirage.generate.providers.reply): text blocks joined,
    thinking blocks as reasoning; a reply without visible text is a failed call."""
    try:
        blocks = [check.obj(b, f"content[{i}]") for i, b in enumerate(check.array(data.get("content"), "content"))]
        text = "".join(check.string(b, "text", f"content[{i}]") or "" for i, b in enumerate(blocks) if b.get("type") == "text")
        thinking = "\n".join(check.string(b, "thinking", f"content[{i}]") or ""
                             for i, b in enumerate(blocks) if b.get("type") == "thinking") or None
        usage = check.obj(data.get("usage"), "usage", optional=True)
        tokens_in, tokens_out = check.count(usage, "input_tokens", "usage"), check.count(usage, "output_tokens", "usage")
        stop, response_id = check.string(data, "stop_reason", "reply"), check.string(data, "id", "reply")
        served = check.string(data, "model", "reply")
        check.within_budget(max_tokens, text, thinking)
        finish = normalise_finish(stop)
        check.answered(text, finish, max_tokens)
    except check.Unanswered as exc:
        return Result.failure(f"no answer: {exc}", latency_s, request_id)
    except check.Malformed as exc:
        return Result.failure(f"malformed response: {exc}", latency_s, request_id)
    return Result(text=text, reasoning=thinking, finish_reason=finish, tokens_in=tokens_in, tokens_out=tokens_out,
                  latency_s=latency_s, provider_request_id=request_id or response_id, served_model=served,
                  extra={"response_id": response_id})


def parse_batch_result(result: dict[str, Any], max_tokens: int | None = None) -> Result:
    """One Message Batches result (`succeeded` / `errored` / `canceled` / `expired`)."""
    if result.get("type") == "succeeded":
        return parse_message(result.get("message") if isinstance(result.get("message"), dict) else {},
                             max_tokens=max_tokens)
    error = result.get("error") if isinstance(result.get("error"), dict) else {}
    inner = error.get("error") if isinstance(error.get("error"), dict) else error
    cause = BATCH_ERROR_CAUSES.get(inner.get("type"), "server") if result.get("type") == "errored" else "server"
    return Result.failure(f"batch {result.get('type')}: {json.dumps(result.get('error'))}", cause=cause)  # redacted, then cut
