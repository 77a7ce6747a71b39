"""`openai` provider: OpenAI and any OpenAI-compatible server (vLLM, llama.cpp, Gemini, ...).

Chat models get `/chat/completions`, completion-mode models `/completions`. Live requests go through a lean
aiohttp client (`_http`) and the shared driver (`_async`): 408/409/429/5xx, timeouts, connection errors and
unparseable bodies are retried (`max_retries`) with exponential backoff and jitter, honouring Retry-After and
`x-should-retry`; what still fails is recorded as an error (`HTTP 500: ...`). The SDK cost ~1 ms CPU a request, which
at high concurrency made the client, not the server, the bottleneck (benchmarks/bench_api.py). The request speaks
the endpoint's dialect (`dialects.dialect_for`: `seed` where it is taken, Gemini's endpoint rejects it; the budget
field; thinking held low); `system_fingerprint` and the request id (`x-request-id`) are recorded. Streamed requests (`ModelSpec.stream`) give the same result as
plain ones and record time queued apart from time generating. An endpoint that cuts a streamed reply short or
streams without usage (llama-cpp-python's server) gets plain requests from then on: the call is sent again plain,
and said once on stderr.
Jobs of at least `batch_min_requests` samples go through the Batch API (official SDK) when `use_batch_api` is set.
"""

from __future__ import annotations

import json
from typing import Any

import click

from mirage.config.generate import ModelSpec
from mirage.generate.providers import reply as check
from mirage.generate.providers._async import run_bounded
from mirage.generate.providers._http import Failed, HttpClient, StreamCut, reply_cap
from mirage.generate.providers.base import OnResult, Provider, Result, Sample
from mirage.generate.providers.openai_reply import parse_response

OPENAI_URL = "https://api.openai.com/v1"


class OpenAIProvider(Provider):
    def __init__(self, name: str, spec: ModelSpec) -> None:
        super().__init__(name, spec)
        self.api_key = self.api_key_from_env()
        #: Whether live requests are streamed now: `spec.streams`, until the endpoint shows it cannot stream.
        self.streaming = spec.streams

    def stop_streaming(self, why: str) -> None:
        """Send this endpoint plain requests from now on (said once): a server that cuts streams or leaves out
        their usage (llama-cpp-python's) answers plain requests in full."""
        if self.streaming:
            self.streaming = False
            click.echo(f"{self.name}: {self.spec.base_url or OPENAI_URL} {why}; sending it plain (non-streamed) "
                       "requests from now on (set `stream: false` for the model, or `mirage audit --no-stream`, to "
                       "skip this check)", err=True)

    def client(self) -> Any:
        """The official SDK's client (Batch API path)."""
        from urllib.parse import parse_qsl

        import openai

        base, _, query = (self.spec.base_url or "").partition("?")  # the SDK appends paths: the query goes apart
        return openai.OpenAI(api_key=self.api_key or "unused", base_url=base or None,
                             default_query=dict(parse_qsl(query, keep_blank_values=True)) or None,
                             max_retries=self.spec.max_retries, timeout=self.spec.timeout_s)

    def http(self) -> HttpClient:
        """The live path's client: keep-alive pool sized to the concurrency."""
        return HttpClient(self.spec.base_url or OPENAI_URL, {"Authorization": f"Bearer {self.api_key or 'unused'}"},
                          self.spec.max_concurrency, "x-request-id")

    def endpoint(self) -> str:
        return "/v1/chat/completions" if self.spec.mode == "chat" else "/v1/completions"

    def body(self, s: Sample) -> dict[str, Any]:
        """Request body for one sample (shared by the live and the Batch API path), in the endpoint's dialect:
        its budget field, `seed` only where the endpoint takes one, thinking fields via `sampling_extra`."""
        body: dict[str, Any] = {"model": self.spec.model_id, self.dialect.token_field: s.max_tokens,
                                "temperature": s.temperature, "top_p": s.top_p, "n": 1, **self.spec.sampling_extra}
        if s.seed is not None and self.dialect.seed:
            body["seed"] = s.seed
        if self.spec.mode == "chat":
            body["messages"] = s.message_list
        else:
            body["prompt"] = s.prompt
        return body

    def generate(self, samples: list[Sample], on_result: OnResult) -> None:
        if self.spec.use_batch_api and len(samples) >= self.spec.batch_min_requests:
            from mirage.generate.providers.openai_batch import run_batch

            run_batch(self, samples, on_result)
            return
        path, spec = self.endpoint().removeprefix("/v1"), self.spec

        async def call(client: HttpClient, s: Sample) -> Result:
            rid = None
            try:
                reply = data = None
                if self.streaming:
                    body = {**self.body(s), "stream": True, "stream_options": {"include_usage": True}}
                    try:
                        reply = await client.post_sse(path, body, spec.queue_timeout_s, spec.timeout_s,
                                                      reply_cap(s.max_tokens))
                        data = reply.data or assemble(reply.events, spec.mode, reply.done, reply.request_id)
                    except StreamCut as exc:
                        self.stop_streaming(f"it cut a streamed reply short ({exc.error})")
                        reply = data = None
                    if data is not None and data.get("choices") and not data.get("usage"):
                        self.stop_streaming("its stream carried no usage (token counts)")
                        reply = data = None
                if reply is None:
                    reply = await client.post_json(path, self.body(s), spec.timeout_s, reply_cap(s.max_tokens))
                    data = reply.data
            except Failed as exc:
                return Result.failure(exc.error, request_id=exc.request_id, cause=exc.cause)
            except check.Malformed as exc:
                return Result.failure(f"malformed response: {exc}", request_id=rid)
            result = parse_response(data, request_id=reply.request_id, max_tokens=s.max_tokens)
            result.queue_s, result.generation_s = reply.queue_s, reply.generation_s
            return self.check_served(self.noted(result))

        run_bounded(samples, self.http, call, on_result, spec.max_concurrency, spec.requests_per_minute,
                    spec.max_retries, spec.adaptive_concurrency)


def assemble(events: list[dict[str, Any]], mode: str, done: bool = True, request_id: str | None = None) -> dict[str, Any]:
    """The chat or text completion JSON that streamed `events` (chunks) add up to, as a plain request returns it.
    A stream that ended before `data: [DONE]` was cut off (`StreamCut`: worth another try, then a plain request).
    One that ended properly without a finish_reason is malformed (as a plain reply without choices); so is a chunk
    whose fields have the wrong types (check.Malformed)."""
    if not done:
        raise StreamCut("malformed response: the stream ended before [DONE]", request_id=request_id, cause="server")
    data: dict[str, Any] = {"id": None, "system_fingerprint": None, "usage": None, "model": None}
    text, reasoning, refusal, finish = [], [], [], None
    for n, ev in enumerate(events):
        where = f"chunk {n}"
        for name in ("id", "system_fingerprint", "model"):
            data[name] = data[name] or check.string(ev, name, where)
        data["usage"] = ev.get("usage") or data["usage"]
        for i, choice in enumerate(check.array(ev.get("choices") or [], f"{where}.choices")):
            choice = check.obj(choice, f"{where}.choices[{i}]")
            if choice.get("index", 0) != 0:
                continue
            delta = check.obj(choice.get("delta"), f"{where}.choices[{i}].delta", optional=True)
            text.append(check.string(delta, "content", f"{where}.delta") or check.string(choice, "text", where) or "")
            reasoning.append(check.string(delta, "reasoning_content", f"{where}.delta")
                             or check.string(delta, "reasoning", f"{where}.delta") or "")
            refusal.append(check.string(delta, "refusal", f"{where}.delta") or "")
            finish = check.string(choice, "finish_reason", f"{where}.choices[{i}]") or finish
    if finish is None:
        data["choices"] = []
    elif mode == "chat":
        message = {"content": "".join(text) or None, "reasoning_content": "".join(reasoning) or None,
                   "refusal": "".join(refusal) or None}
        data["choices"] = [{"finish_reason": finish, "message": message}]
    else:
        data["choices"] = [{"finish_reason": finish, "text": "".join(text)}]
    return data


def dumps_line(obj: dict) -> str:
    return json.dumps(obj, ensure_ascii=False, sort_keys=True)
