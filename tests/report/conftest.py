"""Fixtures: a synthetic run on disk and the report built from it by the real CLI."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

sys.path.insert(0, str(Path(__file__).parent))
import synthetic  # noqa: E402

from mirage.report.cli import report  # noqa: E402


def run_report(root: Path, slice_name: str = "demo", judge_eval: bool = True, extra: tuple[str, ...] = ()) -> tuple[int, str]:
    params = root / "params.yaml"
    params.write_text(synthetic.params_yaml(root), encoding="utf-8")
    judge = root / "judge" / synthetic.JUDGE / "judge_eval.json"
    result = CliRunner().invoke(report, ["--slice", slice_name, "--params", str(params), *synthetic.report_args(root, slice_name),
                                         "--requests-dir", str(root / "requests"),
                                         "--judge-eval", str(judge if judge_eval else root / "nowhere.json"), *extra])
    return result.exit_code, result.output


@pytest.fixture(scope="session")
def built(tmp_path_factory) -> tuple[Path, list[dict]]:
    """A full synthetic run and its report (built once for the session)."""
    root = tmp_path_factory.mktemp("run")
    rows = synthetic.write_run(root)
    code, out = run_report(root)
    assert code == 0, out
    return root, rows
