"""Content hashes: stable across machines, Python versions and dict ordering."""

from __future__ import annotations

import hashlib
from typing import Any

from mirage.io import dumps


def content_hash(obj: Any, length: int = 16) -> str:
    """Hex SHA-256 of the canonical JSON of `obj`, truncated to `length` hex characters."""
    return hashlib.sha256(dumps(obj).encode("utf-8")).hexdigest()[:length]


def rank_key(*parts: Any) -> str:
    """Deterministic sort key for seeded, platform-independent orderings (sampling without RNG state)."""
    return hashlib.sha256("\x1f".join(map(str, parts)).encode("utf-8")).hexdigest()
