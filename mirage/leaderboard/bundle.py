"""Submission bundles: the raw completions of one model on one split, the labels and metrics computed
from them, and a manifest that pins everything needed to recompute those (docs/leaderboard.md).

A bundle is a folder or a .tar.gz of it holding exactly the files its manifest lists:
manifest.json, completions.jsonl, labels.jsonl, metrics.csv and optionally report.html.
"""

from __future__ import annotations

import io
import re
import shutil
import tarfile
import tempfile
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from mirage.hashing import content_hash
from mirage.io import DataError, read_jsonl

SCHEMA = "mirage-submission/1"
MANIFEST = "manifest.json"
COMPLETIONS = "completions.jsonl"
LABELS = "labels.jsonl"
METRICS = "metrics.csv"
REPORT = "report.html"
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
    model_config = ConfigDict(extra="forbid")


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
    name: str = Field(min_length=1)
    params: dict[str, Any]
    gold: dict[str, Any] | None = None


class FileEntry(_Strict):
    sha256: str = Field(pattern=r"^[0-9a-f]{64}$")
    bytes: int = Field(ge=0)


class Manifest(_Strict):
    """manifest.json of a bundle; every field is required unless it has a default."""

    schema_: Literal["mirage-submission/1"] = Field(alias="schema")
    model: str = Field(min_length=1, pattern=r"^[A-Za-z0-9][A-Za-z0-9._-]*$")
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

    model_config = ConfigDict(extra="forbid", populate_by_name=True)

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
        field = ".".join(str(x) for x in err["loc"]) or "(top level)"
        more = f" (+{exc.error_count() - 1} more)" if exc.error_count() > 1 else ""
        raise BundleError(f"{where}: field {field}: {err['msg']}{more}") from None


def read_rows(path: Path, name: str, required: tuple[str, ...] = ()) -> list[dict]:
    """JSONL rows of a bundle file; a bad line is a BundleError naming the file and line."""
    try:
        return list(read_jsonl(path, required=required))
    except DataError as exc:
        raise BundleError(str(exc).replace(str(path), name, 1)) from None
    except UnicodeDecodeError as exc:
        raise BundleError(f"{name}: not UTF-8 text ({exc.reason} at byte {exc.start})") from None


def _safe_extract(archive: Path, dest: Path) -> Path:
    """Extract a .tar.gz bundle (regular files only, no absolute or parent paths); returns its single top folder."""
    try:
        with tarfile.open(archive, "r:gz") as tar:
            members = tar.getmembers()
            for m in members:
                parts = Path(m.name).parts
                if m.name.startswith("/") or ".." in parts or not (m.isfile() or m.isdir()):
                    raise BundleError(f"{archive}: member {m.name!r} is not a plain file inside the bundle")
            tar.extractall(dest, filter="data")
    except (tarfile.TarError, EOFError, OSError, ValueError) as exc:
        if isinstance(exc, BundleError):
            raise
        raise BundleError(f"{archive}: not a readable .tar.gz bundle ({exc})") from None
    tops = [p for p in dest.iterdir()]
    if len(tops) == 1 and tops[0].is_dir():
        return tops[0]
    return dest


@contextmanager
def opened(bundle: str | Path):
    """The bundle's folder (a .tar.gz is extracted to a temporary folder, removed afterwards)."""
    path = Path(bundle)
    if path.is_dir():
        yield path
        return
    if not path.exists():
        raise BundleError(f"{path}: no such bundle (a folder or a .tar.gz)")
    tmp = Path(tempfile.mkdtemp(prefix="mirage-bundle-"))
    try:
        yield _safe_extract(path, tmp)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def pack(folder: Path, out: Path) -> None:
    """Write `folder` as a reproducible .tar.gz (sorted names, zero mtimes) at `out`, atomically."""
    import gzip

    from mirage.io import atomic_write

    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w", format=tarfile.PAX_FORMAT) as tar:
        for path in sorted(folder.iterdir()):
            info = tarfile.TarInfo(f"{out.name.removesuffix('.tar.gz')}/{path.name}")
            info.size, info.mtime, info.mode = path.stat().st_size, 0, 0o644
            with open(path, "rb") as fh:
                tar.addfile(info, fh)
    with atomic_write(out, "wb") as fh:
        fh.write(gzip.compress(buf.getvalue(), mtime=0))
