"""Provenance recorded next to outputs: a code version that depends on the code's content only."""

from __future__ import annotations

import hashlib
from functools import lru_cache
from pathlib import Path

from mirage import __version__


@lru_cache(maxsize=1)
def code_version() -> str:
    """`<package version>+<hash of the mirage/ sources>`: identical wherever the same code runs
    (a fresh clone, a later commit that leaves the code alone), unlike a git commit id."""
    root = Path(__file__).resolve().parent
    h = hashlib.sha256()
    for path in sorted(root.rglob("*")):
        if path.is_file() and path.suffix in (".py", ".j2") and "__pycache__" not in path.parts:
            h.update(path.relative_to(root).as_posix().encode())
            h.update(path.read_bytes())
    return f"{__version__}+src.{h.hexdigest()[:10]}"
