"""Progress that moves (issue 35): the bar counts the token budget, fills step by step during a local batch, and
its ETA comes from decoded tokens/s, never from seconds per call of a first batch. The real local provider feeds it;
threads follow the job's declared cores and OpenMP pools do not spin (checked in fresh processes)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time

import pytest

from mirage.config.generate import ModelSpec, default_models
from mirage.generate.progress import ConsoleProgress, duration
from mirage.generate.providers.base import Result, Sample

SPEC = ModelSpec(provider="openai", model_id="m", revision="r", base_url="http://127.0.0.1:1/v1")


def _sample(i: int, max_tokens: int = 10) -> Sample:
    return Sample(key=f"k{i}", sample_index=0, seed=i, max_tokens=max_tokens, temperature=0.7, top_p=1.0,
                  messages=({"role": "user", "content": f"Name {i + 1} fruits."},))


def test_a_local_batch_fills_the_bar_step_by_step_and_the_eta_comes_from_tokens_per_second(capsys):
    p = ConsoleProgress("m demo C1", total=8, done=0, spec=SPEC, max_tokens=10, refresh_s=0)
    assert p.rate() is None and p.eta_s() is None  # nothing decoded yet: no guess
    for _ in range(3):  # three decoding steps of a batch of 4 (the first carries the prefill)
        p.tokens(4)
    assert p.bar.n == 12 and p.calls_done == 0 and p.rate() > 0
    # 8 calls x 10 tokens of budget, 12 decoded by the batch in flight: 68 tokens left at the decoded rate
    assert p.eta_s() == pytest.approx(68 / p.rate(), rel=0.05)
    for i in range(4):  # the batch ends: each call stopped after 3 tokens, its unused budget counts now
        p(_sample(i), Result(text="t", tokens_out=3, tokens_in=5))
    assert p.bar.n == 40 and p.calls_done == 4
    # finished calls used 30 % of their budget: the 4 calls left will decode about 12 tokens
    assert p.eta_s() == pytest.approx(12 / p.rate(), rel=0.05)
    p.close()
    err = capsys.readouterr().err
    assert "tok budget" in err and "calls=4/8" in err and "ETA=" in err


def test_api_results_fill_the_bar_by_budget_and_failures_do_not():
    p = ConsoleProgress("m", total=3, done=1, spec=SPEC, max_tokens=16, refresh_s=0)
    assert p.bar.n == 16 and p.bar.total == 48
    p(_sample(1, 16), Result(text="a", tokens_out=4))
    p(_sample(2, 16), Result.failure("HTTP 500: boom"))
    assert (p.bar.n, p.calls_done, p.errors) == (32, 2, 1) and p.rate() > 0
    p.close()


@pytest.mark.parametrize("seconds,text", [(0, "0s"), (44.6, "45s"), (725, "12m05s"), (12_000, "3h20m"),
                                          (187_200, "2d04h"), (-3, "0s")])
def test_durations_read_at_a_glance(seconds, text):
    assert duration(seconds) == text


def _threads(env: dict[str, str]) -> dict:
    code = ("import json, os, torch; from mirage.hf import cpu_threads; n = cpu_threads(); "
            "print(json.dumps({'n': n, 'torch': torch.get_num_threads(), 'policy': os.environ.get('OMP_WAIT_POLICY')}))")
    base = {k: v for k, v in os.environ.items() if k not in ("OMP_NUM_THREADS", "OMP_WAIT_POLICY")}
    out = subprocess.run([sys.executable, "-c", code], env={**base, **env}, capture_output=True, text=True, check=True)
    return json.loads(out.stdout)


def test_threads_follow_the_declared_cores_and_pools_do_not_spin():
    assert _threads({"OMP_NUM_THREADS": "1"}) == {"n": 1, "torch": 1, "policy": "PASSIVE"}  # as Snakemake declares
    assert _threads({"OMP_WAIT_POLICY": "ACTIVE"})["policy"] == "ACTIVE"  # a user's own choice is kept
    assert _threads({})["n"] >= 1


def test_a_job_never_takes_more_threads_than_the_machine_leaves_idle():
    """Two declared threads beside a busy loop on every core: one thread (two would wait for each other)."""
    from mirage.hf import idle_cores

    assert 0 <= idle_cores() <= (os.cpu_count() or 1) + 0.01
    burners = [subprocess.Popen([sys.executable, "-c", "while True: pass"]) for _ in range(os.cpu_count() or 1)]
    try:
        time.sleep(0.5)
        assert _threads({"OMP_NUM_THREADS": "2"})["n"] == 1
    finally:
        for b in burners:
            b.kill()


@pytest.mark.slow
def test_the_real_local_provider_moves_the_bar_before_its_batch_ends():
    from mirage.generate.providers.local import LocalProvider

    p = LocalProvider("smollm2-135m", default_models()["smollm2-135m"])
    progress = ConsoleProgress("smollm2", total=4, done=0, spec=p.spec, max_tokens=12, refresh_s=0)
    seen: list[tuple[int, int]] = []  # (bar position, calls done) at every step
    p.on_tokens = lambda n: (progress.tokens(n), seen.append((progress.bar.n, progress.calls_done)))
    p.generate([_sample(i, 12) for i in range(4)], progress)
    progress.close()
    assert len(seen) >= 3 and all(calls == 0 for _, calls in seen)  # every step came before any call finished
    assert [n for n, _ in seen] == sorted(n for n, _ in seen) and seen[-1][0] > seen[0][0]
    assert progress.bar.n == progress.bar.total == 48 and progress.calls_done == 4
