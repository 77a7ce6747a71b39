"""Stratified splits over base prompts: the 15% `lite` split and the held-out `test` split.

Strata are templates, and harnesses within T5. Each stratum gets its proportional share, with
largest remainders (ties broken by hash) so the total is exact; a base prompt's identity and
language variants always share its split.
"""

from __future__ import annotations

import math
from collections import defaultdict

from mirage.hashing import rank_key


def stratum(row: dict) -> str:
    return row["harness"] or row["template"]


def proportional_quota(sizes: dict[str, int], fraction: float, seed: int, purpose: str) -> dict[str, int]:
    """Largest-remainder allocation of round(fraction * total) across strata."""
    total = round(fraction * sum(sizes.values()))
    exact = {s: fraction * n for s, n in sizes.items()}
    quota = {s: math.floor(x) for s, x in exact.items()}
    order = sorted(sizes, key=lambda s: (-(exact[s] - quota[s]), rank_key(seed, purpose, s)))
    for s in order[: total - sum(quota.values())]:
        quota[s] += 1
    return quota


def draw(bases_by_stratum: dict[str, list[str]], fraction: float, seed: int, purpose: str) -> set[str]:
    sizes = {s: len(b) for s, b in bases_by_stratum.items()}
    quota = proportional_quota(sizes, fraction, seed, purpose)
    chosen: set[str] = set()
    for s, bases in bases_by_stratum.items():
        chosen.update(sorted(bases, key=lambda b: rank_key(seed, purpose, b))[: quota[s]])
    return chosen


def assign_splits(rows: list[dict], lite_fraction: float, test_fraction: float, seed: int) -> None:
    """Set `lite` (bool) and `split` ('dev' | 'test') on every row, in place."""
    by_stratum: dict[str, list[str]] = defaultdict(list)
    for row in rows:
        if row["language"] == "en" and row["focal"]:
            by_stratum[stratum(row)].append(row["base_id"])
    lite = draw(by_stratum, lite_fraction, seed, "lite")
    test = draw(by_stratum, test_fraction, seed, "test")
    for row in rows:
        row["lite"] = row["base_id"] in lite
        row["split"] = "test" if row["base_id"] in test else "dev"
