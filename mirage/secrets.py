"""Redaction of API keys before anything is written (store, views, logs, report).

The secrets are the current values of the key variables: OPENAI_API_KEY, ANTHROPIC_API_KEY,
GEMINI_API_KEY, and every `api_key_env` a provider read or `watch_registry` was given. Any
occurrence of one of these values is replaced by `[REDACTED:<VARIABLE>]`. Values shorter than
MIN_SECRET_CHARS are ignored (a placeholder such as "x" must not blank out every letter x).
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping
from typing import Any

DEFAULT_KEY_ENVS: tuple[str, ...] = ("OPENAI_API_KEY", "ANTHROPIC_API_KEY", "GEMINI_API_KEY")
MIN_SECRET_CHARS = 8
_watched: set[str] = set(DEFAULT_KEY_ENVS)


def watch(*env_names: str | None) -> None:
    """Treat the values of these environment variables as secrets from now on."""
    _watched.update(n for n in env_names if n)


def watch_registry(models: Mapping[str, Any]) -> None:
    """Watch every `api_key_env` of a model registry (name -> ModelSpec)."""
    watch(*(getattr(spec, "api_key_env", None) for spec in models.values()))


def secrets() -> list[tuple[str, str]]:
    """(variable, value) of every watched variable that is set, longest value first."""
    found = [(n, os.environ[n]) for n in sorted(_watched) if len(os.environ.get(n, "").strip()) >= MIN_SECRET_CHARS]
    return sorted(found, key=lambda nv: -len(nv[1]))


def redact(text: str | None, pairs: Iterable[tuple[str, str]] | None = None) -> str | None:
    """`text` with every secret value replaced by [REDACTED:<VARIABLE>]."""
    if not text:
        return text
    for name, value in secrets() if pairs is None else pairs:
        if value in text:
            text = text.replace(value, f"[REDACTED:{name}]")
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
