"""GPU memory plan of an open model before anything launches: weights plus the KV cache of the protocol's longest
request against the GPUs the registry declares, and the vLLM settings that follow from it.

vLLM sizes its KV cache for the model's whole context (`max_position_embeddings`: 131,072 tokens for Llama 3.3,
10M for Llama 4 Scout) unless `max_model_len` says otherwise, and refuses to start when one such sequence does
not fit in `gpu_memory_utilization` x memory after the weights. The protocol never sends more than its longest
request, so the plan sets `max_model_len` to that bound and raises `gpu_memory_utilization` (0.90 by default, vLLM's
own) up to 0.95 where the bound needs it; a model that cannot fit even then is refused, naming what would fit.

Per GPU (tensor parallel size = gpus): weights = parameters x bytes per parameter of the checkpoint / gpus (AWQ:
4-bit groups of 128 with fp16 scales and 4-bit zeros, embeddings and lm_head at 16 bit; FP8: one byte, embeddings
and lm_head at 16 bit); KV per token = 2 (K and V) x layers x ceil(kv heads / gpus) x head dim x 2 bytes, or for
MLA (DeepSeek) layers x (kv_lora_rank + qk_rope_head_dim) x 2 bytes on every GPU (vLLM replicates the latent
cache), plus V3.2's indexer keys; OVERHEAD_GIB covers the CUDA context, NCCL buffers, the activation peak of
vLLM's profiling pass and CUDA graphs. The longest request is bounded by its UTF-8 bytes (a byte-level BPE token,
as in every registry model's tokenizer, covers at least one byte) plus chat-template tokens, plus max_tokens; an
M4 second turn re-reads its first turn and answer. The probe (transformers, device_map="auto") needs the same
weights on the same GPUs, plus a small activation allowance.

Architecture facts come from each model's config.json at the pinned commit and its model card (parameter
counts); GPU memory is what nvidia-smi reports (H100 SXM 80GB: 81,559 MiB; H200: 143,771 MiB; A100 80GB: 81,920
MiB). docs/generation.md ("GPU memory plan") lists the sources.
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass, field
from typing import Any, Literal

from mirage.config.generate import GPU_GIB, ModelSpec

UTILIZATION, MAX_UTILIZATION = 0.90, 0.95
MIN_SEQUENCES = 8  # worst-case sequences of max_model_len the KV cache should hold at once (pages are shared)
OVERHEAD_GIB = 4.0
PROBE_ACTIVATIONS_GIB = 4.0
TEMPLATE_TOKENS, TEMPLATE_TOKENS_PER_MESSAGE = 64, 16
LEN_STEP = 256  # max_model_len is rounded up to a multiple of this
GIB = 2**30
TP_SIZES = (1, 2, 4, 8)  # tensor parallel sizes of one node


@dataclass(frozen=True)
class Arch:
    """What the memory plan needs to know of a checkpoint."""

    params_b: float  # parameters vLLM loads, billions (model card; DeepSeek's multi-token-prediction layer is not loaded)
    layers: int
    max_position: int  # config.json max_position_embeddings
    checkpoint: Literal["bf16", "fp8", "awq"]
    kv_heads: int = 0  # num_key_value_heads (GQA); 0 for MLA
    head_dim: int = 128
    mla_dim: int = 0  # MLA: kv_lora_rank + qk_rope_head_dim, cached per token and layer on every GPU
    extra_bytes_per_token_layer: int = 0  # DeepSeek V3.2's indexer keys (fp8 + fp32 scale)
    sixteen_bit_b: float = 0.0  # embeddings + lm_head, billions: kept at 16 bit in a quantised checkpoint
    chat_template: bool = True  # tokenizer_config.json carries a Jinja chat template (vLLM's LLM.chat needs it)
    quantised: str | None = None  # registry name of a 4-bit single-GPU variant, for refusals


LLAMA33 = dict(params_b=70.6, layers=80, kv_heads=8, max_position=131_072, sixteen_bit_b=2.10)
QWEN25 = dict(params_b=72.7, layers=80, kv_heads=8, max_position=32_768, sixteen_bit_b=2.49)
DEEPSEEK = dict(params_b=671.0, layers=61, mla_dim=512 + 64, max_position=163_840, checkpoint="fp8", sixteen_bit_b=1.85)
ARCHS: dict[str, Arch] = {
    "meta-llama/Llama-3.3-70B-Instruct": Arch(**LLAMA33, checkpoint="bf16", quantised="llama-3.3-70b-awq"),
    "casperhansen/llama-3.3-70b-instruct-awq": Arch(**LLAMA33, checkpoint="awq"),
    "Qwen/Qwen2.5-72B-Instruct": Arch(**QWEN25, checkpoint="bf16", quantised="qwen2.5-72b-awq"),
    "Qwen/Qwen2.5-72B-Instruct-AWQ": Arch(**QWEN25, checkpoint="awq"),
    "deepseek-ai/DeepSeek-V3": Arch(**DEEPSEEK),
    # V3.2 ships no Jinja chat template (its repository's encoding/ scripts build the prompt instead)
    "deepseek-ai/DeepSeek-V3.2": Arch(**DEEPSEEK, extra_bytes_per_token_layer=128 + 4, chat_template=False),
    "meta-llama/Llama-4-Scout-17B-16E-Instruct": Arch(params_b=109.0, layers=48, kv_heads=8, max_position=10_485_760,
                                                      checkpoint="bf16"),
    "Qwen/Qwen3-235B-A22B-Instruct-2507": Arch(params_b=235.0, layers=94, kv_heads=4, max_position=262_144,
                                               checkpoint="bf16"),
}


def weight_gib(arch: Arch, spec: ModelSpec) -> float:
    """Bytes of the weights as loaded, in GiB, over all GPUs."""
    rest = (arch.params_b - arch.sixteen_bit_b) * 1e9
    if arch.checkpoint == "awq" or spec.quantization in ("awq", "gptq"):
        total = rest * (0.5 + 2.5 / 128) + arch.sixteen_bit_b * 1e9 * 2
    elif arch.checkpoint == "fp8" or spec.quantization == "fp8":
        total = rest * 1.0 + arch.sixteen_bit_b * 1e9 * 2
    else:
        total = arch.params_b * 1e9 * (4 if spec.dtype == "float32" else 2)
    return total / GIB


def kv_bytes_per_token(arch: Arch, gpus: int) -> int:
    """KV-cache bytes one token takes on each GPU (16-bit cache)."""
    if arch.mla_dim:
        return arch.layers * (arch.mla_dim * 2 + arch.extra_bytes_per_token_layer)
    return 2 * arch.layers * math.ceil(arch.kv_heads / gpus) * arch.head_dim * 2


def input_bound(sent: Any) -> int:
    """Upper bound of the tokens of a prompt or message list: UTF-8 bytes plus chat-template tokens."""
    if isinstance(sent, str):
        return len(sent.encode()) + TEMPLATE_TOKENS
    return TEMPLATE_TOKENS + sum(len((m.get("content") or "").encode()) + TEMPLATE_TOKENS_PER_MESSAGE for m in sent or ())


def request_bound(row: dict, max_tokens: int, mode: str) -> int:
    """Upper bound of the tokens a request row may occupy (prompt + answer), its M4 second turn included."""
    field_ = "messages" if mode == "chat" else "prompt"
    first = input_bound(row.get(field_)) + max_tokens
    follow = row.get("followup") if mode == "chat" else row.get("followup_prompt")
    return first + (input_bound(follow) + max_tokens if follow else 0)


def longest_request(rows_by_max_tokens: list[tuple[list[dict], int]], mode: str) -> int:
    """The longest request bound over (rows, max_tokens) groups (one per condition)."""
    return max((request_bound(r, mt, mode) for rows, mt in rows_by_max_tokens for r in rows), default=0)


@dataclass
class MemoryPlan:
    """One model's plan on its declared GPUs; `refusal` is set when it cannot fit."""

    model: str
    model_id: str
    gpus: int
    gpu_type: str
    longest_request: int
    max_model_len: int | None = None
    gpu_memory_utilization: float | None = None
    weights_gib_per_gpu: float | None = None
    kv_gib_per_gpu: float | None = None  # one sequence of max_model_len
    overhead_gib: float = OVERHEAD_GIB
    sequences: int | None = None  # sequences of max_model_len the KV budget holds at once (at least; pages are shared)
    probe_fits: bool | None = None
    refusal: str | None = None
    note: str = ""
    options: list[str] = field(default_factory=list)

    @property
    def fits(self) -> bool:
        return self.refusal is None

    def engine(self) -> dict[str, Any]:
        """vllm.LLM arguments set from the plan."""
        out: dict[str, Any] = {}
        if self.max_model_len:
            out["max_model_len"] = self.max_model_len
        if self.gpu_memory_utilization:
            out["gpu_memory_utilization"] = self.gpu_memory_utilization
        return out

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


def _budget(arch: Arch, spec: ModelSpec, gpus: int, gpu_type: str, length: int, util: float | None
            ) -> tuple[float, float, float | None, int]:
    """(weights/GPU, KV of one sequence/GPU in GiB, the utilisation chosen or None when one sequence cannot fit,
    worst-case sequences at once). Chosen: 0.90 when MIN_SEQUENCES fit there, else the least up to 0.95 that holds
    them, else 0.95 when one fits; a utilisation the registry sets is taken as it is."""
    gib = GPU_GIB[gpu_type]
    weights = weight_gib(arch, spec) / gpus
    kv = kv_bytes_per_token(arch, gpus) * length / GIB

    def need(seqs: int) -> float:
        return (weights + OVERHEAD_GIB + seqs * kv) / gib

    if util is None:
        many = math.ceil(need(MIN_SEQUENCES) * 100) / 100
        util = UTILIZATION if many <= UTILIZATION else many if many <= MAX_UTILIZATION else MAX_UTILIZATION
    if need(1) > util:
        return weights, kv, None, 0
    return weights, kv, util, int((util * gib - weights - OVERHEAD_GIB) // kv) if kv else 0


def plan_model(name: str, spec: ModelSpec, longest: int) -> MemoryPlan:
    """The plan of registry entry `name` for requests of at most `longest` tokens (prompt + answer)."""
    arch = ARCHS.get(spec.model_id)
    length = spec.max_model_len or math.ceil(max(longest, 1) / LEN_STEP) * LEN_STEP
    plan = MemoryPlan(name, spec.model_id, spec.gpus, spec.gpu_type, longest)
    if arch is None:
        plan.max_model_len = length
        plan.note = f"no architecture facts for {spec.model_id} (mirage/generate/memory.py ARCHS): memory not checked"
        return plan
    if not arch.chat_template and spec.mode == "chat":
        plan.refusal = (f"{name}: {spec.model_id} ships no chat template, so vLLM's LLM.chat cannot render its requests; "
                        f"use a model that has one, or mode: completion with prompts rendered by its own encoder")
        return plan
    if length > arch.max_position or length < longest:
        most = min(arch.max_position, spec.max_model_len or arch.max_position)
        plan.refusal = f"{name}: the longest request needs up to {longest} tokens; max_model_len would be {most}"
        return plan
    plan.max_model_len = length
    weights, kv, util, seqs = _budget(arch, spec, spec.gpus, spec.gpu_type, length, spec.gpu_memory_utilization)
    plan.weights_gib_per_gpu, plan.kv_gib_per_gpu = round(weights, 1), round(kv, 2)
    plan.gpu_memory_utilization, plan.sequences = util, seqs
    gib = GPU_GIB[spec.gpu_type]
    plan.probe_fits = probe_fits(arch, spec, spec.gpus, spec.gpu_type)
    if util is None:
        plan.options = alternatives(arch, spec, length)
        plan.refusal = (f"{name} does not fit on {spec.gpus}x {spec.gpu_type}: {weights:.1f} GiB of weights + {kv:.2f} GiB "
                        f"of KV cache for {length} tokens + {OVERHEAD_GIB:g} GiB overhead per GPU > "
                        f"{spec.gpu_memory_utilization or MAX_UTILIZATION:g} x {gib:g} GiB; would fit: "
                        + ("; ".join(plan.options) or "nothing on one node"))
    return plan


def probe_fits(arch: Arch, spec: ModelSpec, gpus: int, gpu_type: str) -> bool:
    """Whether the probe's load (transformers, device_map="auto" over `gpus`) holds the weights and its
    activations within MAX_UTILIZATION of each GPU."""
    return weight_gib(arch, spec) / gpus + PROBE_ACTIVATIONS_GIB <= MAX_UTILIZATION * GPU_GIB[gpu_type]


def probe_refusal(name: str, spec: ModelSpec) -> str | None:
    """One line refusing the probe of registry entry `name` on its declared GPUs when its weights and activations
    cannot fit there, naming what would (more GPUs of its kind, a larger kind, its 4-bit variant); None when it
    fits, runs on CPU (gpus 0) or its architecture is not known here (then nothing is checked)."""
    arch = ARCHS.get(spec.model_id)
    if arch is None or spec.gpus == 0 or probe_fits(arch, spec, spec.gpus, spec.gpu_type):
        return None
    options = []
    more = next((n for n in TP_SIZES if n > spec.gpus and probe_fits(arch, spec, n, spec.gpu_type)), None)
    if more:
        options.append(f"gpus: {more}")
    for gpu_type, gib in GPU_GIB.items():
        n = next((n for n in TP_SIZES if probe_fits(arch, spec, n, gpu_type)), None)
        if gib > 1.1 * GPU_GIB[spec.gpu_type] and n and (more is None or n < more):
            options.append(f"gpus: {n}, gpu_type: {gpu_type}")
    if arch.quantised:
        options.append(f"the 4-bit variant {arch.quantised}")
    weights = weight_gib(arch, spec) / spec.gpus
    return (f"probe of {name} does not fit on {spec.gpus}x {spec.gpu_type}: {weights:.1f} GiB of weights + "
            f"{PROBE_ACTIVATIONS_GIB:g} GiB of activations per GPU > {MAX_UTILIZATION:g} x {GPU_GIB[spec.gpu_type]:g} "
            "GiB; would fit: " + ("; ".join(options) or "nothing on one node"))


def alternatives(arch: Arch, spec: ModelSpec, length: int) -> list[str]:
    """What would fit on one node: more GPUs of the declared kind; a larger kind of GPU where it needs fewer (or the
    declared kind cannot hold it at all); the 4-bit variant."""
    def smallest(gpu_type: str, above: int) -> int | None:
        return next((tp for tp in TP_SIZES if tp > above and _budget(arch, spec, tp, gpu_type, length, None)[2]), None)

    out, best = [], smallest(spec.gpu_type, spec.gpus)
    if best:
        out.append(f"gpus: {best}, tensor_parallel_size: {best}")
    for gpu_type, gib in GPU_GIB.items():
        tp = smallest(gpu_type, 0) if gib > 1.1 * GPU_GIB[spec.gpu_type] else None
        if tp and (best is None or tp < best):
            out.append(f"gpus: {tp}, tensor_parallel_size: {tp}, gpu_type: {gpu_type}")
    if arch.quantised:
        out.append(f"the 4-bit variant {arch.quantised}")
    return out


def plan_models(params: Any, names: list[str], rows_by_condition: dict[str, list[dict]],
                max_tokens: dict[str, int]) -> list[MemoryPlan]:
    """Plans of the open (vllm) models among `names`, for the slice's requests."""
    out = []
    for name in names:
        spec = params.models[name]
        if spec.provider != "vllm":
            continue
        longest = longest_request([(rows_by_condition[c], max_tokens[c]) for c in rows_by_condition], spec.mode)
        out.append(plan_model(name, spec, longest))
    return out


def format_plans(plans: list[MemoryPlan]) -> str:
    """The plan as text: one line per model, a refusal line under each that cannot fit."""
    if not plans:
        return ""
    lines = ["GPU memory plan (per GPU; vLLM settings set from it):"]
    for p in plans:
        head = f"  {p.model}: {p.gpus}x {p.gpu_type}"
        if p.refusal:
            lines.append(f"{head}: REFUSED: {p.refusal}")
        elif p.weights_gib_per_gpu is None:
            lines.append(f"{head}: max_model_len {p.max_model_len}; {p.note}")
        else:
            lines.append(f"{head}: weights {p.weights_gib_per_gpu} GiB + KV {p.kv_gib_per_gpu} GiB/sequence + overhead "
                         f"{p.overhead_gib:g} GiB; max_model_len {p.max_model_len} (longest request {p.longest_request} "
                         f"tokens), gpu_memory_utilization {p.gpu_memory_utilization}, >= {p.sequences} sequences at once; "
                         f"probe {'fits' if p.probe_fits else 'does not fit'}")
    return "\n".join(lines)
