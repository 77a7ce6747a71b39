"""What each provider's endpoint accepts and how it answers: one declaration per endpoint family, each field
with its source (docs/generation.md, "Provider dialects", has the same table for readers).

The providers read their request shape from here (`dialect_for(spec)`): whether `seed` is sent, which field carries
the output budget, which fields hold thinking to the least the model allows, whether thinking tokens are spent
inside that budget, and what the endpoint refuses in a conversation. The rules every dialect shares live in the
code that applies them: an empty answer (or one cut before any visible text) is a failed call, never a stored
success (`reply.answered`); `x-should-retry` is obeyed as the official SDKs do, 408/409/429/5xx are retried with the
server's `retry-after` (`_http.should_retry`, `sources["retry"]`); a second (M4) turn is never sent after an empty
first turn (`runner.GenerationRun`; Anthropic refuses one for good, `ANTHROPIC.sources["empty_turn"]`).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field, replace
from typing import Any, Protocol
from urllib.parse import urlsplit

GEMINI_HOST = "generativelanguage.googleapis.com"


@dataclass(frozen=True)
class Dialect:
    """One endpoint family's request rules. `sources` maps each rule (a field name, or `retry` / `empty_turn` for
    the shared rules applied elsewhere) to where it is documented."""

    name: str
    #: Whether `seed` is sent. False: the sample's key and record carry seed=null, and the run's report lists the
    #: model under the protocol deviations (its samples are distinct draws, not seeded ones).
    seed: bool
    #: Why no seed is sent (the note stored with every record and the deviation's text); "" where one is.
    no_seed: str = ""
    #: The request field that carries the output budget.
    token_field: str = "max_tokens"
    #: Body fields that hold thinking to the least the model allows (keyed and sent as `sampling_extra`).
    reasoning: dict[str, str] = field(default_factory=dict)
    #: Whether thinking tokens are spent inside the output budget (so a long thought leaves the answer short).
    thinking_in_budget: bool = False
    #: Process environment the engine needs (vLLM: reproducible per-request seeds), set unless already set.
    env: dict[str, str] = field(default_factory=dict)
    #: Registry weight format -> the engine's quantization method that runs it (vLLM).
    kernels: dict[str, str] = field(default_factory=dict)
    sources: dict[str, str] = field(default_factory=dict)

    def body_fields(self, mode: str) -> dict[str, Any]:
        """The dialect's own request fields, which the registry's `sampling_extra` starts from (thinking settings
        are chat completion fields: the legacy text completions endpoint has none)."""
        return dict(self.reasoning) if mode == "chat" else {}


OPENAI_DOCS = "https://platform.openai.com/docs/api-reference/chat/create"
SHOULD_RETRY = "openai-python and anthropic-sdk-python `_base_client.py`, `_should_retry`: x-should-retry true/false obeyed"

OPENAI = Dialect(
    "openai", seed=True,
    sources={"seed": OPENAI_DOCS + " (seed: best-effort determinism; system_fingerprint recorded)",
             "token_field": OPENAI_DOCS + " (max_tokens accepted by non-reasoning chat models)",
             "retry": SHOULD_RETRY},
)
OPENAI_REASONING = Dialect(
    "openai-reasoning", seed=True, token_field="max_completion_tokens", reasoning={"reasoning_effort": "none"},
    thinking_in_budget=True,
    sources={"token_field": OPENAI_DOCS + " (max_tokens is not compatible with o-series models; "
                                          "max_completion_tokens bounds visible and reasoning tokens)",
             "reasoning": "https://platform.openai.com/docs/guides/reasoning (reasoning_effort; GPT-5.1+ take "
                          "temperature only with reasoning_effort none)",
             "retry": SHOULD_RETRY},
)
GEMINI = Dialect(
    "gemini-openai", seed=False,
    no_seed="Gemini's OpenAI-compatible endpoint rejects `seed` (HTTP 400 \"Unknown name seed\"): none sent; "
            "samples are distinct draws, not seeded ones",
    thinking_in_budget=True,
    sources={"seed": "https://github.com/Vali-98/ChatterUI/issues/227 (400: Invalid JSON payload received. Unknown "
                     "name \"seed\"); https://github.com/mcpchecker/mcpchecker/pull/188 (seed skipped for "
                     "generativelanguage.googleapis.com)",
             "reasoning": "https://ai.google.dev/gemini-api/docs/openai (reasoning_effort: low/medium/high map to "
                          "thinking budgets, none turns 2.5 Flash thinking off; Gemini 3 maps it to thinking_level, "
                          "minimal on Flash models, low the least on Pro); https://ai.google.dev/gemini-api/docs/thinking",
             "thinking_in_budget": "https://github.com/googleapis/python-genai/issues/1405 and "
                                   "https://github.com/langchain-ai/langchain-google/issues/1020 (thinking spends "
                                   "max_output_tokens: empty answers with finish MAX_TOKENS)",
             "retry": SHOULD_RETRY},
)
OPENAI_COMPATIBLE = Dialect(
    "openai-compatible", seed=True,
    sources={"seed": "https://docs.vllm.ai/en/latest/serving/openai_compatible_server.html (seed among the extra "
                     "sampling parameters); llama.cpp tools/server/README.md (seed)",
             "retry": SHOULD_RETRY},
)
ANTHROPIC = Dialect(
    "anthropic", seed=False,
    no_seed="anthropic Messages API has no seed parameter; samples are not reproducible by seed",
    sources={"seed": "https://docs.anthropic.com/en/api/messages (no seed parameter)",
             "reasoning": "https://docs.anthropic.com/en/docs/build-with-claude/extended-thinking (thinking is off "
                          "unless `thinking` is sent; mirage never sends it)",
             "empty_turn": "https://github.com/anthropics/claude-code/issues/6774 and "
                                   "https://github.com/corespeed-io/zypher-agent/pull/122 (400 invalid_request_error: "
                                   "all messages must have non-empty content except for the optional final "
                                   "assistant message)",
             "retry": SHOULD_RETRY},
)
VLLM = Dialect(
    "vllm-offline", seed=True,
    env={"VLLM_BATCH_INVARIANT": "1", "VLLM_ENABLE_V1_MULTIPROCESSING": "0"},
    kernels={"awq": "awq_marlin"},
    sources={"seed": "https://docs.vllm.ai/en/latest/usage/reproducibility.html (per-request seeds reproduce only "
                     "with deterministic scheduling, VLLM_ENABLE_V1_MULTIPROCESSING=0, or batch invariance)",
             "env": "https://docs.vllm.ai/en/latest/features/batch_invariance.html (VLLM_BATCH_INVARIANT=1, vLLM >= "
                    "0.11.1, compute capability >= 8.0)",
             "kernels": "vLLM's AWQ loader logs that awq_marlin is faster than awq for AWQ checkpoints "
                        "(vllm/model_executor/layers/quantization/awq_marlin.py)"},
)
LOCAL = Dialect("local", seed=True, sources={"seed": "mirage/generate/providers/local.py (one torch.Generator per sample)"})

_REASONING_MODEL = re.compile(r"^(o\d|gpt-5|gpt-6)")


def gemini_reasoning(model_id: str) -> dict[str, str]:
    """The least thinking a Gemini model allows, as the OpenAI-compatible `reasoning_effort` (see GEMINI.sources):
    none on 2.5 Flash/Flash-Lite, low on 2.5 and 3.x Pro, minimal on 3.x Flash; nothing before 2.5 (no thinking)."""
    m = re.match(r"(?:models/)?gemini-(\d+)(?:\.(\d+))?", model_id)
    if m is None or (int(m[1]), int(m[2] or 0)) < (2, 5):
        return {}
    if "pro" in model_id:
        return {"reasoning_effort": "low"}
    return {"reasoning_effort": "none" if m[1] == "2" else "minimal"}


class Endpoint(Protocol):
    """What a dialect is chosen by: a registry entry's (config.generate.ModelSpec) provider and endpoint."""

    provider: str
    server_kind: str
    base_url: str | None
    model_id: str


def is_gemini(spec: Endpoint) -> bool:
    """Gemini's OpenAI-compatible endpoint: its host, or `server_kind: gemini` (a proxy in front of it)."""
    return spec.provider == "openai" and (spec.server_kind == "gemini" or
                                          (urlsplit(spec.base_url or "").hostname or "") == GEMINI_HOST)


def dialect_for(spec: Endpoint) -> Dialect:
    """The dialect a registry entry's endpoint speaks: by provider, and for provider openai by its endpoint
    (api.openai.com, Gemini's host, any other server) and model family."""
    if spec.provider == "anthropic":
        return ANTHROPIC
    if spec.provider == "vllm":
        return VLLM
    if spec.provider == "local":
        return LOCAL
    if is_gemini(spec):
        reasoning = gemini_reasoning(spec.model_id)
        return replace(GEMINI, reasoning=reasoning) if reasoning else replace(GEMINI, thinking_in_budget=False)
    if spec.base_url is None or (urlsplit(spec.base_url).hostname or "") == "api.openai.com":
        return OPENAI_REASONING if _REASONING_MODEL.match(spec.model_id) else OPENAI
    return OPENAI_COMPATIBLE
