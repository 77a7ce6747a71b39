"""Redaction of API keys before anything is written (store, views, logs, report), and the start-up check of keys.

The secrets are the current values of the key variables: OPENAI_API_KEY, ANTHROPIC_API_KEY, GEMINI_API_KEY, and
every `api_key_env` a provider read or `watch_registry` was given. Values shorter than MIN_SECRET_CHARS are ignored
(a placeholder such as "x" must not blank out every letter x).

A server may echo a key in another form than it was sent, and an echo may be cut. So a key is matched as every
form a server is known to normalise it to: as sent, trimmed, URL-escaped (`quote`, `quote_plus`, every byte as
%XX), JSON-escaped (also `\\/` and `\\uXXXX`), HTML-escaped, hexadecimal, and base64 (standard and URL-safe) of the
key and of the key inside a longer string such as `user:key` (Basic auth; the characters fixed by the key's bytes,
for each of the three alignments), all case-insensitively. Any run of at least FRAGMENT_CHARS characters of one of
these forms, widened by up to WIDEN_CHARS token characters (letters, digits, `+/=_-`) on each side (the
edge characters of a base64 form carry key bits too), is replaced by `[REDACTED:<VARIABLE>]`: a partial echo (a cut error body, a masked key that shows too
much) is caught too. Shorter fragments carry too little of a key to matter (APIs themselves echo the last 4).
Redaction runs on whole texts before anything is cut.

Secrets also travel inside URLs: a password (or a lone user name) in a URL's user part and the values of its query
string (Gemini's `?key=`) are secrets too, except parameters known to be public (`api-version`). `watch_url`
registers them (every registry `base_url` is registered when params are validated), so `redact` removes them
wherever they reappear; `public` is the one redaction point for what leaves the process as structured data (params
snapshots, reports): every string redacted and every URL with its user part and secret query values replaced.
"""

from __future__ import annotations

import base64
import html
import json
import os
import re
from collections.abc import Iterable, Mapping
from functools import lru_cache
from typing import Any
from urllib.parse import parse_qsl, quote, quote_plus, urlsplit, urlunsplit

from mirage.errors import DataError

DEFAULT_KEY_ENVS: tuple[str, ...] = ("OPENAI_API_KEY", "ANTHROPIC_API_KEY", "GEMINI_API_KEY")
MIN_SECRET_CHARS = 8
FRAGMENT_CHARS = 12
WIDEN_CHARS = 3
_watched: set[str] = set(DEFAULT_KEY_ENVS)
_values: dict[str, str] = {}  # literal secrets (a URL's password or query values) -> where they were found
#: Query parameters that are never secrets (kept, and shown, as they are).
PUBLIC_QUERY: frozenset[str] = frozenset({"api-version", "api_version", "version", "alt", "format"})
_URL = re.compile(r"[A-Za-z][A-Za-z0-9+.-]*://[^\s\"'<>]+")
_TOKEN = frozenset("abcdefghijklmnopqrstuvwxyz0123456789+/=_-")
_LOWER = str.maketrans("ABCDEFGHIJKLMNOPQRSTUVWXYZ", "abcdefghijklmnopqrstuvwxyz")  # keeps string lengths


def watch(*env_names: str | None) -> None:
    """Treat the values of these environment variables as secrets from now on."""
    _watched.update(n for n in env_names if n)


def watch_registry(models: Mapping[str, Any]) -> None:
    """Watch every `api_key_env` and the secret parts of every `base_url` of a model registry (name -> ModelSpec)."""
    watch(*(getattr(spec, "api_key_env", None) for spec in models.values()))
    for name, spec in models.items():
        watch_url(getattr(spec, "base_url", None), f"models.{name}.base_url")


def url_secrets(url: str) -> list[str]:
    """The secret parts of a URL: its user part (user and password) and the values of its non-public query
    parameters."""
    try:
        parts = urlsplit(url)
    except ValueError:
        return []
    found = [p for p in parts.netloc.rpartition("@")[0].split(":") if p] if "@" in parts.netloc else []
    return found + [v for k, v in parse_qsl(parts.query, keep_blank_values=True) if k.lower() not in PUBLIC_QUERY and v]


def watch_url(url: str | None, where: str) -> None:
    """Treat the secret parts of `url` (see `url_secrets`) as secrets from now on; `where` names them in redactions."""
    for value in url_secrets(url or ""):
        _values.setdefault(value, where)


def public_url(url: str) -> str:
    """`url` without its user part and with the values of its non-public query parameters replaced."""
    try:
        parts = urlsplit(url)
    except ValueError:
        return "[REDACTED:URL]"
    netloc = parts.netloc.rpartition("@")[2]
    query = "&".join(f"{k}={v if k.lower() in PUBLIC_QUERY else '[REDACTED]'}" if sep else k
                     for k, sep, v in (item.partition("=") for item in parts.query.split("&") if item))
    return urlunsplit((parts.scheme, netloc, parts.path, query, parts.fragment))


def public(obj: Any) -> Any:
    """A copy of a JSON-like value fit to leave the process: every string redacted and every URL in it made public."""
    if isinstance(obj, str):
        return redact(_URL.sub(lambda m: public_url(m.group(0)), obj))
    if isinstance(obj, dict):
        return {public(k): public(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return type(obj)(public(v) for v in obj)
    return obj


#: How API keys of the common providers begin (OpenAI, Anthropic, Google, xAI, Groq, Hugging Face, GitHub, AWS, ...).
_KEY_PREFIX = re.compile(r"^(?:sk|rk|pk)[-_]|^AIza|^xai-|^gsk_|^hf_|^gh[pousr]_|^github_pat_|^AKIA|^r8_|^pplx-")


def looks_like_key(value: str) -> bool:
    """Whether a value given where a variable *name* was expected looks like a key itself: a known key prefix, more
    than 40 characters, or 20 or more mixing upper case, lower case and digits (names are upper case by custom)."""
    if _KEY_PREFIX.match(value) or len(value) > 40:
        return True
    return len(value) >= 20 and all(any(f(c) for c in value) for f in (str.isupper, str.islower, str.isdigit))


def watch_value(value: str, where: str) -> None:
    """Treat a literal value (e.g. a key pasted where a variable name was expected) as a secret from now on."""
    _values.setdefault(value, where)


def check_key(env_name: str | None) -> None:
    """Refuse, at start-up, a key with surrounding or inner whitespace or control characters: a server may trim it,
    so what it echoes would not be what was sent (and a key is one token)."""
    if not env_name:
        return
    value = os.environ.get(env_name)
    if value and (value != value.strip() or any(c.isspace() or ord(c) < 32 or ord(c) == 127 for c in value)):
        raise DataError(f"environment variable {env_name}: the API key contains whitespace or control characters "
                        "(leading or trailing too); set it to the bare key")


def secrets() -> list[tuple[str, str]]:
    """(variable, value) of every watched variable that is set, longest value first."""
    found = [(n, os.environ[n]) for n in sorted(_watched) if len(os.environ.get(n, "").strip()) >= MIN_SECRET_CHARS]
    found += [(where, v) for v, where in _values.items() if len(v.strip()) >= MIN_SECRET_CHARS]
    return sorted(found, key=lambda nv: -len(nv[1]))


def forms(value: str) -> set[str]:
    """Every form of `value` a server may echo (see the module doc), lower-cased for matching."""
    out: set[str] = set()
    for v in {value, value.strip()}:
        raw = v.encode("utf-8")
        out |= {v, quote(v, safe=""), quote(v), quote_plus(v), "".join(f"%{b:02x}" for b in raw), raw.hex(),
                json.dumps(v)[1:-1], json.dumps(v, ensure_ascii=False)[1:-1], json.dumps(v)[1:-1].replace("/", "\\/"),
                "".join(f"\\u{ord(c):04x}" for c in v), html.escape(v)}
        for encode in (base64.b64encode, base64.urlsafe_b64encode):
            for a in range(3):  # the key's bytes start at offset a (mod 3) of the encoded string
                enc = encode(b"\0" * a + raw + b"\0\0").decode()
                out.add(enc[-(-8 * a // 6):(8 * a + 8 * len(raw)) // 6])
    return {f.translate(_LOWER) for f in out if f}


class _Matcher:
    """Finds runs of >= FRAGMENT_CHARS characters of any form of one secret in a (lower-cased) text."""

    def __init__(self, value: str) -> None:
        self.grams: dict[int, frozenset[str]] = {}
        for f in forms(value):
            k = min(len(f), FRAGMENT_CHARS)
            if k < MIN_SECRET_CHARS:
                continue
            self.grams[k] = self.grams.get(k, frozenset()) | {f[i:i + k] for i in range(len(f) - k + 1)}
        alphabet = "".join(sorted({c for grams in self.grams.values() for g in grams for c in g}))
        shortest = min(self.grams, default=FRAGMENT_CHARS)
        self.runs = re.compile(f"[{re.escape(alphabet)}]{{{shortest},}}") if alphabet else None

    def spans(self, low: str) -> list[tuple[int, int]]:
        if self.runs is None:
            return []
        marks: list[tuple[int, int]] = []
        for m in self.runs.finditer(low):
            start, end = m.span()
            for k, grams in self.grams.items():
                for i in range(start, end - k + 1):
                    if low[i:i + k] in grams:
                        marks.append((i, i + k))
        marks.sort()
        merged: list[list[int]] = []
        for s, e in marks:
            for _ in range(WIDEN_CHARS):  # a base64 form's edge characters mix key bits with their neighbours'
                s -= bool(s and low[s - 1] in _TOKEN)
                e += bool(e < len(low) and low[e] in _TOKEN)
            if merged and s <= merged[-1][1]:
                merged[-1][1] = max(merged[-1][1], e)
            else:
                merged.append([s, e])
        return [(s, e) for s, e in merged]


@lru_cache(maxsize=64)
def _matcher(value: str) -> _Matcher:
    return _Matcher(value)


def redact(text: str | None, pairs: Iterable[tuple[str, str]] | None = None) -> str | None:
    """`text` with every form of every secret value (and every long fragment of one) replaced by [REDACTED:<VARIABLE>]."""
    if not text:
        return text
    for name, value in secrets() if pairs is None else pairs:
        spans = _matcher(value).spans(text.translate(_LOWER))
        for s, e in reversed(spans):
            text = f"{text[:s]}[REDACTED:{name}]{text[e:]}"
    return text


def redact_obj(obj: Any) -> Any:
    """A copy of a JSON-like value (dict, list, str, ...) with every string redacted; for store rows and logs."""
    pairs = secrets()
    if not pairs:
        return obj

    def walk(x: Any) -> Any:
        if isinstance(x, str):
            return redact(x, pairs)
        if isinstance(x, dict):
            return {walk(k): walk(v) for k, v in x.items()}
        if isinstance(x, (list, tuple)):
            return type(x)(walk(v) for v in x)
        return x

    return walk(obj)
