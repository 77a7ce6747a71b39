"""Rank intervals and indistinguishable groups on the board: the engine on entries whose truth is known, and the
real verify -> build path (verify keeps each ranked claim's per-prompt values in the entry)."""

from __future__ import annotations

import copy
import json

import numpy as np
from click.testing import CliRunner

from mirage.cli import cli
from mirage.leaderboard.ranks import RANKED, STATS, rank_claim, units_of
from mirage.metrics.stats import UnitValues


def _entry_units(rng, shift: float, n: int = 120) -> UnitValues:
    strata, frames = np.repeat(["T1", "T2"], n // 2), np.repeat(np.arange(n // 5), 5).astype(str)
    shared = np.repeat(np.random.default_rng(0).normal(0, 0.2, n // 5), 5)  # prompt effects all entries share
    x = shared + shift + rng.normal(0, 0.1, n)
    return UnitValues(strata, frames, np.arange(n).astype(str), x[:, None], STATS[1])


def test_rank_intervals_and_groups_follow_the_truth():
    rng = np.random.default_rng(5)
    units = {"high": _entry_units(rng, 0.15), "a": _entry_units(rng, 0.0), "b": _entry_units(rng, 0.0),
             "low": _entry_units(rng, -0.15)}
    units["b"] = UnitValues(*(getattr(units["b"], k)[10:] for k in ("strata", "frames", "ids", "x")), STATS[1])
    r = rank_claim("dV/C1", units)
    assert r["high"]["rank_low"] == r["high"]["rank_high"] == 1 and r["high"]["group"] == "A"
    assert r["low"]["rank_low"] == r["low"]["rank_high"] == 4 and r["low"]["group"] == "C"
    assert r["a"]["group"] == r["b"]["group"] == "B" and {r["a"]["rank_low"], r["b"]["rank_low"]} == {2}
    assert r["a"]["rank_high"] == r["b"]["rank_high"] == 3  # two identical entries: neither is ranked above the other
    assert all(v["n"] == 110 and v["of"] == 4 for v in r.values())  # the prompts every entry has
    assert rank_claim("dV/C1", {"high": units["high"]}) == {}


def test_units_of_refuses_malformed_entries():
    assert units_of(None) is None and units_of({"x": [[1.0]], "strata": ["a"], "frames": ["f"], "ids": ["1"]}) is None
    assert units_of({"x": [[1, 2]] * 3, "strata": ["a"] * 3, "frames": ["f"] * 3, "ids": ["1", "2", "3"]}) is None
    assert units_of({"x": [[0.1]] * 3, "strata": ["a"] * 3, "frames": ["f"] * 3, "ids": ["1", "2", "3"]}) is not None


def test_verified_entries_are_ranked_on_the_board(run, tmp_path):
    board = tmp_path / "board"
    result = CliRunner().invoke(cli, ["leaderboard", "verify", str(run["bundle"]), "--params", str(run["params"]),
                                      "--board", str(board), "--requests-dir", str(run["root"] / "requests")])
    assert result.exit_code == 0, result.output
    real = json.loads((board / "entries" / "smollm2-135m--test.json").read_text(encoding="utf-8"))
    assert set(real["units"]) <= set(RANKED) and "dV/C1" in real["units"]
    base = units_of(real["units"]["dV/C1"])
    assert base is not None and len(base.x) == real["manifest"]["headline"]["dV/C1"]["n"]
    # the tiny run has too few frames for any paired test to reject: the three entries get 120 prompts each
    rng = np.random.default_rng(8)
    for model, shift in (("smollm2-135m", 0.0), ("model-high", 0.3), ("model-same", 0.0)):
        e = copy.deepcopy(real)
        e["id"], e["manifest"]["model"] = f"{model}--test", model
        u = _entry_units(rng, shift)
        e["units"]["dV/C1"] = {"strata": u.strata.tolist(), "frames": u.frames.tolist(), "ids": u.ids.tolist(),
                               "x": u.x.tolist()}
        (board / "entries" / f"{e['id']}.json").write_text(json.dumps(e), encoding="utf-8")
    result = CliRunner().invoke(cli, ["leaderboard", "build", "--board", str(board)])
    assert result.exit_code == 0, result.output
    doc = json.loads((board / "leaderboard.json").read_text(encoding="utf-8"))
    dv = doc["ranks"]["by_split"]["test"]["dV/C1"]
    assert dv["model-high--test"]["rank_low"] == 1 and dv["model-high--test"]["group"] == "A"
    assert dv["model-same--test"]["group"] == dv["smollm2-135m--test"]["group"] != "A"
    page = (board / "index.html").read_text(encoding="utf-8")
    assert "rank 1 of 3 · group A" in page and "not a ranking" in page
