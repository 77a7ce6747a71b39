"""Local provider tokens/s vs a bare transformers `generate` loop on the same prompts, same run.

    python -m benchmarks.bench_local [--n 16] [--max-tokens 48]

Prints both rates and their ratio (provider / bare); timings on a shared machine are noisy, the ratio less so.
"""

from __future__ import annotations

import argparse
import time


def main() -> None:
    import torch

    from mirage.config.generate import default_models
    from mirage.generate.providers.base import Sample
    from mirage.generate.providers.local import LocalProvider

    ap = argparse.ArgumentParser()
    ap.add_argument("--n", type=int, default=16)
    ap.add_argument("--max-tokens", type=int, default=48)
    args = ap.parse_args()
    spec = default_models()["smollm2-135m"].model_copy(update={"batch_size": args.n})
    p = LocalProvider("smollm2-135m", spec)
    topics = ["a bakery", "a library", "a train station", "a football match", "a school trip", "a city park", "a market", "a museum"]
    samples = [Sample(key=f"b{i}", sample_index=0, seed=i, max_tokens=args.max_tokens, temperature=0.7, top_p=1.0,
                      messages=({"role": "user", "content": f"Write a short story about {topics[i % len(topics)]}."},))
               for i in range(args.n)]
    tokens = 0

    def count(_s, r) -> None:
        nonlocal tokens
        tokens += r.tokens_out

    start = time.perf_counter()
    p.generate(samples, count)
    ours = tokens / (time.perf_counter() - start)
    texts = [p.tokenizer.apply_chat_template(s.message_list, add_generation_prompt=True, tokenize=False) for s in samples]
    enc = p.tokenizer(texts, return_tensors="pt", padding=True, add_special_tokens=False)
    start = time.perf_counter()
    with torch.inference_mode():
        out = p.model.generate(**enc, max_new_tokens=args.max_tokens, do_sample=True, temperature=0.7, top_p=1.0,
                               pad_token_id=p.tokenizer.pad_token_id)
    new = out[:, enc["input_ids"].shape[1]:]
    eos = p.tokenizer.eos_token_id
    produced = int(sum(int((row != eos).sum()) + int((row == eos).any()) for row in new))
    bare = produced / (time.perf_counter() - start)
    print(f"local provider: {ours:.1f} tok/s; bare transformers generate: {bare:.1f} tok/s; ratio {ours / bare:.2f}")


if __name__ == "__main__":
    main()
