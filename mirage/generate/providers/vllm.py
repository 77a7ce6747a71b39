"""`vllm` provider: offline `LLM.generate` / `LLM.chat` on GPUs, revision pinned, per-request seeds.

vLLM is imported only when this provider is built. An unpinned revision (the registry's
REPLACE_WITH_COMMIT_SHA marker, or none) is refused unless the entry sets `allow_unpinned`; so is a model the
GPU memory plan (mirage/generate/memory.py) finds cannot fit, before vLLM is imported. `max_model_len` and
`gpu_memory_utilization` come from that plan.

vLLM's own settings that the harness relies on, each from vLLM's documentation:
- Reproducibility ("Reproducibility" and "Batch invariance" pages): per-request seeds reproduce a text only when
  the batch it was decoded in does not matter. A resumed run sends only the missing keys, so its batches differ
  from the first run's; the dialect's `env` (`dialects.VLLM`) turns on batch invariance (VLLM_BATCH_INVARIANT=1, vLLM >= 0.11.1,
  compute capability >= 8.0) and keeps the engine in this process (VLLM_ENABLE_V1_MULTIPROCESSING=0: deterministic
  scheduling for offline inference). Set either to 0 in the environment to trade this for speed.
- AWQ: `quantization: awq` would force vLLM's slow AWQ GEMM kernel (vLLM logs that awq_marlin is faster); the same
  checkpoint runs on the Marlin kernel as `awq_marlin`, so the registry's `awq` (the weight format, part of the
  store key) is sent as that.
"""

from __future__ import annotations

import os
import time
from typing import Any

from mirage.config.dialects import VLLM
from mirage.config.generate import ModelSpec
from mirage.generate.memory import MemoryPlan, plan_model
from mirage.generate.providers.base import OnResult, Provider, Result, Sample, normalise_finish
from mirage.generate.providers.reply import Unanswered, answered

CHUNK = 1024  # samples per LLM call; vLLM batches within it (max_num_seqs)
#: Longest request assumed when the caller names none (calibration's short requests).
DEFAULT_LONGEST = 8192


class UnpinnedRevision(RuntimeError):
    """A vLLM model's revision is not pinned to a commit."""


class DoesNotFit(RuntimeError):
    """The GPU memory plan finds the model cannot fit on its declared GPUs (or has no chat template)."""


def check_pinned(name: str, spec: ModelSpec) -> None:
    if not spec.pinned and not spec.allow_unpinned:
        raise UnpinnedRevision(
            f"model '{name}': revision {spec.revision!r} is not pinned; set models.{name}.revision to the hub commit sha "
            f"of {spec.model_id} (or allow_unpinned: true to run anyway, unreproducibly)"
        )


def engine_kwargs(spec: ModelSpec, plan: MemoryPlan | None = None) -> dict[str, Any]:
    """Arguments for `vllm.LLM(...)` from the registry entry and its memory plan."""
    kw: dict[str, Any] = {"model": spec.model_id, "tensor_parallel_size": spec.tensor_parallel_size, "dtype": spec.dtype,
                          "seed": 0, **(plan.engine() if plan is not None else {})}
    if spec.pinned:
        kw["revision"] = spec.revision
        kw["tokenizer_revision"] = spec.revision
    if spec.quantization:
        kw["quantization"] = VLLM.kernels.get(spec.quantization, spec.quantization)
    return kw


def sampling_kwargs(s: Sample) -> dict[str, Any]:
    """Arguments for `vllm.SamplingParams(...)` for one sample (its own seed)."""
    return {"n": 1, "temperature": s.temperature, "top_p": s.top_p, "max_tokens": s.max_tokens, "seed": s.seed}


def parse_output(out: Any, latency_s: float, max_tokens: int | None = None) -> Result:
    """A vLLM RequestOutput -> Result; one without visible text is a failed call (`reply.answered`)."""
    comp = out.outputs[0]
    finish = normalise_finish(comp.finish_reason)
    try:
        answered(comp.text, finish, max_tokens)
    except Unanswered as exc:
        return Result.failure(f"no answer: {exc}", latency_s, str(out.request_id))
    return Result(text=comp.text, finish_reason=finish,
                  tokens_in=len(out.prompt_token_ids or []), tokens_out=len(comp.token_ids or []), latency_s=latency_s,
                  provider_request_id=str(out.request_id), note="vllm offline batch: latency is the whole batch's wall time")


class VLLMProvider(Provider):
    def __init__(self, name: str, spec: ModelSpec, longest_request: int | None = None) -> None:
        """`longest_request`: token bound of the longest request this run sends (prompt + max_tokens)."""
        super().__init__(name, spec)
        check_pinned(name, spec)
        self.plan = plan_model(name, spec, longest_request or DEFAULT_LONGEST)
        if not self.plan.fits:
            raise DoesNotFit(self.plan.refusal)
        for key, value in self.dialect.env.items():
            os.environ.setdefault(key, value)  # read by vLLM at import and engine start
        try:
            import vllm
        except ImportError as exc:
            raise RuntimeError("the vllm provider needs `pip install mirage-bench[vllm]` on a CUDA machine") from exc
        self._vllm = vllm
        self.llm = vllm.LLM(**engine_kwargs(spec, self.plan))

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
                on_result(s, parse_output(out, latency, s.max_tokens))
