"""One bounded reader for everything a stranger hands us: submission bundles, gold files, validation imports,
params files. Every read here is limited before it starts and while it streams (params `limits:`,
`mirage.limits`):

- regular files only: a FIFO, device, socket or folder is refused before a byte is read (opened non-blocking, so a
  FIFO cannot hang us); inside a bundle, links are refused too;
- sizes: the size on disk is checked before reading, and reads stop at the limit (a file that grows is caught);
- lines: JSONL and CSV rows are read one at a time, each at most `limits.line_kb`;
- JSON: nesting at most `limits.json_depth`, number literals at most `limits.json_number_chars` characters, no
  NaN or Infinity, and a key twice in one object is an error (two parsers would read two different values);
- YAML: at most YAML_MAX_ALIASES aliases and YAML_MAX_NODES nodes once aliases are expanded (an alias bomb is
  refused while it is still a few kilobytes), no key twice in a mapping, integers within `json_number_chars`;
- archives (.tar.gz): members are listed by streaming the archive before anything is extracted; only plain files
  with safe names, at most `limits.archive_members`, never more than `limits.bundle_mb` decompressed in all.

Every refusal is a DataError naming the file (and line), the limit and the params key that sets it.
"""

from __future__ import annotations

import errno
import hashlib
import io
import json
import os
import re
import stat
import tarfile
from collections.abc import Callable, Iterator
from pathlib import Path, PurePosixPath
from typing import IO, Any

from mirage.errors import DataError
from mirage.limits import MB, LimitsParams
from mirage.secrets import public

LIMITS = LimitsParams()
#: params.yaml itself is read before its `limits:` section exists: fixed limits.
PARAMS_MAX_BYTES = 4 * MB
YAML_MAX_ALIASES = 100
YAML_MAX_NODES = 200_000
YAML_MAX_DEPTH = 64
CHUNK = 1 << 20


def _kind(mode: int) -> str | None:
    """What a non-regular file is, in words (None for a regular file)."""
    for test, name in ((stat.S_ISREG, None), (stat.S_ISDIR, "a folder"), (stat.S_ISFIFO, "a FIFO"),
                       (stat.S_ISCHR, "a character device"), (stat.S_ISBLK, "a block device"),
                       (stat.S_ISSOCK, "a socket"), (stat.S_ISLNK, "a link")):
        if test(mode):
            return name
    return "not a regular file"


def too_big(where: str, size: int, limit: int, what: str, key: str | None) -> DataError:
    """`key` names the params setting of the limit (None: a fixed limit)."""
    return DataError(f"{where}: {size:,} bytes, more than the {limit:,} a {what} may have"
                     + (f" (limits.{key})" if key else ""))


def open_regular(path: str | os.PathLike, what: str, max_bytes: int, key: str | None, follow_links: bool = True,
                 where: str | None = None) -> tuple[IO[bytes], int]:
    """(binary file, size) of a regular file of at most `max_bytes`; anything else is a DataError naming `where`
    (default: the path)."""
    path = Path(path)
    where = where or str(path)
    flags = os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0) | (0 if follow_links else os.O_NOFOLLOW)
    try:
        fd = os.open(path, flags)
    except FileNotFoundError:
        raise DataError(f"{where}: {what} not found") from None
    except IsADirectoryError:
        raise DataError(f"{where}: expected a {what}, found a folder") from None
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            raise DataError(f"{where}: a link; a {what} must be a plain file") from None
        raise
    st = os.fstat(fd)
    kind = _kind(st.st_mode)
    if kind is not None:
        os.close(fd)
        raise DataError(f"{where}: {kind}, not a regular file; a {what} must be a plain file")
    if st.st_size > max_bytes:
        os.close(fd)
        raise too_big(where, st.st_size, max_bytes, what, key)
    os.set_blocking(fd, True)
    return os.fdopen(fd, "rb"), st.st_size


def read_bytes(path: str | os.PathLike, what: str, max_bytes: int, key: str | None, follow_links: bool = True,
               where: str | None = None) -> bytes:
    """All bytes of a regular file of at most `max_bytes` (also if it grows while being read)."""
    fh, _ = open_regular(path, what, max_bytes, key, follow_links, where)
    with fh:
        data = fh.read(max_bytes + 1)
    if len(data) > max_bytes:
        raise too_big(where or str(path), len(data), max_bytes, what, key)
    return data


def decode(data: bytes, where: str, first_line: int = 1) -> str:
    """UTF-8 text (`first_line`: the line number `data` starts at); an invalid byte is a DataError naming line
    and column."""
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = data.count(b"\n", 0, exc.start) + first_line
        col = exc.start - (data.rfind(b"\n", 0, exc.start) + 1) + 1
        raise DataError(f"{where}:{line}: not valid UTF-8 (byte 0x{data[exc.start]:02x} at column {col}); "
                        "save the file as UTF-8") from None


def read_text(path: str | os.PathLike, what: str, max_bytes: int = LIMITS.file_mb * MB, key: str = "file_mb") -> str:
    """A non-empty UTF-8 text file of at most `max_bytes`."""
    text = decode(read_bytes(path, what, max_bytes, key), str(path))
    if not text.strip():
        raise DataError(f"{path}: {what} is empty")
    return text


def lines(fh: IO[bytes], where: str, max_line: int, key: str | None = "line_kb") -> Iterator[tuple[int, bytes]]:
    """(line number, line) of a binary file, each line read with a bound (`key`: its params setting, if any)."""
    for lineno in range(1, 1 << 62):
        raw = fh.readline(max_line + 1)
        if not raw:
            return
        if len(raw) > max_line and not (len(raw) == max_line + 1 and raw.endswith(b"\n")):
            raise DataError(f"{where}:{lineno}: line longer than {max_line:,} bytes" + (f" (limits.{key})" if key else ""))
        yield lineno, raw


_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f\u061c\u200b-\u200f\u2028-\u202e\u2066-\u2069\ufeff]")


def printable(text: str, newlines: bool = False) -> str:
    """`text` fit to echo on a terminal or a page: control characters (terminal escapes, carriage returns, bidi
    overrides) become `?` and a tab a space, so an untrusted string cannot rewrite the line it is on; a newline
    becomes a space too unless `newlines` (a message of several lines of our own)."""
    text = text.replace("\t", " ")
    if not newlines:
        return _CONTROL.sub("?", text.replace("\n", " "))
    return "\n".join(_CONTROL.sub("?", line) for line in text.split("\n"))


def clean(message: str) -> str:
    """The one exit point of error messages: keys redacted (mirage.secrets.public) and control characters of
    untrusted text replaced (`printable`)."""
    return printable(public(message), newlines=True)


# --- JSON --------------------------------------------------------------------------------------------

_STRING = re.compile(rb'"(?:[^"\\]|\\.)*"', re.S)
_NOT_BRACKET = re.compile(rb"[^\[\]{}]")


def _depth_ok(data: bytes, limit: int) -> bool:
    depth = 0
    for b in _NOT_BRACKET.sub(b"", _STRING.sub(b"", data)):
        depth += 1 if b in b"[{" else -1
        if depth > limit:
            return False
    return True


def loads(data: bytes | str, where: str, limits: LimitsParams = LIMITS) -> Any:
    """Strict, bounded JSON: nesting, number size, NaN/Infinity and duplicate keys are checked."""
    raw = data.encode("utf-8") if isinstance(data, str) else data
    if not _depth_ok(raw, limits.json_depth):
        raise DataError(f"{where}: JSON nested deeper than {limits.json_depth} levels (limits.json_depth)")
    n = limits.json_number_chars

    def number(kind: Callable[[str], Any]) -> Callable[[str], Any]:
        def parse(s: str) -> Any:
            if len(s) > n:
                raise DataError(f"{where}: JSON number of {len(s)} characters, more than {n} (limits.json_number_chars)")
            v = kind(s)
            if isinstance(v, float) and v in (float("inf"), float("-inf")):
                raise DataError(f"{where}: JSON number {s} is out of range (not a finite double)")
            return v
        return parse

    def constant(s: str) -> Any:
        raise DataError(f"{where}: {s} is not JSON (numbers must be finite)")

    def pairs(items: list[tuple[str, Any]]) -> dict:
        out: dict = {}
        for k, v in items:
            if k in out:
                raise DataError(f"{where}: key {k[:60]!r} appears twice in one object")
            out[k] = v
        return out

    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise DataError(f"{where}: not valid UTF-8 (byte 0x{raw[exc.start]:02x} at byte {exc.start + 1})") from None
    try:
        return json.loads(text, parse_int=number(int), parse_float=number(float), parse_constant=constant,
                          object_pairs_hook=pairs)
    except json.JSONDecodeError as exc:
        raise DataError(f"{where}: not valid JSON ({exc.msg} at column {exc.colno})") from None
    except RecursionError:
        raise DataError(f"{where}: JSON nested too deeply (limits.json_depth)") from None


def load_json(path: str | os.PathLike, what: str, limits: LimitsParams = LIMITS) -> Any:
    """A JSON file of at most `limits.file_mb`, parsed strictly."""
    return loads(read_bytes(path, what, limits.file_mb * MB, "file_mb"), str(path), limits)


def iter_jsonl(path: str | os.PathLike, what: str, limits: LimitsParams = LIMITS, name: str | None = None,
               max_bytes: int | None = None, size_key: str = "file_mb") -> Iterator[tuple[int, dict]]:
    """(line number, object) of every non-blank line of a JSONL file, streamed; `name` replaces the path in errors."""
    max_bytes = limits.file_mb * MB if max_bytes is None else max_bytes
    where = name or str(path)
    fh, _ = open_regular(path, what, max_bytes, size_key, where=where)
    read = 0
    with fh:
        for lineno, raw in lines(fh, where, limits.line_kb * 1024):
            read += len(raw)
            if read > max_bytes:
                raise too_big(where, read, max_bytes, what, size_key)
            if not raw.strip():
                continue
            row = loads(raw, f"{where}:{lineno}", limits)
            if not isinstance(row, dict):
                raise DataError(f"{where}:{lineno}: expected a JSON object, got {type(row).__name__}")
            yield lineno, row


def sha256(path: str | os.PathLike, what: str, max_bytes: int, key: str | None, follow_links: bool = False,
           where: str | None = None) -> tuple[str, int]:
    """(hex SHA-256, bytes) of a regular file, streamed in 1 MiB chunks and never past `max_bytes`."""
    fh, _ = open_regular(path, what, max_bytes, key, follow_links, where)
    h, n = hashlib.sha256(), 0
    with fh:
        while chunk := fh.read(CHUNK):
            n += len(chunk)
            if n > max_bytes:
                raise too_big(where or str(path), n, max_bytes, what, key)
            h.update(chunk)
    return h.hexdigest(), n


# --- YAML --------------------------------------------------------------------------------------------


def load_yaml(text: str, where: str, limits: LimitsParams = LIMITS) -> Any:
    """safe_load with a budget: aliases, expanded nodes, depth, duplicate keys and integer size are checked on the
    composed node graph, before any Python object is built."""
    import yaml

    try:
        loader = yaml.SafeLoader(text)
    except yaml.YAMLError as exc:  # the reader refuses control characters up front
        raise DataError(f"{where}: not valid YAML: {str(exc).splitlines()[0]}") from None
    aliases = 0
    compose = loader.compose_node

    def counting(parent, index):  # noqa: ANN001 - PyYAML's signature
        nonlocal aliases
        if loader.check_event(yaml.AliasEvent):
            aliases += 1
            if aliases > YAML_MAX_ALIASES:
                mark = loader.peek_event().start_mark
                raise DataError(f"{where}:{mark.line + 1}: more than {YAML_MAX_ALIASES} YAML aliases; "
                                "write the values out")
        return compose(parent, index)

    loader.compose_node = counting
    try:
        node = loader.get_single_node()
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        problem = getattr(exc, "problem", None) or str(exc).splitlines()[0]
        raise DataError(f"{where}{f':{mark.line + 1}' if mark else ''}: not valid YAML: {problem}") from None
    except RecursionError:
        raise DataError(f"{where}: YAML nested too deeply") from None
    finally:
        loader.dispose()
    if node is None:
        return None
    _check_nodes(node, where, limits.json_number_chars)
    try:
        return loader.construct_document(node)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        raise DataError(f"{where}{f':{mark.line + 1}' if mark else ''}: not valid YAML: "
                        f"{getattr(exc, 'problem', None) or exc}") from None
    except ValueError as exc:  # e.g. an integer too long for int() that slipped past the tag check
        raise DataError(f"{where}: not valid YAML: {str(exc)[:200]}") from None


def _check_nodes(root: Any, where: str, number_chars: int) -> None:
    """Expanded size (memoised per node, so checking a bomb is cheap), depth, duplicate keys, integer size."""
    import yaml

    sizes: dict[int, int] = {}

    def size(node: Any, depth: int) -> int:
        if depth > YAML_MAX_DEPTH:
            raise DataError(f"{where}:{node.start_mark.line + 1}: YAML nested deeper than {YAML_MAX_DEPTH} levels")
        if id(node) in sizes:
            return sizes[id(node)]
        sizes[id(node)] = 0  # a recursive alias counts as a leaf
        total = 1
        if isinstance(node, yaml.ScalarNode):
            if node.tag == "tag:yaml.org,2002:int" and len(node.value) > number_chars:
                raise DataError(f"{where}:{node.start_mark.line + 1}: integer of {len(node.value)} characters, "
                                f"more than {number_chars} (limits.json_number_chars)")
        elif isinstance(node, yaml.SequenceNode):
            total += sum(size(child, depth + 1) for child in node.value)
        elif isinstance(node, yaml.MappingNode):
            seen: set[Any] = set()
            for key, value in node.value:
                if isinstance(key, yaml.ScalarNode) and key.tag != "tag:yaml.org,2002:merge":
                    if (key.tag, key.value) in seen:
                        raise DataError(f"{where}:{key.start_mark.line + 1}: key {key.value[:60]!r} appears twice "
                                        "in one mapping")
                    seen.add((key.tag, key.value))
                total += size(key, depth + 1) + size(value, depth + 1)
        if total > YAML_MAX_NODES:
            raise DataError(f"{where}:{node.start_mark.line + 1}: more than {YAML_MAX_NODES:,} YAML nodes once "
                            "aliases are expanded (an alias bomb?)")
        sizes[id(node)] = total
        return total

    size(root, 0)


# --- archives ----------------------------------------------------------------------------------------


class _Capped(io.RawIOBase):
    """A read-only stream that refuses to deliver more than `cap` bytes (a decompression bomb stops here)."""

    def __init__(self, raw: IO[bytes], cap: int, on_exceed: Callable[[], DataError]) -> None:
        self.raw, self.cap, self.n, self.on_exceed = raw, cap, 0, on_exceed

    def readable(self) -> bool:
        return True

    def readinto(self, b) -> int:  # noqa: ANN001 - io's signature
        data = self.raw.read(len(b))
        self.n += len(data)
        if self.n > self.cap:
            raise self.on_exceed()
        b[:len(data)] = data
        return len(data)


def _member_error(archive: str, m: tarfile.TarInfo) -> str | None:
    """Why a member cannot be part of a bundle (None if it can)."""
    p = PurePosixPath(m.name)
    if m.name.startswith("/") or ".." in p.parts or "\\" in m.name or not m.name or len(p.parts) > 2:
        return f"member {m.name[:100]!r} is not a plain file inside the bundle"
    if m.isdir():
        return None
    if not m.isreg() or m.issparse() or m.type == tarfile.GNUTYPE_SPARSE:
        kind = ("a symbolic link" if m.issym() else "a hard link" if m.islnk() else "a sparse file" if m.issparse()
                else "a device" if m.ischr() or m.isblk() else "a FIFO" if m.isfifo() else "not a file")
        return f"member {m.name[:100]!r} is {kind}; bundles hold plain files only"
    return None


def tar_stream(archive: str | os.PathLike, limits: LimitsParams) -> Iterator[tuple[tarfile.TarInfo, tarfile.TarFile]]:
    """Stream the members of a .tar.gz (each checked: kind, name, count, sizes, total), never reading more than
    `limits.bundle_mb` decompressed; the caller may read a member's data while it is the current one."""
    import gzip

    cap = limits.bundle_mb * MB
    where = str(archive)
    fh, size = open_regular(archive, "bundle archive", cap, "bundle_mb")

    def exceeded() -> DataError:
        return DataError(f"{where}: expands to more than {cap:,} bytes (limits.bundle_mb)")

    with fh:
        stream = io.BufferedReader(_Capped(gzip.GzipFile(fileobj=fh, mode="rb"), cap + 64 * 1024, exceeded), CHUNK)
        try:
            with tarfile.open(fileobj=stream, mode="r|") as tar:
                count, total, names = 0, 0, set()
                for m in tar:
                    count += 1
                    if count > limits.archive_members:
                        raise DataError(f"{where}: more than {limits.archive_members} members (limits.archive_members)")
                    why = _member_error(where, m)
                    if why:
                        raise DataError(f"{where}: {why}")
                    if m.name.rstrip("/") in names:
                        raise DataError(f"{where}: member {m.name[:100]!r} appears twice")
                    names.add(m.name.rstrip("/"))
                    total += m.size
                    if total > cap:
                        raise exceeded()
                    yield m, tar
        except (tarfile.TarError, EOFError, OSError, ValueError, gzip.BadGzipFile) as exc:
            if isinstance(exc, DataError):
                raise
            raise DataError(f"{where}: not a readable .tar.gz bundle ({str(exc)[:200]})") from None


# --- CSV ---------------------------------------------------------------------------------------------


def iter_csv(path: str | os.PathLike, what: str, limits: LimitsParams = LIMITS) -> Iterator[tuple[int, dict[str, str]]]:
    """(line number, row) of a CSV file with a header, streamed within `limits.file_mb` and `limits.line_kb`;
    a row whose field count differs from the header's is an error."""
    import csv

    where = str(path)
    max_bytes = limits.file_mb * MB
    fh, _ = open_regular(path, what, max_bytes, "file_mb")

    def text() -> Iterator[str]:
        read = 0
        for lineno, raw in lines(fh, where, limits.line_kb * 1024):
            read += len(raw)
            if read > max_bytes:
                raise too_big(where, read, max_bytes, what, "file_mb")
            yield decode(raw, where, lineno)

    with fh:
        reader = csv.reader(text())
        try:
            header = next(reader, None)
            if not header or not any(h.strip() for h in header):
                raise DataError(f"{where}: {what} is empty (no header row)")
            if len(set(header)) != len(header):
                raise DataError(f"{where}:1: a column name appears twice in the header")
            for row in reader:
                if not any(cell.strip() for cell in row):
                    continue
                if len(row) != len(header):
                    raise DataError(f"{where}:{reader.line_num}: {len(row)} fields, the header has {len(header)}")
                yield reader.line_num, dict(zip(header, row))
        except csv.Error as exc:
            raise DataError(f"{where}:{reader.line_num}: not valid CSV ({exc})") from None
