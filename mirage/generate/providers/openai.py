"""`openai` provider: the official SDK (AsyncOpenAI) for OpenAI and any OpenAI-compatible server.

Chat models get `/chat/completions`, completion-mode models `/completions`. The SDK retries 429s,
5xx, timeouts and connection errors with exponential backoff (`max_retries`); what still fails is
recorded as an error. `seed` is sent; `system_fingerprint` and the request id are recorded.
Live requests go through the SDK's aiohttp transport and its generic `post` with the body as built here,
parsed as plain JSON: the typed request/response layers cost ~1 ms CPU a request, which at high concurrency
made the client, not the server, the bottleneck (benchmarks/bench_api.py).
Jobs of at least `batch_min_requests` samples go through the Batch API when `use_batch_api` is set.
"""

from __future__ import annotations

import json
import time
from typing import Any

from mirage.config.generate import ModelSpec
from mirage.generate.providers._async import run_bounded
from mirage.generate.providers.base import OnResult, Provider, Result, Sample, normalise_finish


class OpenAIProvider(Provider):
    seeded = True

    def __init__(self, name: str, spec: ModelSpec) -> None:
        super().__init__(name, spec)
        self.api_key = self.api_key_from_env()

    def client(self, async_: bool = True) -> Any:
        import openai

        common = {"api_key": self.api_key or "unused", "base_url": self.spec.base_url,
                  "max_retries": self.spec.max_retries, "timeout": self.spec.timeout_s}
        if not async_:
            return openai.OpenAI(**common)
        return openai.AsyncOpenAI(**common, http_client=openai.DefaultAioHttpClient(timeout=self.spec.timeout_s))

    def endpoint(self) -> str:
        return "/v1/chat/completions" if self.spec.mode == "chat" else "/v1/completions"

    def body(self, s: Sample) -> dict[str, Any]:
        """Request body for one sample (shared by the live and the Batch API path)."""
        body: dict[str, Any] = {"model": self.spec.model_id, "max_tokens": s.max_tokens, "temperature": s.temperature,
                                "top_p": s.top_p, "n": 1, **self.spec.sampling_extra}
        if s.seed is not None:
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
        path = self.endpoint().removeprefix("/v1")

        async def call(client: Any, s: Sample) -> Result:
            import httpx
            import openai

            start = time.perf_counter()
            try:
                resp = await client.post(path, body=self.body(s), cast_to=httpx.Response)
                data = json.loads(await resp.aread())
            except openai.APIStatusError as exc:
                return Result.failure(f"HTTP {exc.status_code}: {exc.message}", time.perf_counter() - start,
                                      exc.response.headers.get("x-request-id"))
            except openai.APIError as exc:
                return Result.failure(f"{type(exc).__name__}: {exc}", time.perf_counter() - start)
            except ValueError as exc:
                return Result.failure(f"malformed response: {exc}", time.perf_counter() - start,
                                      resp.headers.get("x-request-id"))
            if not isinstance(data, dict):
                return Result.failure("malformed response: not a JSON object", time.perf_counter() - start)
            return parse_response(data, time.perf_counter() - start, resp.headers.get("x-request-id"))

        run_bounded(samples, self.client, call, on_result, self.spec.max_concurrency, self.spec.requests_per_minute)


def parse_response(data: dict[str, Any], latency_s: float = 0.0, request_id: str | None = None) -> Result:
    """Chat or text completion JSON -> Result; malformed bodies become errors, refusals `refusal`."""
    try:
        choice = data["choices"][0]
        usage = data.get("usage") or {}
        if "message" in choice:
            msg = choice["message"] or {}
            text = msg.get("content") or ""
            reasoning = msg.get("reasoning_content") or msg.get("reasoning")
            refusal = msg.get("refusal")
        else:
            text, reasoning, refusal = choice["text"], None, None
        if not isinstance(text, str):
            raise TypeError("content is not a string")
    except (KeyError, IndexError, TypeError) as exc:
        return Result.failure(f"malformed response: {type(exc).__name__}: {exc}", latency_s, request_id)
    finish = "refusal" if refusal else normalise_finish(choice.get("finish_reason"))
    return Result(text=text or (refusal or ""), reasoning=reasoning, finish_reason=finish,
                  tokens_in=int(usage.get("prompt_tokens") or 0), tokens_out=int(usage.get("completion_tokens") or 0),
                  latency_s=latency_s, provider_request_id=request_id or data.get("id"),
                  system_fingerprint=data.get("system_fingerprint"), extra={"response_id": data.get("id")})


def dumps_line(obj: dict) -> str:
    return json.dumps(obj, ensure_ascii=False, sort_keys=True)
