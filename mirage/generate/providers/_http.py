"""Lean JSON-over-HTTP client for the live API paths: one aiohttp session whose keep-alive pool is sized to the
concurrency, one attempt per call (the driver in `_async` retries), failures classified by cause
(`base.COUNTED`, `base.OUTAGES`) as retryable or final.

A plain call (`post_json`) has one deadline, `timeout_s`, for the whole exchange. A streamed call (`post_sse`,
server-sent events) may wait `queue_timeout_s` for its first event (the server's queue and prefill); `timeout_s`
then counts from that event, so time spent queued at a busy server is never mistaken for a hung generation.
Only a deadline passed before the server sent anything is a congestion signal (it halves the adaptive in-flight
limit); a server that answers but drips its body is cut at the deadline without slowing the rest of the run.
A body is read at most `cap` bytes as sent and `cap` bytes decompressed (gzip and deflate are decoded here,
chunk by chunk, never more than asked for), so an oversized or bomb reply costs a bounded amount of memory.
The official SDKs cost ~1 ms CPU a request in their typed layers and httpx shim (benchmarks/bench_api.py).
"""

from __future__ import annotations

import asyncio
import json
import time
import zlib
from dataclasses import dataclass, field
from typing import Any

from mirage.generate.providers._async import Retryable
from mirage.generate.providers.base import printable
from mirage.secrets import redact

try:
    from asyncio import timeout as deadline_after  # Python >= 3.11
except ImportError:  # Python 3.10: the backport aiohttp itself depends on there
    from async_timeout import timeout as deadline_after

#: An error body is read up to ERROR_BODY_BYTES, redacted, then cut to ERROR_CHARS characters.
ERROR_BODY_BYTES, ERROR_CHARS = 1 << 20, 300
#: Statuses worth retrying (as the official SDKs do): request timeout, conflict, rate limit, server errors.
RETRY_STATUS = frozenset({408, 409, 429})
#: A reply body may hold REPLY_BASE_BYTES plus REPLY_BYTES_PER_TOKEN per token of max_tokens (a streamed token
#: costs one event of ~250 bytes), as sent and decompressed.
REPLY_BASE_BYTES, REPLY_BYTES_PER_TOKEN = 1 << 20, 1 << 10
REQUEST_ID_CHARS = 200
#: Error codes of a 429 that no retry can cure: the account is out of quota or credit.
QUOTA_CODES = frozenset({"insufficient_quota", "billing_hard_limit_reached", "billing_not_active"})


def reply_cap(max_tokens: int) -> int:
    """Bytes a reply for `max_tokens` new tokens may take (see REPLY_BASE_BYTES)."""
    return REPLY_BASE_BYTES + REPLY_BYTES_PER_TOKEN * max_tokens


class StreamCut(Retryable):
    """A streamed reply that broke off after the server began it (a chunked body cut short, no `[DONE]`)."""


class Failed(Exception):
    """A final failure (not worth retrying), e.g. HTTP 400; `cause` as in `base.COUNTED` / `base.OUTAGES`."""

    def __init__(self, error: str, request_id: str | None = None, cause: str = "request") -> None:
        super().__init__(error)
        self.error, self.request_id, self.cause = error, request_id, cause


class TooLarge(Failed):
    """A body over its cap: the reply is not what max_tokens allows (the model's call failed, not the server)."""

    def __init__(self, cap: int, request_id: str | None) -> None:
        super().__init__(f"malformed response: body over {cap:,} bytes (the cap for this call's max_tokens)",
                         request_id, "reply")


@dataclass
class Reply:
    """One answered request: the JSON body (plain call) or the parsed events (streamed call), and its timing."""

    request_id: str | None
    data: dict[str, Any] | None = None
    events: list[dict[str, Any]] = field(default_factory=list)
    done: bool = False  # the stream ended with `data: [DONE]`
    queue_s: float | None = None
    generation_s: float | None = None


class Body:
    """A capped reader of one response body: counts the bytes as sent and as decoded (gzip, deflate)."""

    def __init__(self, encoding: str, cap: int, rid: str | None) -> None:
        encoding = encoding.strip().lower()
        if encoding not in ("", "identity", "gzip", "x-gzip", "deflate"):
            raise Retryable(f"malformed response: unsupported Content-Encoding {encoding[:40]!r}", request_id=rid,
                            cause="server")
        self.cap, self.rid, self.sent, self.size = cap, rid, 0, 0
        wbits = {"gzip": 16 + zlib.MAX_WBITS, "x-gzip": 16 + zlib.MAX_WBITS, "deflate": zlib.MAX_WBITS}.get(encoding)
        self.z = zlib.decompressobj(wbits) if wbits else None

    def feed(self, chunk: bytes) -> bytes:
        """The decoded bytes of `chunk`; TooLarge past the cap, Retryable on a corrupt stream."""
        self.sent += len(chunk)
        if self.sent > self.cap:
            raise TooLarge(self.cap, self.rid)
        if self.z is None:
            out = chunk
        else:
            try:
                out = self.z.decompress(chunk, self.cap - self.size + 1)
                if self.z.unconsumed_tail:  # more than the cap is left in this chunk
                    raise TooLarge(self.cap, self.rid)
            except zlib.error as exc:
                raise Retryable(f"malformed response: corrupt compressed body ({exc})", request_id=self.rid,
                                cause="server") from None
        self.size += len(out)
        if self.size > self.cap:
            raise TooLarge(self.cap, self.rid)
        return out


async def read_capped(resp: Any, cap: int, rid: str | None) -> bytes:
    """The whole decoded body of `resp`, within `cap` bytes as sent and as decoded."""
    body = Body(resp.headers.get("Content-Encoding", ""), cap, rid)
    parts = []
    async for chunk in resp.content.iter_any():
        parts.append(body.feed(chunk))
    return b"".join(parts)


class HttpClient:
    """POSTs JSON to `base_url` + path with fixed `headers`; `request_id_header` names the server's request id."""

    def __init__(self, base_url: str, headers: dict[str, str], connections: int, request_id_header: str) -> None:
        import aiohttp

        self.base, _, self.query = base_url.partition("?")  # Azure's ?api-version= goes after the path
        self.base = self.base.rstrip("/")
        self.rid = request_id_header
        self.session = aiohttp.ClientSession(
            headers={"Content-Type": "application/json", "Accept": "application/json",
                     "Accept-Encoding": "gzip, deflate", **headers},
            connector=aiohttp.TCPConnector(limit=connections, limit_per_host=connections, ttl_dns_cache=300),
            timeout=aiohttp.ClientTimeout(total=None), skip_auto_headers=("User-Agent",), auto_decompress=False)

    async def close(self) -> None:
        await self.session.close()

    def url(self, path: str) -> str:
        """`base_url` + `path`, with the base's query string (if any) after the path."""
        return self.base + path + (f"?{self.query}" if self.query else "")

    async def post_json(self, path: str, body: dict[str, Any], timeout_s: float, cap: int) -> Reply:
        """One plain request; the reply's JSON object is `data` (at most `cap` bytes)."""
        answered, rid = False, None
        try:
            async with deadline_after(timeout_s):
                async with self.session.post(self.url(path), data=json.dumps(body).encode()) as resp:
                    answered, rid = True, _request_id(resp.headers.get(self.rid))
                    status, headers = resp.status, resp.headers
                    if status >= 400:
                        raise _status_error(status, headers, await _error_body(resp), rid)
                    raw = await read_capped(resp, cap, rid)
        except asyncio.TimeoutError:
            where = "the body was not complete" if answered else "no answer"
            raise Retryable(f"timeout: {where} within {timeout_s:g} s", timeout=not answered, request_id=rid,
                            cause="transport") from None
        except _client_errors() as exc:
            raise Retryable(f"{type(exc).__name__}: {exc}", request_id=rid, cause="transport") from None
        return Reply(rid, data=_object(raw, rid))

    async def post_sse(self, path: str, body: dict[str, Any], queue_timeout_s: float, timeout_s: float,
                       cap: int) -> Reply:
        """One streamed request: `events` are the JSON payloads of its `data:` lines up to `[DONE]` (the stream at
        most `cap` bytes)."""
        loop = asyncio.get_running_loop()
        start, first, rid, done, began = loop.time(), None, None, False, False
        events: list[dict[str, Any]] = []
        try:
            async with deadline_after(queue_timeout_s) as deadline:
                async with self.session.post(self.url(path), data=json.dumps(body).encode(),
                                             headers={"Accept": "text/event-stream"}) as resp:
                    rid = _request_id(resp.headers.get(self.rid))
                    if resp.status >= 400:
                        raise _status_error(resp.status, resp.headers, await _error_body(resp), rid)
                    if resp.content_type == "application/json":  # a server that does not stream answered in one
                        return Reply(rid, data=_object(await read_capped(resp, cap, rid), rid))
                    reader = Body(resp.headers.get("Content-Encoding", ""), cap, rid)
                    buf, began = b"", True
                    async for chunk in resp.content.iter_any():  # read to the end: the connection stays reusable
                        *lines, buf = (buf + reader.feed(chunk)).split(b"\n")
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
            # Only silence is congestion: a stream that started and then dripped does not cut the in-flight limit.
            raise Retryable(f"timeout: {where}", timeout=first is None, request_id=rid, cause="transport") from None
        except _client_errors() as exc:
            raise (StreamCut if began else Retryable)(f"{type(exc).__name__}: {exc}", request_id=rid,
                                                      cause="transport") from None
        end = loop.time()
        return Reply(rid, events=events, done=done, queue_s=(first or end) - start, generation_s=end - (first or end))


def _request_id(value: str | None) -> str | None:
    """The server's request id, made printable and cut to REQUEST_ID_CHARS (a header is the server's text too)."""
    return printable(value)[:REQUEST_ID_CHARS] if value else None


async def _error_body(resp: Any) -> bytes:
    """At most ERROR_BODY_BYTES of an error body (decoded): enough for its message."""
    try:
        return await read_capped(resp, ERROR_BODY_BYTES, None)
    except (Failed, Retryable):
        return b""


def _object(raw: bytes, rid: str | None) -> dict[str, Any]:
    """A JSON object body; a cut or garbled one (not UTF-8, not JSON, nested past recursion) is the server's
    trouble, worth another try, and no answer of the model's."""
    try:
        data = json.loads(raw)
    except (ValueError, RecursionError) as exc:
        why = "not UTF-8" if isinstance(exc, UnicodeDecodeError) else str(exc)[:100]
        raise Retryable(f"malformed response: {why}", request_id=rid, cause="server") from None
    if not isinstance(data, dict):
        raise Retryable("malformed response: not a JSON object", request_id=rid, cause="server")
    return data


def _event(payload: bytes, rid: str | None) -> dict[str, Any]:
    data = _object(payload, rid)
    if data.get("error"):  # an error reported mid-stream (vLLM, llama.cpp): the generation broke off
        raise Retryable(f"stream error: {redact(_message(data))[:ERROR_CHARS]}", request_id=rid, cause="server")
    return data


def _client_errors() -> tuple[type[BaseException], ...]:
    import aiohttp

    return aiohttp.ClientError, OSError


def _status_error(status: int, headers: Any, raw: bytes, rid: str | None) -> Exception:
    """`HTTP {status}: {message}` with its cause: 401/403 a refused key, 402 or a 429 with a quota code an empty
    account, 404 a wrong model or URL (final: no retry cures them, and none uses up an attempt); 408/409/5xx and
    other 429s retryable (with the server's Retry-After); other 4xx a final failure of this request; the server's
    `x-should-retry` overrides the status either way (`should_retry`). The message is
    redacted whole (mirage.secrets) before it is cut to ERROR_CHARS: a cut never splits a key."""
    try:
        data = json.loads(raw)
        message = _message(data)
    except (ValueError, RecursionError):
        data, message = None, raw[:ERROR_BODY_BYTES].decode("utf-8", "replace").strip()
    error = f"HTTP {status}: {redact(message)[:ERROR_CHARS]}"
    cause = status_cause(status, data)
    if should_retry(headers, cause in ("server", "rate_limit")):
        return Retryable(error, after=retry_after(headers), request_id=rid, cause=cause)
    return Failed(error, rid, cause)


def should_retry(headers: Any, by_status: bool) -> bool:
    """Whether to try an error again: the server's `x-should-retry: true|false` when it sends one (obeyed as the
    official OpenAI and Anthropic SDKs obey it, `_base_client._should_retry`: a `false` makes even a 429 or 5xx
    final), else `by_status` (408/409/429/5xx)."""
    value = str(headers.get("x-should-retry", "")).strip().lower()
    return {"true": True, "false": False}.get(value, by_status)


def status_cause(status: int, data: Any = None) -> str:
    """The cause (`base.COUNTED`, `base.OUTAGES`) of an HTTP error status with its parsed body `data`."""
    if status in (401, 403):
        return "auth"
    if status == 402 or status == 429 and _code(data) in QUOTA_CODES:
        return "quota"
    if status == 404:
        return "endpoint"
    if status == 429:
        return "rate_limit"
    return "server" if status in RETRY_STATUS or status >= 500 else "request"


def _code(data: Any) -> str | None:
    """The machine-readable code of an error body ({"error": {"code" or "type": ...}})."""
    err = data.get("error") if isinstance(data, dict) else None
    if isinstance(err, dict):
        for name in ("code", "type"):
            if isinstance(err.get(name), str) and err[name] in QUOTA_CODES:
                return err[name]
    return None


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
