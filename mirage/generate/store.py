"""Content-addressed, append-only completion store.

Each writer process appends to its own shard `{store}/{partition}/{host}-{pid}-{random}.jsonl` (the
partition is the slice, so each DVC stage owns its own folder), one JSON record
per line, flushed and fsynced per record, so a kill at any moment loses at most the line being
written. Readers union all shards, ignore a truncated last line, and return one record per key (a deterministic pick if two writers both finished it).
A record with `error` set is kept for the log but does not count as done: its key is retried.
"""

from __future__ import annotations

import json
import os
import socket
import uuid
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from mirage.hashing import content_hash
from mirage.io import DataError, dumps

SEED_MODULUS = 2**31 - 1


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


@dataclass
class Store:
    """One model's store folder. `done` maps key -> successful record; `failed` key -> last error record;
    `attempts` key -> number of failed calls recorded (the give-up rule counts them)."""

    root: Path
    partition: str | None = None
    done: dict[str, dict] = field(default_factory=dict)
    failed: dict[str, dict] = field(default_factory=dict)
    attempts: dict[str, int] = field(default_factory=dict)
    shard_of: dict[str, str] = field(default_factory=dict)
    _fh: Any = None
    _shard: str = ""

    @classmethod
    def open(cls, root: str | os.PathLike, partition: str | None = None) -> "Store":
        """Read every partition under `root`; new records go to `root/partition` (or `root`)."""
        store = cls(Path(root), partition)
        store.reload()
        return store

    def reload(self) -> None:
        self.done.clear()
        self.failed.clear()
        self.attempts.clear()
        self.shard_of.clear()
        if not self.root.exists():
            return
        shards = [*self.root.glob("*.jsonl"), *(p for p in self.root.glob("*/*.jsonl") if p.parent.name != "batches")]
        for shard in sorted(shards):
            rel = shard.relative_to(self.root).as_posix()
            for rec in _read_shard(shard):
                self._index(rec, rel)

    def _index(self, rec: dict, shard: str) -> None:
        key = rec["key"]
        if rec.get("error") is None:
            old = self.done.get(key)
            # Two concurrent writers may both finish a key: keep one, independent of shard order.
            if old is None or _order(rec) < _order(old):
                self.done[key] = rec
                self.shard_of[key] = shard
            self.failed.pop(key, None)
        else:
            self.attempts[key] = self.attempts.get(key, 0) + 1
            if key not in self.done:
                self.failed[key] = rec

    def append(self, rec: dict) -> None:
        """Durably append one record (own shard, flush + fsync) and index it."""
        if "key" not in rec:
            raise ValueError("store records need a 'key'")
        if self._fh is None:
            self.write_dir.mkdir(parents=True, exist_ok=True)
            name = f"{socket.gethostname()}-{os.getpid()}-{uuid.uuid4().hex[:8]}.jsonl"
            self._fh = open(self.write_dir / name, "a", encoding="utf-8")
            self._shard = (self.write_dir / name).relative_to(self.root).as_posix()
        self._fh.write(dumps(rec) + "\n")
        self._fh.flush()
        os.fsync(self._fh.fileno())
        self._index(rec, self._shard)

    @property
    def write_dir(self) -> Path:
        return self.root / self.partition if self.partition else self.root

    def close(self) -> None:
        if self._fh is not None:
            self._fh.close()
            self._fh = None

    def __enter__(self) -> "Store":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def _order(rec: dict) -> tuple[str, str]:
    """Earliest `created` first, then canonical JSON: a deterministic choice among duplicate successes."""
    return rec.get("created", ""), dumps(rec)


def _read_shard(path: Path) -> list[dict]:
    """Records of one shard; a final line without newline that does not parse is a killed write and is skipped."""
    data = path.read_text(encoding="utf-8")
    lines = data.split("\n")
    out = []
    for lineno, line in enumerate(lines, 1):
        if not line.strip():
            continue
        try:
            rec = json.loads(line)
        except json.JSONDecodeError as exc:
            if lineno == len(lines):  # no trailing newline: the write was cut off
                continue
            raise DataError(f"{path}:{lineno}: corrupt store record ({exc.msg})") from None
        if not isinstance(rec, dict) or "key" not in rec:
            raise DataError(f"{path}:{lineno}: store record without a 'key'")
        out.append(rec)
    return out
