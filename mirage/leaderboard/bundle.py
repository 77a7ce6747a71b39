"""Submission bundles: the raw completions of one model on one split, the labels and metrics computed
from them, and a manifest that pins everything needed to recompute those (docs/leaderboard.md).

A bundle is a folder or a .tar.gz of it holding exactly the files its manifest lists:
manifest.json, completions.jsonl, labels.jsonl, metrics.csv and optionally report.html.
"""

from __future__ import annotations

import hashlib
import io
import os
import re
import shutil
import stat
import tarfile
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from mirage import untrusted
from mirage.hashing import content_hash
from mirage.io import DataError
from mirage.limits import MB, LimitsParams
from mirage.names import ModelName, check_judge

SCHEMA = "mirage-submission/1"
MANIFEST = "manifest.json"
COMPLETIONS = "completions.jsonl"
LABELS = "labels.jsonl"
METRICS = "metrics.csv"
REPORT = "report.html"
REQUIRED_FILES = (COMPLETIONS, LABELS, METRICS)
ALLOWED_FILES = (*REQUIRED_FILES, REPORT)
SPLITS: tuple[str, ...] = ("test", "lite", "demo")
CONDITIONS: tuple[str, ...] = ("C1", "C2", "C3")
UNPINNED = re.compile(r"^(|REPLACE_WITH_.*|latest|main|None)$")
# Columns of a completion row (a generation view row, docs/artefacts.md).
COMPLETION_FIELDS: tuple[str, ...] = (
    "row_id", "request_id", "prompt_id", "base_id", "template", "harness", "identity", "focal", "language", "condition",
    "rag_pool", "mitigation", "lite", "split", "key", "model", "provider", "model_id", "revision", "sample_index", "seed",
    "text", "reasoning", "answer", "finish_reason", "error",
)


class BundleError(DataError):
    """A malformed or tampered bundle; the message names the file, line and field at fault."""


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", allow_inf_nan=False)


class ModelSpec(_Strict):
    provider: str = Field(min_length=1)
    model_id: str = Field(min_length=1)
    revision: str
    mode: str = "chat"
    dtype: str | None = None
    quantization: str | None = None
    gguf_file: str | None = None

    @field_validator("revision")
    @classmethod
    def _pinned(cls, v: str) -> str:
        if UNPINNED.match(v):
            raise ValueError(f"revision {v!r} is not pinned (a commit sha, file hash or dated API version is needed)")
        return v


class Settings(_Strict):
    n_samples: int = Field(ge=1)
    max_tokens: dict[str, int]
    temperature: float
    top_p: float
    seed: int


class JudgeInfo(_Strict):
    """The pinned judge: name, settings, and its evaluation by `mirage judge eval` when one was made: `gold` (n,
    overall and invariance over every evaluated set), `heldout` (the held-out realistic split: overall, per language,
    condition and shape; mirage.judges.eval.quality) and `sets` (the scores of each named gold set)."""

    name: str = Field(min_length=1)
    params: dict[str, Any]
    gold: dict[str, Any] | None = None
    heldout: dict[str, Any] | None = None
    sets: dict[str, Any] | None = None

    @field_validator("name")
    @classmethod
    def _judge_name(cls, v: str) -> str:
        try:
            check_judge(v, "judge")
        except DataError as exc:
            raise ValueError(str(exc)) from None
        return v

    @field_validator("heldout", "sets")
    @classmethod
    def _figures(cls, v: dict | None, info) -> dict | None:
        from mirage.judges.eval import quality

        check = quality.check_block if info.field_name == "heldout" else quality.check_sets
        try:
            return None if v is None else check(v, info.field_name)
        except DataError as exc:
            raise ValueError(str(exc)) from None


class FileEntry(_Strict):
    sha256: str = Field(pattern=r"^[0-9a-f]{64}$")
    bytes: int = Field(ge=0)


class Manifest(_Strict):
    """manifest.json of a bundle; every field is required unless it has a default."""

    schema_: Literal["mirage-submission/1"] = Field(alias="schema")
    model: ModelName
    split: Literal["test", "lite", "demo"]
    model_spec: ModelSpec
    settings: Settings
    code_version: str
    params_hash: str
    split_hash: str
    n_requests: int = Field(ge=1)
    n_completions: int = Field(ge=1)
    judge: JudgeInfo
    statistics: dict[str, Any]
    headline: dict[str, dict[str, Any]]
    files: dict[str, FileEntry]
    created: str

    @field_validator("created")
    @classmethod
    def _timestamp(cls, v: str) -> str:
        if v and not re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ", v):
            raise ValueError(f"{v[:40]!r} is not a UTC timestamp YYYY-MM-DDTHH:MM:SSZ (or empty)")
        return v

    model_config = ConfigDict(extra="forbid", populate_by_name=True, allow_inf_nan=False)

    def dump(self) -> dict:
        return self.model_dump(mode="json", by_alias=True)



def split_hash(requests: dict[str, dict]) -> str:
    """Hash of a split's request set: every (row id, request id) pair, so any added, dropped or edited request changes it."""
    return "s" + content_hash(sorted([rid, r["request_id"]] for rid, r in requests.items()), length=32)


def parse_manifest(raw: Any, where: str) -> Manifest:
    if not isinstance(raw, dict):
        raise BundleError(f"{where}: expected a JSON object, got {type(raw).__name__}")
    try:
        return Manifest.model_validate(raw)
    except ValidationError as exc:
        err = exc.errors()[0]
        field = ".".join(str(x)[:60] for x in err["loc"]) or "(top level)"
        more = f" (+{exc.error_count() - 1} more)" if exc.error_count() > 1 else ""
        raise BundleError(f"{where}: field {field}: {err['msg'].removeprefix('Value error, ')}{more}") from None


def manifest_from(data: bytes, limits: LimitsParams) -> Manifest:
    """The manifest from its bytes: strict JSON (no duplicate keys, bounded depth and numbers), then the schema."""
    return parse_manifest(untrusted.loads(data, MANIFEST, limits), MANIFEST)


def _extract(archive: Path, dest: Path, limits: LimitsParams) -> Path:
    """Extract a .tar.gz bundle into `dest`, never writing more than its manifest declares.

    Pass 1 streams the archive (bounded by limits.bundle_mb decompressed, limits.archive_members members, plain
    files with safe names only) and reads the manifest; pass 2 extracts only the files the manifest lists, each
    exactly its declared size. So extraction takes at most the declared size on disk, whatever the archive holds."""
    manifest: bytes | None = None
    files: dict[str, int] = {}
    tops: set[str] = set()
    flat = False
    for m, tar in untrusted.tar_stream(archive, limits):
        parts = m.name.rstrip("/").split("/")
        if m.isdir():
            if len(parts) > 1:
                raise BundleError(f"{archive}: member {m.name[:100]!r} is a folder inside the bundle")
            tops.add(parts[0])
            continue
        if len(parts) == 2:
            tops.add(parts[0])
        else:
            flat = True
        name = parts[-1]
        if name in files:
            raise BundleError(f"{archive}: member {m.name[:100]!r} appears twice")
        files[name] = m.size
        if name == MANIFEST:
            cap = limits.manifest_kb * 1024
            if m.size > cap:
                raise untrusted.too_big(MANIFEST, m.size, cap, "manifest", "manifest_kb")
            manifest = tar.extractfile(m).read(cap + 1)
    if len(tops) > 1 or (tops and flat):
        raise BundleError(f"{archive}: files in more than one folder ({', '.join(sorted(tops))[:200]})")
    if manifest is None:
        raise BundleError(f"{MANIFEST}: missing (every bundle starts with its manifest)")
    m = manifest_from(manifest, limits)
    _check_declared(m, limits)
    for name, size in sorted(files.items()):
        if name == MANIFEST:
            continue
        if name not in m.files:
            raise BundleError(f"{name}: file not listed in the manifest (unhashed content)")
        if size != m.files[name].bytes:
            raise BundleError(f"{name}: content does not match the manifest's SHA-256 and size ({size} bytes, manifest "
                              f"says {m.files[name].bytes}; truncated or edited)")
    for m_, tar in untrusted.tar_stream(archive, limits):
        if m_.isdir():
            continue
        src = tar.extractfile(m_)
        fd = os.open(dest / m_.name.split("/")[-1], os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o600)
        with os.fdopen(fd, "wb") as out:
            left = m_.size
            while left and (chunk := src.read(min(left, untrusted.CHUNK))):
                out.write(chunk)
                left -= len(chunk)
    return dest


def _check_declared(m: Manifest, limits: LimitsParams) -> None:
    cap = limits.bundle_mb * MB
    declared = sum(e.bytes for e in m.files.values())
    if declared > cap:
        raise BundleError(f"{MANIFEST}: field files: {declared:,} bytes declared, more than the {cap:,} a bundle may "
                          "have (limits.bundle_mb)")


def read_layout(folder: Path, limits: LimitsParams) -> tuple[Manifest, str]:
    """Check a bundle folder: a plain manifest within its limit that fits the schema, exactly the files it lists
    (plain files: no links, folders, FIFOs or devices), each of its declared size and SHA-256 (streamed).
    Returns the manifest and the SHA-256 of its bytes."""
    modes: dict[str, int] = {}
    with os.scandir(folder) as entries:
        for entry in entries:
            if len(modes) >= limits.archive_members:
                raise BundleError(f"{folder}: more than {limits.archive_members} entries (limits.archive_members)")
            modes[entry.name] = entry.stat(follow_symlinks=False).st_mode
    if MANIFEST not in modes:
        raise BundleError(f"{MANIFEST}: missing (every bundle starts with its manifest)")
    data = untrusted.read_bytes(folder / MANIFEST, "manifest", limits.manifest_kb * 1024, "manifest_kb",
                                follow_links=False, where=MANIFEST)
    m = manifest_from(data, limits)
    for name, mode in sorted(modes.items()):
        if stat.S_ISLNK(mode):
            raise BundleError(f"{name}: a link; bundles hold plain files only")
    for name, mode in sorted(modes.items()):
        if stat.S_ISDIR(mode):
            raise BundleError(f"{name}: unexpected folder in the bundle")
        if not stat.S_ISREG(mode):
            raise BundleError(f"{name}: {untrusted._kind(mode)}, not a regular file; bundles hold plain files only")
    for name in sorted(set(m.files) - set(ALLOWED_FILES)):
        raise BundleError(f"{MANIFEST}: field files.{name}: not a bundle file (allowed: {', '.join(ALLOWED_FILES)})")
    for name in REQUIRED_FILES:
        if name not in m.files:
            raise BundleError(f"{MANIFEST}: field files: {name} is not listed")
    present = set(modes) - {MANIFEST}
    for name in sorted(present - set(m.files)):
        raise BundleError(f"{name}: file not listed in the manifest (unhashed content)")
    _check_declared(m, limits)
    for name, entry in sorted(m.files.items()):
        if name not in present:
            raise BundleError(f"{name}: listed in the manifest but missing from the bundle")
        size = os.lstat(folder / name).st_size
        digest = None
        if size == entry.bytes:
            digest, size = untrusted.sha256(folder / name, "bundle file", entry.bytes, "bundle_mb", where=name)
        if size != entry.bytes:
            raise BundleError(f"{name}: content does not match the manifest's SHA-256 and size ({size} bytes, manifest says "
                              f"{entry.bytes}; truncated or edited)")
        if digest != entry.sha256:
            raise BundleError(f"{name}: content does not match the manifest's SHA-256 (same size; edited)")
    return m, hashlib.sha256(data).hexdigest()


def rows(folder: Path, name: str, m: Manifest, limits: LimitsParams) -> Iterator[tuple[int, dict]]:
    """(line, row) of a bundle's JSONL file, streamed and parsed strictly (bounded lines, no duplicate keys)."""
    return untrusted.iter_jsonl(folder / name, "bundle file", limits, name=name, max_bytes=m.files[name].bytes,
                                size_key="bundle_mb")


@contextmanager
def opened(bundle: str | Path, limits: LimitsParams):
    """The bundle's folder: a folder is read in place; a .tar.gz is extracted (see `_extract`) to a temporary
    folder, removed afterwards."""
    path = Path(bundle)
    if path.is_dir():
        yield path
        return
    if not path.exists() and not path.is_symlink():
        raise BundleError(f"{path}: no such bundle (a folder or a .tar.gz)")
    tmp = Path(tempfile.mkdtemp(prefix="mirage-bundle-"))
    try:
        yield _extract(path, tmp, limits)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


class _GzipWriter(io.RawIOBase):
    """Streams gzip (zlib's own header, as `gzip.compress(..., mtime=0)` writes it: same bytes for the same input)."""

    def __init__(self, out) -> None:  # noqa: ANN001 - a binary file
        import zlib

        self.out, self.z = out, zlib.compressobj(9, zlib.DEFLATED, 31)

    def writable(self) -> bool:
        return True

    def write(self, b) -> int:  # noqa: ANN001 - io's signature
        self.out.write(self.z.compress(bytes(b)))
        return len(b)

    def finish(self) -> None:
        self.out.write(self.z.flush())


def pack(folder: Path, out: Path, names: list[str] | None = None) -> None:
    """Write `names` (default: every file) of `folder` as a reproducible .tar.gz (sorted names, zero mtimes) at
    `out`, atomically, streamed (never the whole bundle in memory)."""
    from mirage.io import atomic_write

    top = out.name.removesuffix(".tar.gz")
    with atomic_write(out, "wb") as fh:
        gz = _GzipWriter(fh)
        with tarfile.open(fileobj=gz, mode="w|", format=tarfile.PAX_FORMAT) as tar:
            for name in sorted(names if names is not None else (p.name for p in folder.iterdir())):
                path = folder / name
                info = tarfile.TarInfo(f"{top}/{name}")
                info.size, info.mtime, info.mode = path.stat().st_size, 0, 0o644
                with open(path, "rb") as src:
                    tar.addfile(info, src)
        gz.finish()
