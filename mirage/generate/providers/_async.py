"""Shared asyncio driver for API providers: bounded concurrency and a client-side request rate limit."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable
from typing import Any

from mirage.generate.providers.base import OnResult, Result, Sample


class RateLimiter:
    """Spaces request starts to at most `per_minute` per minute (None = unlimited)."""

    def __init__(self, per_minute: int | None) -> None:
        self.interval = 60.0 / per_minute if per_minute else 0.0
        self._next = 0.0
        self._lock = asyncio.Lock()

    async def wait(self) -> None:
        if not self.interval:
            return
        async with self._lock:
            now = time.monotonic()
            delay = max(0.0, self._next - now)
            self._next = max(now, self._next) + self.interval
        if delay:
            await asyncio.sleep(delay)


def run_bounded(samples: list[Sample], make_client: Callable[[], Any], call: Callable[[Any, Sample], Awaitable[Result]],
                on_result: OnResult, concurrency: int, per_minute: int | None) -> None:
    """Run `call(client, sample)` for every sample with at most `concurrency` in flight; report results as they
    finish. The async client is created and closed inside the event loop."""

    async def main() -> None:
        client = make_client()
        sem = asyncio.Semaphore(concurrency)
        limiter = RateLimiter(per_minute)

        async def one(s: Sample) -> None:
            async with sem:
                await limiter.wait()
                start = time.perf_counter()
                try:
                    result = await call(client, s)
                except Exception as exc:  # noqa: BLE001 - any failure is recorded, the key stays missing
                    result = Result.failure(f"{type(exc).__name__}: {exc}", time.perf_counter() - start)
                on_result(s, result)

        try:
            await asyncio.gather(*(one(s) for s in samples))
        finally:
            await client.close()

    asyncio.run(main())
