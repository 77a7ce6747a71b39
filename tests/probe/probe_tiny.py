"""Tiny randomly initialised Llama models with a real word-level tokenizer, built in-process (no downloads)."""

from __future__ import annotations

import torch
from tokenizers import Tokenizer
from tokenizers.models import WordLevel
from tokenizers.pre_tokenizers import Whitespace
from transformers import LlamaConfig, LlamaForCausalLM, PreTrainedTokenizerFast

from mirage.probe.pairs import Pair

WORDS = ["[UNK]", "[PAD]", "two", "people", "walked", "into", "a", "the", "new", "teacher", "said", "city", "today",
         "muslim", "christian", "Attack", "attack", "attacks", "bomb", "Bombay", "terror", "terrorist", "weapon",
         "killed", "threat", "extremist", "bread", "garden", "music", "river"]
VIOLENT = ["Attack", "attack", "attacks", "bomb", "terror", "terrorist", "weapon", "killed", "threat", "extremist"]
PREFIXES = ["two people walked into a", "the new teacher said", "a city today", "the river", "people said the",
            "two new people", "the garden music", "a teacher walked into the", "bread music river", "the city said"]
N_LAYERS, PLANT, REMOVE = 8, (3, 5), 7  # lens layers 3..5 add the bias; layer 7 removes it


def make_tokenizer() -> PreTrainedTokenizerFast:
    tok = Tokenizer(WordLevel({w: i for i, w in enumerate(WORDS)}, unk_token="[UNK]"))
    tok.pre_tokenizer = Whitespace()
    return PreTrainedTokenizerFast(tokenizer_object=tok, unk_token="[UNK]", pad_token="[PAD]")


def make_pairs(focal: str = "muslim", control: str = "christian") -> list[Pair]:
    """Matched pairs whose last word is the identity (so the lens position sees it directly)."""
    return [Pair(i, f"b{i}", "T1", control, f"pf{i}", f"pc{i}", f"{pre} {focal}", f"{pre} {control}")
            for i, pre in enumerate(PREFIXES)]


def _neuron(mlp: torch.nn.Module, j: int, write: torch.Tensor) -> None:
    """Make MLP neuron j fire only on a positive flag (residual dim 0) and write `write` to the residual."""
    for proj in (mlp.gate_proj, mlp.up_proj):
        proj.weight[j] = 0
        proj.weight[j, 0] = 1.0
    mlp.down_proj.weight[:, j] = write


@torch.no_grad()
def make_model(tokenizer: PreTrainedTokenizerFast, plant: bool) -> LlamaForCausalLM:
    """Random tiny Llama (ReLU MLPs). The focal identity carries +flag in residual dim 0, the control
    -flag (same norm, invisible to the unembedding). With `plant`, one neuron in each layer of PLANT
    adds the violence direction u (mean unembedding of VIOLENT tokens) for the focal prompt only, and
    one neuron in layer REMOVE subtracts what was added (calibrated on the pairs); ReLU keeps both
    exactly zero for the control."""
    torch.manual_seed(0)
    config = LlamaConfig(vocab_size=len(WORDS), hidden_size=32, intermediate_size=64, num_hidden_layers=N_LAYERS,
                         num_attention_heads=4, num_key_value_heads=4, hidden_act="relu", max_position_embeddings=64,
                         tie_word_embeddings=False, pad_token_id=1)
    model = LlamaForCausalLM(config).eval()
    emb, head = model.model.embed_tokens.weight, model.lm_head.weight
    emb.normal_(0, 1)
    head.normal_(0, 1)
    emb[:, 0] = 0
    head[:, 0] = 0
    m, c = WORDS.index("muslim"), WORDS.index("christian")
    emb[c] = emb[m]
    emb[m, 0], emb[c, 0] = 3.0, -3.0
    if plant:
        u = head[[WORDS.index(w) for w in VIOLENT]].mean(0)
        u = u / u.norm()
        for layer in range(PLANT[0], PLANT[1] + 1):
            _neuron(model.model.layers[layer - 1].mlp, 0, u)
        removal = model.model.layers[REMOVE - 1].mlp
        _neuron(removal, 1, torch.zeros_like(u))
        added, act = _calibrate(model, tokenizer, removal, u)
        removal.down_proj.weight[:, 1] = -(added / act) * u
    return model


def _calibrate(model: LlamaForCausalLM, tokenizer: PreTrainedTokenizerFast, removal: torch.nn.Module,
               u: torch.Tensor) -> tuple[float, float]:
    """Mean planted component along u entering layer REMOVE, and the removal neuron's mean activation."""
    seen: dict[str, torch.Tensor] = {}
    hooks = [model.model.layers[REMOVE - 1].register_forward_pre_hook(lambda mod, args: seen.update(h=args[0][:, -1])),
             removal.down_proj.register_forward_pre_hook(lambda mod, args: seen.update(a=args[0][:, -1, 1]))]
    try:
        added, act = [], []
        for pair in make_pairs():
            model(**tokenizer(pair.control_text, return_tensors="pt"))
            base = float(seen["h"] @ u)
            model(**tokenizer(pair.focal_text, return_tensors="pt"))
            added.append(float(seen["h"] @ u) - base)
            act.append(float(seen["a"]))
    finally:
        for hook in hooks:
            hook.remove()
    return sum(added) / len(added), sum(act) / len(act)
