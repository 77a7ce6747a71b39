"""One tiny real run of the embedded model on the held-out test split (private folder in tmp), and its
bundle made by the real `mirage leaderboard submit`; shared by the leaderboard tests of a session."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))
import tiny  # noqa: E402


@pytest.fixture(scope="session")
def run(tmp_path_factory) -> dict:
    root = tmp_path_factory.mktemp("leaderboard-run")
    params = tiny.make_run(root)
    bundle = root / "bundle.tar.gz"
    out = tiny.invoke("leaderboard", "submit", "--model", tiny.MODEL, "--split", "test", "--params", str(params),
                      "--out", str(bundle), *tiny.run_paths(root))
    return {"root": root, "params": params, "bundle": bundle, "submit_output": out}
