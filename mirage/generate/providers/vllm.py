"""`vllm` provider: offline `LLM.generate` / `LLM.chat` on GPUs, revision pinned, per-request seeds.

vLLM is imported only when this provider is built. An unpinned revision (the registry's
REPLACE_WITH_COMMIT_SHA marker, or none) is refused unless the entry sets `allow_unpinned`.
"""

from __future__ import annotations

import time
from typing import Any

from mirage.config.generate import ModelSpec
from mirage.generate.providers.base import OnResult, Provider, Result, Sample, normalise_finish

CHUNK = 1024  # samples per LLM call; vLLM batches within it (max_num_seqs)


class UnpinnedRevision(RuntimeError):
    """A vLLM model's revision is not pinned to a commit."""


def check_pinned(name: str, spec: ModelSpec) -> None:
    if not spec.pinned and not spec.allow_unpinned:
        raise UnpinnedRevision(
            f"model '{name}': revision {spec.revision!r} is not pinned; set models.{name}.revision to the hub commit sha "
            f"of {spec.model_id} (or allow_unpinned: true to run anyway, unreproducibly)"
        )


def engine_kwargs(spec: ModelSpec) -> dict[str, Any]:
    """Arguments for `vllm.LLM(...)` from the registry entry."""
    kw: dict[str, Any] = {"model": spec.model_id, "tensor_parallel_size": spec.tensor_parallel_size, "dtype": spec.dtype,
                          "seed": 0}
    if spec.pinned:
        kw["revision"] = spec.revision
        kw["tokenizer_revision"] = spec.revision
    if spec.quantization:
        kw["quantization"] = spec.quantization
    return kw


def sampling_kwargs(s: Sample) -> dict[str, Any]:
    """Arguments for `vllm.SamplingParams(...)` for one sample (its own seed)."""
    return {"n": 1, "temperature": s.temperature, "top_p": s.top_p, "max_tokens": s.max_tokens, "seed": s.seed}


def parse_output(out: Any, latency_s: float) -> Result:
    """A vLLM RequestOutput -> Result."""
    comp = out.outputs[0]
    return Result(text=comp.text, finish_reason=normalise_finish(comp.finish_reason),
                  tokens_in=len(out.prompt_token_ids or []), tokens_out=len(comp.token_ids or []), latency_s=latency_s,
                  provider_request_id=str(out.request_id), note="vllm offline batch: latency is the whole batch's wall time")


class VLLMProvider(Provider):
    seeded = True

    def __init__(self, name: str, spec: ModelSpec) -> None:
        super().__init__(name, spec)
        check_pinned(name, spec)
        try:
            import vllm
        except ImportError as exc:
            raise RuntimeError("the vllm provider needs `pip install mirage-bench[vllm]` on a CUDA machine") from exc
        self._vllm = vllm
        self.llm = vllm.LLM(**engine_kwargs(spec))

    def generate(self, samples: list[Sample], on_result: OnResult) -> None:
        """Chunks of CHUNK samples, so a killed job keeps every finished chunk in the store."""
        for i in range(0, len(samples), CHUNK):
            chunk = samples[i : i + CHUNK]
            params = [self._vllm.SamplingParams(**sampling_kwargs(s)) for s in chunk]
            start = time.perf_counter()
            if self.spec.mode == "chat":
                outputs = self.llm.chat([s.message_list for s in chunk], sampling_params=params, use_tqdm=False)
            else:
                outputs = self.llm.generate([s.prompt for s in chunk], sampling_params=params, use_tqdm=False)
            latency = time.perf_counter() - start
            for s, out in zip(chunk, outputs):
                on_result(s, parse_output(out, latency))
