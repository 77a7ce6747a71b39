"""One source for every count (issue 35): the plan lines `mirage generate` prints per job add up to what the report
counts from the views it wrote (its counts table, Table 15) and so to the closing summary, with requests shared
between rows and two-call M4 samples in the mix."""

from __future__ import annotations

import re

import pandas as pd
from click.testing import CliRunner

from mirage.generate.cli import generate
from mirage.io import write_jsonl
from mirage.report import html
from mirage.report.data import GENERATION_FIELDS, generation_counts, load_jsonl_frame
from tests.generate.conftest import gen_paths, request_rows, write_params
from tests.generate.fake_server import FakeServer

PLAN = re.compile(r"(\d+) request rows -> (\d+) requests -> (\d+) samples -> (\d+) calls")


def test_console_plan_lines_add_up_to_the_reports_counts(tmp_path):
    printed = []
    with FakeServer() as srv:
        params = write_params(tmp_path / "params.yaml", {"fake": {
            "provider": "openai", "model_id": "fake-model", "revision": "fake-2025-01-01", "base_url": srv.url + "/v1",
            "max_concurrency": 2, "max_retries": 0, "timeout_s": 5}}, n_samples=2)
        for cond in ("C1", "C3"):
            write_jsonl(tmp_path / "requests" / f"{cond}.jsonl", request_rows(15, cond, m4_every=4 if cond == "C3" else 0,
                                                                              shared_every=3))
            res = CliRunner().invoke(generate, ["--model", "fake", "--slice", "full", "--condition", cond, "--params",
                                                str(params), *gen_paths(tmp_path, cond)])
            assert res.exit_code == 0, res.output
            printed.append([int(x) for x in PLAN.search(res.output).groups()])
    views = load_jsonl_frame(sorted((tmp_path / "gen" / "fake" / "full").rglob("*.jsonl")), ("key", "model", "condition"), keep=GENERATION_FIELDS)
    counts = generation_counts(views).set_index("condition")
    for cond, (rows, requests, samples, calls) in zip(("C1", "C3"), printed):
        assert counts.loc[cond, ["request rows", "requests", "samples", "calls"]].tolist() == [rows, requests, samples, calls]
        assert counts.loc[cond, "scored rows"] == rows * 2 == len(views[views["condition"] == cond])
    c1, c3 = printed
    assert c1[1] < c1[0] and c3[3] > c3[2]  # the fixture shares requests and has M4 samples: the counts differ
    (model, total), = html.counts(views, ["fake"])
    assert model == "fake" and total == {"request rows": c1[0] + c3[0], "requests": c1[1] + c3[1], "samples": c1[2] + c3[2],
                                         "calls": c1[3] + c3[3], "scored rows": 2 * (c1[0] + c3[0])}
    assert generation_counts(pd.DataFrame()).empty
