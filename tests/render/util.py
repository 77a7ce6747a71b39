"""Helpers for the render tests: run the real CLI, read its output, write a params variant."""

from __future__ import annotations

import json
from pathlib import Path

import yaml
from click.testing import CliRunner

from mirage.render.cli import render

ROOT = Path(__file__).resolve().parents[2]


def run_render(*args: str) -> tuple[int, str]:
    result = CliRunner().invoke(render, list(args))
    return result.exit_code, result.output


def read_rows(out: Path) -> dict[str, list[dict]]:
    return {c: [json.loads(x) for x in (out / f"{c}.jsonl").read_text(encoding="utf-8").splitlines()] for c in ("C1", "C2", "C3")}


def write_params(path: Path, **render_overrides) -> Path:
    """params.yaml with the project's settings and `render` keys overridden (nested dicts merge)."""
    raw = yaml.safe_load((ROOT / "params.yaml").read_text(encoding="utf-8"))
    for key, value in render_overrides.items():
        if isinstance(value, dict):
            raw["render"][key].update(value)
        else:
            raw["render"][key] = value
    path.write_text(yaml.safe_dump(raw, allow_unicode=True), encoding="utf-8")
    return path
