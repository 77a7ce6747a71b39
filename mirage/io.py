"""Atomic file writes and JSONL reading/writing with errors that name the file and line."""

from __future__ import annotations

import contextlib
import json
import os
import tempfile
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import IO, Any

from mirage.errors import DataError

#: Longest line `read_jsonl` reads (a pipeline artefact's row); a longer one is an error, never a memory blow-up.
MAX_LINE_BYTES = 64 << 20


def _read_umask() -> int:
    """The process umask, read without changing it where /proc allows (umask() itself is not thread-safe)."""
    with contextlib.suppress(OSError, ValueError):
        for line in Path("/proc/self/status").read_text().splitlines():
            if line.startswith("Umask:"):
                return int(line.split()[1], 8)
    old = os.umask(0o022)
    os.umask(old)
    return old


def file_mode() -> int:
    """Mode a newly created file gets under the current umask (0644 under umask 022), as `open()` would give."""
    return 0o666 & ~_read_umask()


def _decode_error(path: str | os.PathLike, data: bytes, exc: UnicodeDecodeError) -> DataError:
    line = data.count(b"\n", 0, exc.start) + 1
    col = exc.start - (data.rfind(b"\n", 0, exc.start) + 1) + 1
    return DataError(f"{path}:{line}: not valid UTF-8 (byte 0x{data[exc.start]:02x} at column {col}); save the file as UTF-8")


def read_text(path: str | os.PathLike, what: str = "file") -> str:
    """A UTF-8 text file; missing, empty or non-UTF-8 files raise DataError naming the file (and line)."""
    from mirage import untrusted

    fh, _ = untrusted.open_regular(path, what, 1 << 62, None)  # regular files only: a FIFO or device never hangs us
    with fh:
        data = fh.read()
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise _decode_error(path, data, exc) from None
    if not text.strip():
        raise DataError(f"{path}: {what} is empty")
    return text


def load_yaml(path: str | os.PathLike, what: str = "YAML file") -> Any:
    """Parse a UTF-8 YAML data file within the bounds of `mirage.untrusted` (size, aliases, depth, duplicate keys);
    empty, comment-only, non-UTF-8 or malformed files raise DataError with the line, and so does text that is not
    what it looks like (format characters, unnormalised text, mixed-script words: `mirage.textcheck`)."""
    from mirage import untrusted
    from mirage.textcheck import check_yaml

    text = untrusted.read_text(path, what)
    doc = untrusted.load_yaml(text, str(path))
    if doc is None:
        raise DataError(f"{path}: {what} has no content (only comments or blank lines)")
    check_yaml(text, str(path))
    return doc


@contextlib.contextmanager
def atomic_write(path: str | os.PathLike, mode: str = "w", encoding: str | None = "utf-8") -> Iterator[IO]:
    """Write to a temp file in the target directory and rename it over `path` on success.

    On any exception the temp file is removed and `path` is left untouched.
    """
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        os.fchmod(fd, file_mode())  # mkstemp creates 0600; give what open() would (0644 under umask 022)
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
    """Yield rows of a JSONL file; malformed or non-UTF-8 lines or missing fields raise DataError naming file:line."""
    for _, row in numbered_jsonl(path, required):
        yield row


def numbered_jsonl(path: str | os.PathLike, required: Iterable[str] = ()) -> Iterator[tuple[int, dict]]:
    """(line number, row) of every non-blank line of a JSONL file, validated as `read_jsonl` does."""
    for lineno, _, row in located_jsonl(path, required):
        yield lineno, row


def located_jsonl(path: str | os.PathLike, required: Iterable[str] = ()) -> Iterator[tuple[int, int, dict]]:
    """(line number, byte offset of the line, row) of every non-blank line, validated as `read_jsonl` does; the
    offset lets a reader come back for one row instead of holding every row in memory."""
    from mirage import untrusted

    required = tuple(required)
    fh, _ = untrusted.open_regular(path, "file", 1 << 62, None)  # regular files only: a FIFO or device never hangs us
    offset = 0
    with fh:
        for lineno, raw in untrusted.lines(fh, str(path), MAX_LINE_BYTES, None):
            at, offset = offset, offset + len(raw)
            try:
                line = raw.decode("utf-8")
            except UnicodeDecodeError as exc:
                col = exc.start + 1
                raise DataError(f"{path}:{lineno}: not valid UTF-8 (byte 0x{raw[exc.start]:02x} at column {col})") from None
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
            yield lineno, at, row


def write_json(path: str | os.PathLike, obj: Any) -> None:
    """Atomically write pretty, key-sorted JSON."""
    with atomic_write(path) as fh:
        json.dump(obj, fh, ensure_ascii=False, indent=2, sort_keys=True)
        fh.write("\n")
