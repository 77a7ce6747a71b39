"""Chat completions through the registry and the store, for programmatic callers (the LLM judge).

A `ChatSession` opens the model's store once and answers any number of batches of conversations through a
`GenerationRun`: every call is keyed like a generation sample (sample index 0, seed derived from the
conversation), new records go to the store's `judge` partition, and a repeated run is served from the store
without a single request. Each batch holds the partition's writer lock while it plans and sends, so two processes
asking the same judge never pay for one call twice.
"""

from __future__ import annotations

from mirage import artefacts
from mirage.config.generate import ModelSpec
from mirage.generate.runner import GenerationRun, Settings
from mirage.generate.store import Store
from mirage.hashing import content_hash

JUDGE_PARTITION = "judge"  # LLM-judge calls
PILOT_PARTITION = "pilot"  # `mirage corpus --pilot` calls


class ChatSession:
    """One registry model answering conversations (lists of {role, content}) through its store."""

    def __init__(self, name: str, spec: ModelSpec, root_seed: int, store_dir: str | None = None,
                 partition: str = JUDGE_PARTITION, lock_wait_s: float = 3600.0) -> None:
        self.name, self.spec, self.root_seed = name, spec, root_seed
        self.partition, self.lock_wait_s = partition, lock_wait_s
        self.store = Store.open(store_dir or artefacts.store(name), partition=partition)

    def complete(self, conversations: list[list[dict]], *, max_tokens: int, temperature: float = 0.0,
                 retry_rounds: int = 2) -> list[str]:
        """One reply per conversation; raises RuntimeError naming the errors if any call still failed."""
        with self.store.locked(self.partition, self.lock_wait_s):
            run = self._run(conversations, max_tokens, temperature)
            try:
                run.run(retry_rounds)
            finally:
                run.close()
            failed = run.failures()
            if run.outages:
                raise RuntimeError(f"{self.name}: stopped: {run.stop_reason()}; {len(failed)} of {len(run.rows)} call(s) "
                                   "wait (rerun sends exactly those)")
            if failed:
                raise RuntimeError(f"{len(failed)} of {len(run.rows)} {self.name} call(s) failed (rerun retries them): "
                                   f"{sorted(set(failed.values()))[:3]}")
            return [r["text"] for r in run.view()]

    def owed(self, conversations: list[list[dict]], *, max_tokens: int, temperature: float = 0.0) -> int:
        """How many of these conversations (distinct) have no reply in the store: what `complete` would send."""
        return len(self._run(conversations, max_tokens, temperature).owed_calls())

    def _run(self, conversations: list[list[dict]], max_tokens: int, temperature: float) -> GenerationRun:
        st = Settings(n_samples=1, max_tokens=max_tokens, temperature=temperature, top_p=1.0, root_seed=self.root_seed)
        rows = []
        for conv in conversations:
            sent = {"messages": conv} if self.spec.mode == "chat" else {"prompt": "\n\n".join(m["content"] for m in conv)}
            rows.append({"row_id": "j", "request_id": "j" + content_hash(sent), "condition": "judge", **sent})
        return GenerationRun(self.name, self.spec, st, rows, self.store, where=f"{self.name} judge calls")

    def close(self) -> None:
        self.store.close()


def open_session(model: str, params_path: str = "params.yaml", store_dir: str | None = None,
                 partition: str = JUDGE_PARTITION) -> ChatSession:
    """A ChatSession for registry model `model` as configured in params.yaml."""
    from mirage.params import load_params

    params = load_params(params_path)
    if model not in params.models:
        raise KeyError(f"unknown model '{model}'; registry has {', '.join(sorted(params.models))}")
    return ChatSession(model, params.models[model], params.generate.seed, store_dir, partition,
                       params.generate.lock_wait_s)


def complete_chat(model: str, conversations: list[list[dict]], *, max_tokens: int, temperature: float = 0.0,
                  params_path: str = "params.yaml", partition: str = JUDGE_PARTITION, store_dir: str | None = None) -> list[str]:
    """One-shot form of ChatSession.complete (opens and closes the store around one batch)."""
    session = open_session(model, params_path, store_dir, partition)
    try:
        return session.complete(conversations, max_tokens=max_tokens, temperature=temperature)
    finally:
        session.close()
