"""Content-addressed, append-only completion store.

Layout: each writer process appends to its own shard `{store}/{partition}/{host}-{pid}-{random}.jsonl` (the
partition is the slice, so each DVC stage owns its own folder), one canonical JSON record per line, and, after
each record, one line `{offset} {length} {d|e} {key}` to the shard's key index `{same name}.keys` (d = done,
e = error). Readers union all shards of all partitions and return one record per key (a deterministic pick if
two writers both finished it). A record with `error` set is kept for the log but does not count as done: its
key is retried.

Opening reads only the key indexes (about 60 bytes a record), then parses just the shard bytes past the last
indexed record; records themselves are read from disk when asked for. Shards without a `.keys` file (stores
written before the index existed) are read in full, so old stores stay readable.

Writers: one process at a time writes a partition's share of the keys (`Store.locked`, an exclusive `flock` on
`{partition}/.{name}.lock` taken before the store is read, so the holder plans from what is on disk and a waiting
process, once in, finds the holder's records and sends none of them). The kernel drops the lock when its process
dies, however it dies: a killed writer leaves no lock to clear by hand. The lock file stays, empty.

Attempts: a failed record uses up one of its key's attempts only when its `cause` is the model's
(`providers.base.COUNTED`); records written before causes existed count unless their error is an outage's
(a refused key, a quota, an unreachable or failing server: OUTAGE_ERROR), so samples lost to an old outage are sent
again.

Durability: every record is written with one `write(2)` before `append` returns, so a killed process
(`kill -9`, OOM, a preempted job) loses only the records still in flight. The OS is asked to flush to disk
(`fsync`, shard first, then its index) at most every `SYNC_INTERVAL_S` seconds and on `close()`, so a
machine crash or power cut can lose at most the last second of records; they are then regenerated, because
readers trust only what is on disk. A last line cut anywhere (a killed write, inside a multi-byte UTF-8
character too) is skipped; an index line that disagrees with its shard makes the reader fall back to the shard.
"""

from __future__ import annotations

import fcntl
import json
import os
import re
import socket
import time
import uuid
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from mirage.hashing import content_hash
from mirage.io import DataError, dumps

SEED_MODULUS = 2**31 - 1
SYNC_INTERVAL_S = 1.0
_SHARD_BITS = 24  # a record's location packs (offset, shard number) into one int: offset << 24 | shard
LOCK_POLL_S = 0.2
#: Errors of records without a `cause` that were outages, not answers of the model's.
OUTAGE_ERROR = re.compile(r"HTTP (40[1-4]|408|409|429|5\d\d)\b|timeout: |stream error: |[A-Za-z]*Error: ")


class StoreBusy(RuntimeError):
    """Another process held a store partition's writer lock for longer than the caller would wait."""


def sample_seed(root_seed: int, request_id: str, sample_index: int) -> int:
    """Per-sample seed from (root seed, request id, sample index): distinct across prompts and samples."""
    return int(content_hash([root_seed, request_id, sample_index], length=15), 16) % SEED_MODULUS


def sample_key(provider: str, model_id: str, revision: str | None, sent: dict[str, Any],
               output_params: dict[str, Any], sample_index: int, seed: int | None) -> str:
    """Store key: everything that changes the output, nothing operational (concurrency, retries, batch size)."""
    return "k" + content_hash({
        "provider": provider, "model_id": model_id, "revision": revision, "sent": sent,
        "params": output_params, "sample_index": sample_index, "seed": seed,
    }, length=32)


class Records(Mapping[str, dict]):
    """Read-only key -> record mapping; membership is in memory, records are read from their shard on access."""

    def __init__(self, store: "Store") -> None:
        self._store = store
        self._loc: dict[str, int] = {}

    def __getitem__(self, key: str) -> dict:
        return self._store._read(self._loc[key])

    def __contains__(self, key: object) -> bool:
        return key in self._loc

    def __iter__(self) -> Iterator[str]:
        return iter(self._loc)

    def __len__(self) -> int:
        return len(self._loc)


class Store:
    """One model's store folder. `done` maps key -> successful record; `failed` key -> last error record;
    `attempts` key -> failed calls recorded for it (the give-up rule counts them)."""

    def __init__(self, root: Path, partition: str | None = None) -> None:
        self.root, self.partition = Path(root), partition
        self.done, self.failed = Records(self), Records(self)
        self.attempts: dict[str, int] = {}
        self._shards: list[Path] = []
        self._readers: dict[int, Any] = {}
        self._fd: int | None = None
        self._fd_path = ""
        self._keys_fd: int | None = None
        self._shard_no = -1
        self._offset = 0
        self._synced = 0.0
        self._disk: dict[str, int] = {}

    @classmethod
    def open(cls, root: str | os.PathLike, partition: str | None = None) -> "Store":
        """Read every partition under `root`; new records go to `root/partition` (or `root`)."""
        store = cls(Path(root), partition)
        store.reload()
        return store

    def reload(self) -> None:
        self._close_readers()
        self.done._loc.clear()
        self.failed._loc.clear()
        self.attempts.clear()
        self._shards = []
        self._disk = self._others()  # before the scan: a record written meanwhile shows as a change later
        if not self.root.exists():
            return
        for shard in sorted(self._shard_files()):
            self._shards.append(shard)
            for offset, ok, key in _scan(shard):
                self._index(key, ok, offset << _SHARD_BITS | len(self._shards) - 1)
        if self._fd is not None:  # our own shard is among them: keep appending to it
            self._shard_no = self._shards.index(Path(self._fd_path))

    def _shard_files(self) -> list[Path]:
        return [*self.root.glob("*.jsonl"), *(p for p in self.root.glob("*/*.jsonl") if p.parent.name != "batches")]

    def _others(self) -> dict[str, int]:
        """Size of every shard on disk except this process's own: what other writers have written."""
        out = {}
        for p in self._shard_files() if self.root.exists() else ():
            if str(p) != self._fd_path:
                try:
                    out[str(p)] = p.stat().st_size
                except FileNotFoundError:
                    continue
        return out

    def _index(self, key: str, ok: bool, loc: int) -> None:
        done, failed = self.done._loc, self.failed._loc
        if ok:
            old = done.get(key)
            # Two concurrent writers may both finish a key: keep one, independent of shard order.
            if old is None or _order(self._read(loc)) < _order(self._read(old)):
                done[key] = loc
            failed.pop(key, None)
        else:
            if counts_as_attempt(self._read(loc)):
                self.attempts[key] = self.attempts.get(key, 0) + 1
            if key not in done:
                failed[key] = loc

    @contextmanager
    def locked(self, name: str, wait_s: float, on_wait: Callable[[str], None] | None = None) -> Iterator["Store"]:
        """Hold the writer lock `{partition}/.{name}.lock` (waiting up to `wait_s` seconds for another holder,
        telling `on_wait` once), then re-read the store if another process has written to it since it was read:
        what is owed is planned from what is on disk."""
        self.write_dir.mkdir(parents=True, exist_ok=True)
        path = self.write_dir / f".{name}.lock"
        fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
        try:
            deadline, told = time.monotonic() + wait_s, False
            while True:
                try:
                    fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                    break
                except BlockingIOError:
                    if time.monotonic() >= deadline:
                        raise StoreBusy(f"{path}: another process is writing this part of the store; waited {wait_s:g} s "
                                        "(generate.lock_wait_s); run again when it has finished") from None
                    if not told and on_wait is not None:
                        on_wait(f"waiting for {path}: another process is writing this part of the store")
                        told = True
                    time.sleep(LOCK_POLL_S)
            if self._others() != self._disk:  # another process wrote since we read: plan from the disk
                self.reload()
            yield self
        finally:
            os.close(fd)  # releases the lock

    def append(self, rec: dict) -> None:
        """Append one record to this process's shard (one write) and index it; see the module doc on durability."""
        key = rec.get("key")
        if not isinstance(key, str) or key.split() != [key]:  # non-empty, no whitespace
            raise ValueError("store records need a 'key' string without whitespace")
        if self._fd is None:
            self._start_shard()
        line = (dumps(rec) + "\n").encode("utf-8")
        ok = rec.get("error") is None
        offset = self._offset
        _write_all(self._fd, line, offset)
        _write_all(self._keys_fd, f"{offset} {len(line)} {'d' if ok else 'e'} {key}\n".encode(), None)
        self._offset += len(line)
        self._index(key, ok, offset << _SHARD_BITS | self._shard_no)
        if time.monotonic() - self._synced >= SYNC_INTERVAL_S:
            self.sync()

    def sync(self) -> None:
        """Flush this process's shard, then its index, to disk."""
        if self._fd is not None:
            os.fsync(self._fd)
            os.fsync(self._keys_fd)
        self._synced = time.monotonic()

    def _start_shard(self) -> None:
        self.write_dir.mkdir(parents=True, exist_ok=True)
        path = self.write_dir / f"{socket.gethostname()}-{os.getpid()}-{uuid.uuid4().hex[:8]}.jsonl"
        flags = os.O_WRONLY | os.O_CREAT | os.O_APPEND
        self._fd = os.open(path, flags, 0o644)
        self._keys_fd = os.open(path.with_suffix(".keys"), flags, 0o644)
        self._fd_path = str(path)
        self._shards.append(path)
        self._shard_no, self._offset, self._synced = len(self._shards) - 1, 0, time.monotonic()

    def _read(self, loc: int) -> dict:
        shard_no, offset = loc & ((1 << _SHARD_BITS) - 1), loc >> _SHARD_BITS
        fh = self._readers.get(shard_no)
        if fh is None:
            fh = self._readers[shard_no] = open(self._shards[shard_no], "rb")
        fh.seek(offset)
        return json.loads(fh.readline())

    def shard_of(self, key: str) -> str:
        """The shard (relative to the store root) holding the record `done[key]`."""
        return self._shards[self.done._loc[key] & ((1 << _SHARD_BITS) - 1)].relative_to(self.root).as_posix()

    @property
    def write_dir(self) -> Path:
        return self.root / self.partition if self.partition else self.root

    def _close_readers(self) -> None:
        for fh in self._readers.values():
            fh.close()
        self._readers.clear()

    def close(self) -> None:
        if self._fd is not None:
            self.sync()
            os.close(self._fd)
            os.close(self._keys_fd)
            self._fd = self._keys_fd = None
        self._close_readers()

    def __enter__(self) -> "Store":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __del__(self) -> None:
        self._close_readers()


def counts_as_attempt(rec: dict) -> bool:
    """Whether a failed record uses up an attempt (see the module doc)."""
    from mirage.generate.providers.base import COUNTED

    cause = rec.get("cause")
    if cause is not None:
        return cause in COUNTED
    return not OUTAGE_ERROR.match(str(rec.get("error") or ""))


def _write_all(fd: int, data: bytes, rollback_to: int | None) -> None:
    """Write all of `data`; on failure (disk full) cut the shard back to `rollback_to` so no torn line stays."""
    view = memoryview(data)
    try:
        while view:
            view = view[os.write(fd, view):]
    except BaseException:
        if rollback_to is not None:
            os.ftruncate(fd, rollback_to)
        raise


def _order(rec: dict) -> tuple[str, str]:
    """Earliest `created` first, then canonical JSON: a deterministic choice among duplicate successes."""
    return rec.get("created", ""), dumps(rec)


def _scan(shard: Path) -> list[tuple[int, bool, str]]:
    """(offset, done?, key) of every record of a shard: from its key index, then from the shard bytes past it."""
    keys = shard.with_suffix(".keys")
    indexed = _read_index(keys) if keys.exists() else None
    if indexed is None or (indexed[1] and not _ends_line(shard, indexed[1])):
        return _parse(shard, 0)  # no index (an older store), or one that disagrees with its shard (crash)
    entries, start = indexed
    return entries + _parse(shard, start)


def _read_index(path: Path) -> tuple[list[tuple[int, bool, str]], int] | None:
    """Complete lines of a key index and the shard offset they cover up to (a cut last line is ignored);
    None if the index is not a consistent run of records."""
    data = path.read_bytes()
    entries, end = [], 0
    try:
        for line in data[:data.rfind(b"\n") + 1].decode("utf-8").split("\n")[:-1]:
            offset, length, status, key = line.split(" ", 3)
            if int(offset) != end or status not in ("d", "e"):
                return None
            entries.append((end, status == "d", key))
            end += int(length)
    except ValueError:
        return None
    return entries, end


def _ends_line(shard: Path, offset: int) -> bool:
    with open(shard, "rb") as fh:
        fh.seek(offset - 1)
        return fh.read(1) == b"\n"


def _parse(shard: Path, start: int) -> list[tuple[int, bool, str]]:
    """Parse the shard from byte `start`; a final line without newline that does not parse is a killed write."""
    with open(shard, "rb") as fh:
        fh.seek(start)
        data = fh.read()
    out, offset = [], start
    lines = data.split(b"\n")
    for i, raw in enumerate(lines):
        here, offset = offset, offset + len(raw) + 1
        if not raw.strip():
            continue
        try:
            rec = json.loads(raw)
        except ValueError as exc:  # JSONDecodeError and UnicodeDecodeError
            if i == len(lines) - 1:  # no trailing newline: the write was cut off
                continue
            why = exc.msg if isinstance(exc, json.JSONDecodeError) else "not UTF-8"
            raise DataError(f"{shard}:{_lineno(shard, here)}: corrupt store record ({why})") from None
        if not isinstance(rec, dict) or not isinstance(rec.get("key"), str):
            raise DataError(f"{shard}:{_lineno(shard, here)}: store record without a 'key'")
        out.append((here, rec.get("error") is None, rec["key"]))
    return out


def _lineno(shard: Path, offset: int) -> int:
    """1-based line number of the line starting at byte `offset` (for error messages)."""
    with open(shard, "rb") as fh:
        return fh.read(offset).count(b"\n") + 1
