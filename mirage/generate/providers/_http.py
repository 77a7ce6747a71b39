"""Lean JSON-over-HTTP client for the live API paths: one aiohttp session whose keep-alive pool is sized to the
concurrency, one attempt per call (the driver in `_async` retries), failures classified as retryable or final.

A plain call (`post_json`) has one deadline, `timeout_s`, for the whole exchange. A streamed call (`post_sse`,
server-sent events) may wait `queue_timeout_s` for its first event (the server's queue and prefill); `timeout_s`
then counts from that event, so time spent queued at a busy server is never mistaken for a hung generation.
The official SDKs cost ~1 ms CPU a request in their typed layers and httpx shim (benchmarks/bench_api.py).
"""

from __future__ import annotations

import asyncio
import json
import time
from dataclasses import dataclass, field
from typing import Any

from mirage.generate.providers._async import Retryable
from mirage.secrets import redact

try:
    from asyncio import timeout as deadline_after  # Python >= 3.11
except ImportError:  # Python 3.10: the backport aiohttp itself depends on there
    from async_timeout import timeout as deadline_after

#: An error body is read up to ERROR_BODY_BYTES, redacted, then cut to ERROR_CHARS characters.
ERROR_BODY_BYTES, ERROR_CHARS = 1 << 20, 300
#: Statuses worth retrying (as the official SDKs do): request timeout, conflict, rate limit, server errors.
RETRY_STATUS = frozenset({408, 409, 429})


class StreamCut(Retryable):
    """A streamed reply that broke off after the server began it (a chunked body cut short, no `[DONE]`)."""


class Failed(Exception):
    """A final failure (not worth retrying), e.g. HTTP 400."""

    def __init__(self, error: str, request_id: str | None = None) -> None:
        super().__init__(error)
        self.error, self.request_id = error, request_id


@dataclass
class Reply:
    """One answered request: the JSON body (plain call) or the parsed events (streamed call), and its timing."""

    request_id: str | None
    data: dict[str, Any] | None = None
    events: list[dict[str, Any]] = field(default_factory=list)
    done: bool = False  # the stream ended with `data: [DONE]`
    queue_s: float | None = None
    generation_s: float | None = None


class HttpClient:
    """POSTs JSON to `base_url` + path with fixed `headers`; `request_id_header` names the server's request id."""

    def __init__(self, base_url: str, headers: dict[str, str], connections: int, request_id_header: str) -> None:
        import aiohttp

        self.base = base_url.rstrip("/")
        self.rid = request_id_header
        self.session = aiohttp.ClientSession(
            headers={"Content-Type": "application/json", "Accept": "application/json", **headers},
            connector=aiohttp.TCPConnector(limit=connections, limit_per_host=connections, ttl_dns_cache=300),
            timeout=aiohttp.ClientTimeout(total=None), skip_auto_headers=("User-Agent",))

    async def close(self) -> None:
        await self.session.close()

    async def post_json(self, path: str, body: dict[str, Any], timeout_s: float) -> Reply:
        """One plain request; the reply's JSON object is `data`."""
        try:
            async with deadline_after(timeout_s):
                async with self.session.post(self.base + path, data=json.dumps(body).encode()) as resp:
                    status, headers, raw = resp.status, resp.headers, await resp.read()
        except asyncio.TimeoutError:
            raise Retryable(f"timeout: no answer within {timeout_s:g} s", timeout=True) from None
        except _client_errors() as exc:
            raise Retryable(f"{type(exc).__name__}: {exc}") from None
        rid = headers.get(self.rid)
        if status >= 400:
            raise _status_error(status, headers, raw, rid)
        return Reply(rid, data=_object(raw, rid))

    async def post_sse(self, path: str, body: dict[str, Any], queue_timeout_s: float, timeout_s: float) -> Reply:
        """One streamed request: `events` are the JSON payloads of its `data:` lines up to `[DONE]`."""
        loop = asyncio.get_running_loop()
        start, first, rid, done, began = loop.time(), None, None, False, False
        events: list[dict[str, Any]] = []
        try:
            async with deadline_after(queue_timeout_s) as deadline:
                async with self.session.post(self.base + path, data=json.dumps(body).encode(),
                                             headers={"Accept": "text/event-stream"}) as resp:
                    rid = resp.headers.get(self.rid)
                    if resp.status >= 400:
                        raise _status_error(resp.status, resp.headers, await resp.read(), rid)
                    if resp.content_type == "application/json":  # a server that does not stream answered in one
                        return Reply(rid, data=_object(await resp.read(), rid))
                    buf, began = b"", True
                    async for chunk in resp.content.iter_any():  # read to the end: the connection stays reusable
                        *lines, buf = (buf + chunk).split(b"\n")
                        for line in lines:
                            if done or not line.startswith(b"data:"):
                                continue  # comments, `event:` and `id:` lines, blank separators
                            payload = line[5:].strip()
                            if payload == b"[DONE]":
                                done = True
                                continue
                            if first is None:
                                first = loop.time()
                                deadline.reschedule(first + timeout_s)
                            events.append(_event(payload, rid))
        except asyncio.TimeoutError:
            where = f"no first token within {queue_timeout_s:g} s" if first is None else \
                f"generation not finished within {timeout_s:g} s of the first token"
            raise Retryable(f"timeout: {where}", timeout=True, request_id=rid) from None
        except _client_errors() as exc:
            raise (StreamCut if began else Retryable)(f"{type(exc).__name__}: {exc}", request_id=rid) from None
        end = loop.time()
        return Reply(rid, events=events, done=done, queue_s=(first or end) - start, generation_s=end - (first or end))


def _object(raw: bytes, rid: str | None) -> dict[str, Any]:
    """A JSON object body; a cut or garbled one is transport trouble, worth another try."""
    try:
        data = json.loads(raw)
    except ValueError as exc:
        raise Retryable(f"malformed response: {exc}", request_id=rid) from None
    if not isinstance(data, dict):
        raise Retryable("malformed response: not a JSON object", request_id=rid)
    return data


def _event(payload: bytes, rid: str | None) -> dict[str, Any]:
    data = _object(payload, rid)
    if data.get("error"):  # an error reported mid-stream (vLLM, llama.cpp): the generation broke off
        raise Retryable(f"stream error: {_message(data)}", request_id=rid)
    return data


def _client_errors() -> tuple[type[BaseException], ...]:
    import aiohttp

    return aiohttp.ClientError, OSError


def _status_error(status: int, headers: Any, raw: bytes, rid: str | None) -> Exception:
    """`HTTP {status}: {message}`: retryable for 408/409/429/5xx (with the server's Retry-After), else final. The
    message is redacted whole (mirage.secrets) before it is cut to ERROR_CHARS: a cut never splits a key."""
    try:
        message = _message(json.loads(raw))
    except ValueError:
        message = raw[:ERROR_BODY_BYTES].decode("utf-8", "replace").strip()
    error = f"HTTP {status}: {redact(message)[:ERROR_CHARS]}"
    if status in RETRY_STATUS or status >= 500:
        return Retryable(error, after=retry_after(headers), request_id=rid)
    return Failed(error, rid)


def _message(data: Any) -> str:
    """The human part of an error body: {"error": {"message": ...}} (OpenAI, Anthropic) or the body itself."""
    err = data.get("error") if isinstance(data, dict) else None
    if isinstance(err, dict) and isinstance(err.get("message"), str):
        return err["message"]
    if isinstance(err, str):
        return err
    return json.dumps(data, ensure_ascii=False)


def retry_after(headers: Any) -> float | None:
    """Seconds the server asks to wait: `retry-after-ms`, else `retry-after` (seconds or an HTTP date)."""
    try:
        if "retry-after-ms" in headers:
            return float(headers["retry-after-ms"]) / 1000
        value = headers.get("retry-after")
        if value is None:
            return None
        try:
            return float(value)
        except ValueError:
            from email.utils import parsedate_to_datetime

            return parsedate_to_datetime(value).timestamp() - time.time()
    except (ValueError, TypeError):
        return None
