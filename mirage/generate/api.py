"""Programmatic chat completions through the registry and the store (used by the LLM-judge labeler).

Calls are keyed like every other sample (sample_index 0, seed derived from the conversation), so a
repeated judge run is served from `{generate.out_dir}/{model}/store` (new records in its `judge/` partition)
without new requests.
"""

from __future__ import annotations

from pathlib import Path

from mirage.generate.providers import provider_class
from mirage.generate.runner import Runner, Settings, make_sample
from mirage.generate.store import Store
from mirage.hashing import content_hash
from mirage.params import load_params


def complete_chat(model: str, conversations: list[list[dict]], *, max_tokens: int, temperature: float = 0.0,
                  params_path: str = "params.yaml") -> list[str]:
    """One response text per conversation (lists of {role, content}); raises RuntimeError if any call failed."""
    params = load_params(params_path)
    if model not in params.models:
        raise KeyError(f"unknown model '{model}'; registry has {', '.join(sorted(params.models))}")
    spec = params.models[model]
    seeded = provider_class(spec.provider).seeded
    st = Settings(n_samples=1, max_tokens=max_tokens, temperature=temperature, top_p=1.0, root_seed=params.generate.seed)
    samples, meta = [], {}
    for conv in conversations:
        sent = {"messages": conv} if spec.mode == "chat" else {"prompt": "\n\n".join(m["content"] for m in conv)}
        rid = "j" + content_hash(sent)
        s = make_sample(spec, seeded, rid, 0, sent, st)
        samples.append(s)
        meta[s.key] = {"request_id": rid, "turn": 1, "purpose": "complete_chat"}
    with Store.open(Path(params.generate.out_dir) / model / "store", partition="judge") as store:
        runner = Runner(model, spec, store)
        try:
            runner.run(samples, meta)
        finally:
            runner.close()
        failed = [s.key for s in samples if s.key not in store.done]
        if failed:
            errors = {store.failed[k]["error"] for k in failed if k in store.failed}
            raise RuntimeError(f"{len(failed)} of {len(samples)} {model} call(s) failed (rerun retries them): {sorted(errors)[:3]}")
        return [store.done[s.key]["text"] for s in samples]
