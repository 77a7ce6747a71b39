"""Queue-aware requests (issue 19 item 6): against a one-slot server with a short timeout and several requests in
flight, streaming (the timeout counts from the first token) keeps the tokens decoded within 10 % of the tokens
kept, and records time queued apart from time generating; plain requests with a fixed limit flood the server."""

from __future__ import annotations

import asyncio
from pathlib import Path

from mirage.config.generate import ModelSpec
from mirage.generate.providers._async import AdaptiveLimit
from mirage.generate.runner import GenerationRun, Settings
from mirage.generate.store import Store
from tests.generate.one_slot_server import OneSlotServer

N, TOKENS, TOKEN_S, TIMEOUT_S, CONCURRENCY = 12, 16, 0.005, 0.4, 8  # 8 queued x 80 ms > 0.4 s > 80 ms


def run_one_slot(root: Path, stream: bool, adaptive: bool, max_retries: int, retry_rounds: int) -> tuple[int, list[dict]]:
    """Tokens the server decoded and the records stored for N samples."""
    with OneSlotServer(TOKEN_S) as srv:
        spec = ModelSpec(provider="openai", model_id="slot", revision="slot-1", base_url=srv.url + "/v1",
                         max_concurrency=CONCURRENCY, timeout_s=TIMEOUT_S, max_retries=max_retries, stream=stream,
                         adaptive_concurrency=adaptive)
        rows = [{"row_id": f"q{i}", "request_id": f"r{i}", "condition": "C1",
                 "messages": [{"role": "user", "content": f"prompt {i}"}]} for i in range(N)]
        st = Settings(n_samples=1, max_tokens=TOKENS, temperature=0.7, top_p=1.0, root_seed=1)
        with Store.open(root) as store:
            run = GenerationRun("slot", spec, st, rows, store)
            run.run(retry_rounds=retry_rounds)
            run.close()
            srv.wait_idle()
            return srv.decoded, [store.done[k] for k in store.done]


def test_streamed_adaptive_requests_do_not_flood_a_one_slot_server(tmp_path):
    decoded, records = run_one_slot(tmp_path / "new", stream=True, adaptive=True, max_retries=3, retry_rounds=2)
    kept = sum(r["tokens_out"] for r in records)
    assert len(records) == N and kept == N * TOKENS  # every sample stored
    assert decoded <= 1.1 * kept
    for r in records:
        assert r["queue_s"] >= 0 and r["generation_s"] > 0
        assert abs(r["queue_s"] + r["generation_s"] - r["latency_s"]) < 0.05
    # queueing longer than the timeout was waited out: it counts from the first token
    assert max(r["queue_s"] for r in records) > TIMEOUT_S
    assert max(r["generation_s"] for r in records) < TIMEOUT_S

    # the old behaviour in the same setup: plain requests, fixed limit, timeout over queueing and generation
    decoded, records = run_one_slot(tmp_path / "old", stream=False, adaptive=False, max_retries=2, retry_rounds=0)
    kept = sum(r["tokens_out"] for r in records)
    assert decoded > 1.1 * kept
    assert all("queue_s" not in r for r in records)


def test_adaptive_limit_halves_once_per_cut_and_grows_back_to_the_maximum():
    async def scenario() -> list[int]:
        limit = AdaptiveLimit(8)
        held = [await limit.acquire() for _ in range(8)]
        waiter = asyncio.ensure_future(limit.acquire())
        await asyncio.sleep(0)
        seen = []
        for cuts in held[:3]:  # three timeouts of attempts started before any cut: one halving
            limit.release(cuts, timed_out=True)
            seen.append(limit.limit)
        assert not waiter.done() and limit.in_flight == 5  # over the new limit: nobody is let in
        for cuts in held[3:6]:
            limit.release(cuts, timed_out=False)
        await asyncio.sleep(0)
        assert waiter.done() and limit.in_flight == 3  # 2 held + the waiter, below the limit of 4
        for _ in range(40):  # successes: +1 per window of `limit` successes, capped at the maximum
            limit.release(await limit.acquire(), timed_out=False)
            seen.append(limit.limit)
        fixed = AdaptiveLimit(8, adaptive=False)
        fixed.release(await fixed.acquire(), timed_out=True)
        assert fixed.limit == 8 and fixed.in_flight == 0
        return seen

    seen = asyncio.run(scenario())
    assert seen[:3] == [4, 4, 4] and max(seen) == 8 and seen[-1] == 8
