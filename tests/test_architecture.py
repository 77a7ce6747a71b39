"""The house rules of docs/ARCHITECTURE.md hold on the real package: no import circles at any folder level, and
every import runs down the layers (the contracts in pyproject.toml, checked by import-linter)."""

from __future__ import annotations

from pathlib import Path

import pytest
from importlinter.cli import lint_imports

tomllib = pytest.importorskip("tomllib", reason="reads pyproject.toml with Python >= 3.11's tomllib")

ROOT = Path(__file__).resolve().parents[1]


def test_contracts_hold(capsys):
    status = lint_imports(config_filename=str(ROOT / "pyproject.toml"), no_cache=True, no_logo=True)
    out = capsys.readouterr().out
    assert status == 0, out
    assert "2 kept, 0 broken" in out


def test_every_top_level_module_has_a_layer():
    """A new module or stage must be placed in the layers, or the contract would silently not see it."""
    config = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["tool"]["importlinter"]
    layers = next(c for c in config["contracts"] if c["type"] == "layers")["layers"]
    placed = {name.strip() for layer in layers for name in layer.replace(":", "|").split("|")}
    modules = {p.stem if p.is_file() else p.name for p in (ROOT / "mirage").iterdir()
               if (p.suffix == ".py" and p.stem != "__init__") or (p / "__init__.py").is_file()}
    assert modules == placed
