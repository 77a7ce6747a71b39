"""Content hashes: stable across machines, Python versions and dict ordering."""

from __future__ import annotations

import hashlib
import os
from typing import Any

from mirage.io import dumps


def content_hash(obj: Any, length: int = 16) -> str:
    """Hex SHA-256 of the canonical JSON of `obj`, truncated to `length` hex characters."""
    return hashlib.sha256(dumps(obj).encode("utf-8")).hexdigest()[:length]


def rank_key(*parts: Any) -> str:
    """Deterministic sort key for seeded, platform-independent orderings (sampling without RNG state)."""
    return hashlib.sha256("\x1f".join(map(str, parts)).encode("utf-8")).hexdigest()


def file_sha256(path: str | os.PathLike) -> str:
    """Hex SHA-256 of a file's bytes, read in 1 MiB chunks."""
    h = hashlib.sha256()
    with open(path, "rb") as fh:
        for chunk in iter(lambda: fh.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()
