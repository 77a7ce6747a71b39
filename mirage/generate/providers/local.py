"""`local` provider: transformers on CPU/GPU with a batched, per-sample-seeded sampling loop.

Each row draws its tokens from its own `torch.Generator` seeded with the sample's seed, one draw per
step, so a sample's tokens depend only on its input, settings and seed, not on which other samples
share its batch: a resumed run reproduces an uninterrupted one. (Batched float arithmetic can differ
from unbatched in the last bits; a draw flips only if it lands within that distance of a token
boundary.) Finished rows are dropped from the batch and its KV cache as they stop.
"""

from __future__ import annotations

import inspect
import time
from functools import lru_cache
from typing import Any

from mirage.config.generate import ModelSpec
from mirage.generate.providers.base import OnResult, Provider, Result, Sample


@lru_cache(maxsize=2)
def _load(model_id: str, revision: str | None, gguf_file: str | None, dtype: str) -> tuple[Any, Any]:
    import torch

    from mirage.hf import load_causal_lm

    device = "cuda" if torch.cuda.is_available() else None
    model, tok = load_causal_lm(model_id, revision, gguf_file, dtype=dtype, device_map=device)
    return model, tok


class LocalProvider(Provider):
    """Batched sampling with transformers; loads the model on first use (cached per process)."""

    def __init__(self, name: str, spec: ModelSpec) -> None:
        super().__init__(name, spec)
        self.model, self.tokenizer = _load(spec.model_id, spec.revision, spec.gguf_file, spec.dtype)
        eos = self.model.generation_config.eos_token_id
        self.eos_ids = set(eos if isinstance(eos, list) else [eos if eos is not None else self.tokenizer.eos_token_id])
        # transformers 5 renamed forward()'s `past_key_values` to `cache` and warns (FutureWarning, on every run's
        # console) when the old name is used; 4.x knows only `past_key_values`. Pass the name this version takes.
        takes = inspect.signature(self.model.forward).parameters
        self.cache_arg = "cache" if "cache" in takes else "past_key_values"
        # Only the last position's logits are drawn from: on a prompt of W tokens the full (rows x W x vocab) float
        # tensor costs about a fifth of the prefill's compute and ~2 GB at the demo's batch of 48 (transformers >= 4.50).
        self.last_logits = {"logits_to_keep": 1} if "logits_to_keep" in takes else {}

    def encode(self, sample: Sample) -> list[int]:
        """Token ids sent to the model: chat template for chat mode, the raw prompt for completion mode."""
        if self.spec.mode == "chat":
            text = self.tokenizer.apply_chat_template(sample.message_list, add_generation_prompt=True, tokenize=False)
            return self.tokenizer(text, add_special_tokens=False)["input_ids"]
        return self.tokenizer(sample.prompt)["input_ids"]

    def generate(self, samples: list[Sample], on_result: OnResult) -> None:
        encoded = [(s, self.encode(s)) for s in samples]
        # Same settings per batch; similar lengths together to limit padding.
        encoded.sort(key=lambda e: (e[0].max_tokens, e[0].temperature, e[0].top_p, len(e[1]), e[0].key))
        size = self.spec.batch_size
        i = 0
        while i < len(encoded):
            head = encoded[i][0]
            j = i
            while j < len(encoded) and j - i < size and (encoded[j][0].max_tokens, encoded[j][0].temperature, encoded[j][0].top_p) == (
                head.max_tokens, head.temperature, head.top_p
            ):
                j += 1
            self._generate_batch(encoded[i:j], on_result)
            i = j

    def _generate_batch(self, batch: list[tuple[Sample, list[int]]], on_result: OnResult) -> None:
        import torch
        from transformers import DynamicCache

        start = time.perf_counter()
        device = self.model.device
        pad = self.tokenizer.pad_token_id
        width = max(len(ids) for _, ids in batch)
        input_ids = torch.tensor([[pad] * (width - len(ids)) + ids for _, ids in batch], device=device)
        mask = torch.tensor([[0] * (width - len(ids)) + [1] * len(ids) for _, ids in batch], device=device)
        gens = []
        for s, _ in batch:
            g = torch.Generator(device="cpu")
            g.manual_seed(s.seed if s.seed is not None else 0)
            gens.append(g)
        first = batch[0][0]
        alive = list(range(len(batch)))  # batch positions still generating
        out_tokens: list[list[int]] = [[] for _ in batch]
        stopped = [False] * len(batch)
        cache = DynamicCache()
        step_ids = input_ids
        positions = (mask.cumsum(-1) - 1).clamp(min=0)
        with torch.inference_mode():
            for step in range(first.max_tokens):
                logits = self.model(input_ids=step_ids, attention_mask=mask, position_ids=positions,
                                    use_cache=True, **{self.cache_arg: cache}, **self.last_logits).logits[:, -1, :].float().cpu()
                next_ids = [self._draw(logits[r], first, gens[b]) for r, b in enumerate(alive)]
                if self.on_tokens:
                    self.on_tokens(len(alive))
                keep = []
                for r, b in enumerate(alive):
                    tok = next_ids[r]
                    if tok in self.eos_ids:
                        stopped[b] = True
                    else:
                        out_tokens[b].append(tok)
                        keep.append(r)
                if not keep or step == first.max_tokens - 1:
                    break
                if len(keep) < len(alive):
                    idx = torch.tensor(keep, device=device)
                    cache.batch_select_indices(idx)
                    mask, positions = mask[idx], positions[idx]
                    alive = [alive[r] for r in keep]
                    next_ids = [next_ids[r] for r in keep]
                step_ids = torch.tensor(next_ids, device=device).unsqueeze(-1)
                mask = torch.cat([mask, torch.ones_like(mask[:, :1])], dim=-1)
                positions = positions[:, -1:] + 1
        latency = time.perf_counter() - start
        for b, (s, ids) in enumerate(batch):
            on_result(s, Result(
                text=self.tokenizer.decode(out_tokens[b], skip_special_tokens=True),
                finish_reason="stop" if stopped[b] else "length",
                tokens_in=len(ids), tokens_out=len(out_tokens[b]) + int(stopped[b]), latency_s=latency,
                note=f"batched: latency is the wall time of a batch of {len(batch)}",
            ))

    @staticmethod
    def _draw(logits: Any, s: Sample, gen: Any) -> int:
        """One token: greedy at temperature 0, else temperature + top-p sampling with the row's generator."""
        import torch

        if s.temperature == 0:
            return int(logits.argmax())
        probs = torch.softmax(logits / s.temperature, dim=-1)
        if s.top_p < 1.0:
            sorted_p, order = probs.sort(descending=True)
            drop = sorted_p.cumsum(-1) - sorted_p > s.top_p
            sorted_p[drop] = 0.0
            probs = torch.zeros_like(probs).scatter_(0, order, sorted_p)
        return int(torch.multinomial(probs, 1, generator=gen))

    def close(self) -> None:
        """The model stays cached for the process (judge calls reuse it)."""
