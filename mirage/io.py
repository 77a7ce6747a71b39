"""Atomic file writes and JSONL reading/writing with errors that name the file and line."""

from __future__ import annotations

import contextlib
import json
import os
import tempfile
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import IO, Any


class DataError(ValueError):
    """Bad input data; the message names the file, line and field at fault."""


@contextlib.contextmanager
def atomic_write(path: str | os.PathLike, mode: str = "w", encoding: str | None = "utf-8") -> Iterator[IO]:
    """Write to a temp file in the target directory and rename it over `path` on success.

    On any exception the temp file is removed and `path` is left untouched.
    """
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, mode, encoding=None if "b" in mode else encoding) as fh:
            yield fh
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp)
        raise


def dumps(row: Any) -> str:
    """Canonical one-line JSON (sorted keys, UTF-8 kept)."""
    return json.dumps(row, ensure_ascii=False, sort_keys=True, separators=(",", ":"))


def write_jsonl(path: str | os.PathLike, rows: Iterable[dict]) -> int:
    """Atomically write `rows` as JSON Lines; returns the number of rows."""
    n = 0
    with atomic_write(path) as fh:
        for row in rows:
            fh.write(dumps(row) + "\n")
            n += 1
    return n


def read_jsonl(path: str | os.PathLike, required: Iterable[str] = ()) -> Iterator[dict]:
    """Yield rows of a JSONL file; malformed lines or missing fields raise DataError naming file:line."""
    required = tuple(required)
    with open(path, encoding="utf-8") as fh:
        for lineno, line in enumerate(fh, 1):
            if not line.strip():
                continue
            try:
                row = json.loads(line)
            except json.JSONDecodeError as exc:
                raise DataError(f"{path}:{lineno}: not valid JSON ({exc.msg} at column {exc.colno})") from None
            if not isinstance(row, dict):
                raise DataError(f"{path}:{lineno}: expected a JSON object, got {type(row).__name__}")
            missing = [k for k in required if k not in row]
            if missing:
                raise DataError(f"{path}:{lineno}: missing field(s) {', '.join(missing)}")
            yield row


def write_json(path: str | os.PathLike, obj: Any) -> None:
    """Atomically write pretty, key-sorted JSON."""
    with atomic_write(path) as fh:
        json.dump(obj, fh, ensure_ascii=False, indent=2, sort_keys=True)
        fh.write("\n")
