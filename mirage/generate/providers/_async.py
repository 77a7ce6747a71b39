"""Shared asyncio driver for API providers: adaptive bounded concurrency, retries with backoff, a request rate limit.

A call makes one attempt; an attempt worth repeating raises `Retryable`. The driver then frees the call's slot,
waits (the server's Retry-After, else exponential backoff with jitter) and queues the call again, so retries
never hold a slot. The in-flight limit adapts (AIMD): a timed-out attempt halves it, once per reduction (attempts
started before the last cut do not cut again); `limit` successes in a row raise it by one, never above the
configured maximum. A server that queues requests (one slot, many clients) is thereby not flooded with retries.
"""

from __future__ import annotations

import asyncio
import random
import time
from collections import deque
from collections.abc import Awaitable, Callable
from typing import Any

from mirage.generate.providers.base import OnResult, Result, Sample

BACKOFF_S, BACKOFF_MAX_S, RETRY_AFTER_MAX_S = 0.5, 8.0, 60.0


class Retryable(Exception):
    """A failed attempt worth repeating: `after` = seconds the server asked to wait, `timeout` = the server
    did not answer in time (a congestion signal for the adaptive limit), `cause` = why, once retries are spent
    (`base.OUTAGES`)."""

    def __init__(self, error: str, after: float | None = None, timeout: bool = False,
                 request_id: str | None = None, cause: str = "server") -> None:
        super().__init__(error)
        self.error, self.after, self.timeout, self.request_id, self.cause = error, after, timeout, request_id, cause


def backoff_s(retry: int, after: float | None) -> float:
    """Seconds before retry number `retry` (0-based): the server's Retry-After when sane, else jittered doubling."""
    if after is not None and 0 <= after <= RETRY_AFTER_MAX_S:
        return after
    return min(BACKOFF_S * 2**retry, BACKOFF_MAX_S) * (1 - 0.25 * random.random())


class AdaptiveLimit:
    """At most `limit` holders; AIMD on timeouts when `adaptive` (see the module doc)."""

    def __init__(self, maximum: int, adaptive: bool = True) -> None:
        self.maximum = self.limit = maximum
        self.adaptive = adaptive
        self.in_flight = 0
        self.cuts = 0
        self._ok = 0
        self._waiters: deque[asyncio.Future] = deque()

    async def acquire(self) -> int:
        """Wait for a slot; returns the number of cuts so far (pass it back to `release`)."""
        if self.in_flight < self.limit and not self._waiters:
            self.in_flight += 1
            return self.cuts
        fut = asyncio.get_running_loop().create_future()
        self._waiters.append(fut)
        try:
            await fut  # the releaser hands its slot over (in_flight already counts us)
        except asyncio.CancelledError:
            if fut.done() and not fut.cancelled():
                self._free()
            raise
        return self.cuts

    def release(self, cuts: int, timed_out: bool) -> None:
        if timed_out:
            if self.adaptive and cuts == self.cuts:
                self.limit, self.cuts, self._ok = max(1, self.limit // 2), self.cuts + 1, 0
        else:
            self._ok += 1
            if self._ok >= self.limit and self.limit < self.maximum:
                self.limit, self._ok = self.limit + 1, 0
        self._free()

    def _free(self) -> None:
        self.in_flight -= 1
        while self._waiters and self.in_flight < self.limit:
            fut = self._waiters.popleft()
            if not fut.done():
                self.in_flight += 1
                fut.set_result(None)


class RateLimiter:
    """Spaces request starts to at most `per_minute` per minute (None = unlimited)."""

    def __init__(self, per_minute: int | None) -> None:
        self.interval = 60.0 / per_minute if per_minute else 0.0
        self._next = 0.0

    async def wait(self) -> None:
        if not self.interval:
            return
        now = time.monotonic()
        delay = max(0.0, self._next - now)
        self._next = max(now, self._next) + self.interval
        if delay:
            await asyncio.sleep(delay)


def run_bounded(samples: list[Sample], make_client: Callable[[], Any], call: Callable[[Any, Sample], Awaitable[Result]],
                on_result: OnResult, concurrency: int, per_minute: int | None, max_retries: int = 0,
                adaptive: bool = True) -> None:
    """Run `call(client, sample)` for every sample with at most `concurrency` in flight, retrying `Retryable`
    attempts up to `max_retries` times; report results as they finish. The async client is created and closed
    inside the event loop (its `close` is awaited).

    Only what the server or the network did is a failed attempt (`Retryable` exhausted, or a final answer such as
    HTTP 400 that `call` returns as a failed Result). An outage (`Result.outage`: a refused key, an empty account,
    a server that stays down) stops the run: no call is started after the first one, calls in flight finish
    without further retries, and the calls never finished are not reported at all (they stay pending). A local
    failure (disk full while `on_result` stores a result, out of memory, a bug) is no attempt of the model's: no
    call is started after it, the calls in flight finish on the open session (their results are still offered to
    `on_result`), and then it is raised."""

    async def main() -> None:
        client = make_client()
        limit = AdaptiveLimit(concurrency, adaptive)
        limiter = RateLimiter(per_minute)
        local: list[BaseException] = []
        stopped: list[Result] = []

        async def one(s: Sample) -> None:
            start = None
            for retry in range(max_retries + 1):
                cuts = await limit.acquire()
                timed_out = False
                try:
                    if local or stopped:
                        return
                    await limiter.wait()
                    start = start or time.perf_counter()
                    result = await call(client, s)
                except Retryable as exc:
                    timed_out, last, result = exc.timeout, exc, None
                except Exception as exc:  # noqa: BLE001 - local: not the model's failure, nothing is recorded
                    local.append(exc)
                    return
                finally:
                    limit.release(cuts, timed_out)
                if result is not None:
                    break
                if retry < max_retries and not local and not stopped:
                    await asyncio.sleep(backoff_s(retry, last.after))
                if local or stopped:
                    return
            else:
                result = Result.failure(last.error, request_id=last.request_id, cause=last.cause)
            result.latency_s = time.perf_counter() - start  # from the first attempt on: retries and backoff included
            if result.outage:
                stopped.append(result)
            try:
                on_result(s, result)
            except Exception as exc:  # noqa: BLE001 - e.g. disk full: stop starting calls, let the others land
                local.append(exc)

        try:
            await asyncio.gather(*(one(s) for s in samples))
        finally:
            await client.close()
        if local:
            raise local[0]

    asyncio.run(main())
