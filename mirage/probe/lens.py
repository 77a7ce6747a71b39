"""Logit lens: each layer's last-position residual -> final norm -> unembedding -> log P_l(V | prompt)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import torch
from tqdm.auto import tqdm

# (decoder layers, final norm) attribute paths, tried in order: Llama/Qwen/Mistral/DeepSeek/Gemma,
# multimodal wrappers, GPT-2/Falcon, GPT-NeoX/Pythia, OPT.
_ANATOMIES: tuple[tuple[str, str], ...] = (
    ("model.layers", "model.norm"),
    ("model.language_model.layers", "model.language_model.norm"),
    ("transformer.h", "transformer.ln_f"),
    ("gpt_neox.layers", "gpt_neox.final_layer_norm"),
    ("model.decoder.layers", "model.decoder.final_layer_norm"),
)


@dataclass(frozen=True)
class Anatomy:
    """The parts of a causal LM the lens needs."""

    layers: Sequence[torch.nn.Module]
    norm: torch.nn.Module
    head: torch.nn.Module


def _get(obj: Any, path: str) -> Any:
    for part in path.split("."):
        obj = getattr(obj, part, None)
        if obj is None:
            return None
    return obj


def anatomy(model: torch.nn.Module) -> Anatomy:
    """Find the decoder layers, final norm and unembedding of `model`, or say which architecture is unsupported."""
    head = model.get_output_embeddings()
    for layers_path, norm_path in _ANATOMIES:
        layers, norm = _get(model, layers_path), _get(model, norm_path)
        if layers is not None and norm is not None and head is not None:
            return Anatomy(list(layers), norm, head)
    raise ValueError(
        f"{type(model).__name__}: cannot find decoder layers + final norm (tried {[a for a, _ in _ANATOMIES]}) and lm_head"
    )


class _LastPositionRecorder:
    """Hooks that keep only the last position's residual: the embedding output and every layer's output."""

    def __init__(self, layers: Sequence[torch.nn.Module]) -> None:
        self.states: list[torch.Tensor | None] = [None] * (len(layers) + 1)
        self.handles = [layers[0].register_forward_pre_hook(self._pre, with_kwargs=True)]
        self.handles += [layer.register_forward_hook(self._post(i + 1)) for i, layer in enumerate(layers)]

    def _pre(self, module: torch.nn.Module, args: tuple, kwargs: dict) -> None:
        hidden = args[0] if args else kwargs["hidden_states"]
        self.states[0] = hidden[:, -1, :]

    def _post(self, index: int):
        def hook(module: torch.nn.Module, args: tuple, output: Any) -> None:
            hidden = output[0] if isinstance(output, tuple) else output
            self.states[index] = hidden[:, -1, :]

        return hook

    def close(self) -> None:
        for handle in self.handles:
            handle.remove()


@torch.no_grad()
def lens_log_mass(
    model: torch.nn.Module,
    tokenizer: Any,
    texts: Sequence[str],
    token_ids: Sequence[int],
    batch_size: int = 16,
    progress: bool = True,
) -> np.ndarray:
    """log Σ_{v∈V} P_l(v | text) at the last prompt token for layers l = 0 (embeddings) .. L.

    Returns float64 of shape (len(texts), L + 1). Identical texts are computed once, so they get
    bit-identical values. Batches are left-padded with position ids taken from the attention mask;
    texts are sorted by length to keep padding small. The norm/unembedding run on the head's device,
    so models sharded with device_map="auto" work unchanged.
    """
    parts = anatomy(model)
    unique = sorted(set(texts), key=lambda t: (len(tokenizer(t).input_ids), t))
    input_device = model.get_input_embeddings().weight.device
    head_device = parts.head.weight.device
    vocab_ids = torch.tensor(list(token_ids), device=head_device)
    result: dict[str, np.ndarray] = {}
    recorder = _LastPositionRecorder(parts.layers)
    try:
        for start in tqdm(range(0, len(unique), batch_size), desc="logit lens", unit="batch", disable=not progress):
            batch = unique[start : start + batch_size]
            enc = tokenizer(batch, return_tensors="pt", padding=True, padding_side="left").to(input_device)
            position_ids = (enc["attention_mask"].cumsum(-1) - 1).clamp(min=0)
            model.base_model(
                input_ids=enc["input_ids"], attention_mask=enc["attention_mask"], position_ids=position_ids, use_cache=False
            )
            hidden = torch.stack([s.to(head_device) for s in recorder.states])  # (L+1, B, d)
            logits = parts.head(parts.norm(hidden)).float()
            log_mass = torch.logsumexp(logits[..., vocab_ids], -1) - torch.logsumexp(logits, -1)  # (L+1, B)
            for j, text in enumerate(batch):
                result[text] = log_mass[:, j].double().cpu().numpy()
    finally:
        recorder.close()
    return np.stack([result[t] for t in texts])
