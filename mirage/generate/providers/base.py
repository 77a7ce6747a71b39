"""The one interface every provider implements: generate samples for a list of sample requests."""

from __future__ import annotations

import abc
import os
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from mirage import secrets
from mirage.config.generate import ModelSpec

#: Why a call failed. Only COUNTED causes are the model's (or this one request's) doing and use up one of the
#: sample's `generate.max_attempts`; every other cause is an outage (OUTAGES: what to tell the user): the sample
#: stays pending, the run stops starting calls, and the next run sends exactly the pending ones.
COUNTED = frozenset({"reply", "request"})
OUTAGES: dict[str, str] = {
    "auth": "the server refused the API key (HTTP 401/403): check the key variable",
    "quota": "the account's quota or credit is used up",
    "endpoint": "the server has no such model or endpoint (HTTP 404): check model_id and base_url",
    "rate_limit": "the server kept rate-limiting (HTTP 429) through every retry",
    "server": "the server kept failing (5xx, or bodies that are not JSON) through every retry",
    "transport": "the server could not be reached or did not answer in time through every retry",
    "served_model": "the server answers as another model than the one requested (served_model: refuse)",
    "setup": "the server cannot be used as configured (see the error)",
}


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
    #: Set with `error`: one of COUNTED or a key of OUTAGES.
    cause: str | None = None
    #: The model name the server says answered (None where the protocol has none).
    served_model: str | None = None
    provider_request_id: str | None = None
    system_fingerprint: str | None = None
    note: str | None = None
    extra: dict[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        """Every text a provider returns passes here: API keys echoed by a server never reach a file."""
        pairs = secrets.secrets()
        if pairs:
            for name in ("text", "reasoning", "finish_reason", "error", "served_model", "provider_request_id",
                         "system_fingerprint", "note"):
                setattr(self, name, secrets.redact(getattr(self, name), pairs))
            self.extra = secrets.redact_obj(self.extra)

    @property
    def outage(self) -> bool:
        """A failure that is not the model's answer: it never uses up an attempt."""
        return self.error is not None and self.cause not in COUNTED

    @classmethod
    def failure(cls, error: str, latency_s: float = 0.0, request_id: str | None = None, cause: str = "reply") -> "Result":
        """A failed call; the message is redacted before it is cut (a cut key would escape redaction), and what a
        server wrote into it is made printable (control characters, lone surrogates)."""
        return cls(finish_reason="error", error=printable(secrets.redact(error))[:500], latency_s=latency_s,
                   provider_request_id=request_id if isinstance(request_id, str) else None, cause=cause)


_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f\ud800-\udfff]")


def printable(text: str) -> str:
    """`text` with control characters and lone surrogates replaced by U+FFFD (they cannot be encoded or would
    rewrite a terminal line)."""
    return _CONTROL.sub("\ufffd", text)


OnResult = Callable[[Sample, Result], None]


class Provider(abc.ABC):
    """Generates samples. `on_result` is called once per sample as soon as it is done (so the caller can
    store it durably), from the calling thread, in any order."""

    def __init__(self, name: str, spec: ModelSpec) -> None:
        from mirage.config.dialects import dialect_for

        self.name = name
        self.spec = spec
        #: What the endpoint accepts (mirage.config.dialects); `seeded` False where it takes no seed
        #: (the store then records seed=null and the dialect's note).
        self.dialect = dialect_for(spec)
        self.seeded = self.dialect.seed
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

    def noted(self, result: Result) -> Result:
        """`result` with the dialect's note where no seed was sent (a protocol deviation, kept in every record)."""
        if result.error is None and self.dialect.no_seed:
            result.note = "; ".join(n for n in (self.dialect.no_seed, result.note) if n)
        return result

    def check_served(self, result: Result) -> Result:
        """`result`, or a failure (cause served_model) when the server names another model than `model_id` and the
        registry entry says `served_model: refuse`."""
        from mirage.generate.providers.reply import served_model_matches

        if result.error is None and self.spec.served_model == "refuse" and \
                not served_model_matches(result.served_model, self.spec.model_id):
            return Result.failure(f"the server answered as model {result.served_model!r}, not {self.spec.model_id!r} "
                                  f"(models.{self.name}.served_model: refuse)", result.latency_s,
                                  result.provider_request_id, cause="served_model")
        return result

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
