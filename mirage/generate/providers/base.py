"""The one interface every provider implements: generate samples for a list of sample requests."""

from __future__ import annotations

import abc
import os
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from mirage import secrets
from mirage.config.generate import ModelSpec


@dataclass(frozen=True)
class Sample:
    """One completion to produce: the exact input sent (`prompt` or `messages`) and output-changing settings."""

    key: str
    sample_index: int
    seed: int | None
    max_tokens: int
    temperature: float
    top_p: float
    prompt: str | None = None
    messages: tuple[dict, ...] | None = None

    @property
    def message_list(self) -> list[dict]:
        return [dict(m) for m in self.messages or ()]


@dataclass
class Result:
    """What came back for one sample. `error` set means the call failed and the key stays missing."""

    text: str = ""
    reasoning: str | None = None
    finish_reason: str = "stop"
    tokens_in: int = 0
    tokens_out: int = 0
    latency_s: float = 0.0
    #: Streamed calls only: seconds until the first token (queueing + prefill) and from there to the end.
    queue_s: float | None = None
    generation_s: float | None = None
    error: str | None = None
    provider_request_id: str | None = None
    system_fingerprint: str | None = None
    note: str | None = None
    extra: dict[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        """Every text a provider returns passes here: API keys echoed by a server never reach a file."""
        pairs = secrets.secrets()
        if pairs:
            for name in ("text", "reasoning", "finish_reason", "error", "provider_request_id", "system_fingerprint", "note"):
                setattr(self, name, secrets.redact(getattr(self, name), pairs))
            self.extra = secrets.redact_obj(self.extra)

    @classmethod
    def failure(cls, error: str, latency_s: float = 0.0, request_id: str | None = None) -> "Result":
        """A failed call; the message is redacted before it is cut (a cut key would escape redaction)."""
        return cls(finish_reason="error", error=secrets.redact(error)[:500], latency_s=latency_s, provider_request_id=request_id)


OnResult = Callable[[Sample, Result], None]


class Provider(abc.ABC):
    """Generates samples. `on_result` is called once per sample as soon as it is done (so the caller can
    store it durably), from the calling thread, in any order."""

    #: False where the backend has no seed parameter (the store then records seed=null).
    seeded: bool = True

    def __init__(self, name: str, spec: ModelSpec) -> None:
        self.name = name
        self.spec = spec
        #: Folder for provider bookkeeping that must survive a kill (e.g. submitted batch ids); set by the runner.
        self.state_dir: str | None = None
        #: Called with the number of tokens decoded in a step, by providers that decode locally (live progress).
        self.on_tokens: Callable[[int], None] | None = None

    def api_key_from_env(self) -> str | None:
        """The key named by `api_key_env`, read from the environment only (never from params or files)."""
        if not self.spec.api_key_env:
            return None
        secrets.watch(self.spec.api_key_env)
        secrets.check_key(self.spec.api_key_env)
        key = os.environ.get(self.spec.api_key_env)
        if not key:
            raise RuntimeError(f"model '{self.name}': set the environment variable {self.spec.api_key_env} to its API key")
        return key

    @abc.abstractmethod
    def generate(self, samples: list[Sample], on_result: OnResult) -> None:
        """Produce every sample in `samples`, reporting each through `on_result`."""

    def close(self) -> None:
        """Release clients or model memory."""


def normalise_finish(reason: str | None) -> str:
    """Map provider stop reasons onto stop / length / refusal / other."""
    mapping = {"stop": "stop", "end_turn": "stop", "stop_sequence": "stop", "eos": "stop",
               "length": "length", "max_tokens": "length", "content_filter": "refusal", "refusal": "refusal"}
    return mapping.get(reason or "", reason or "unknown")
