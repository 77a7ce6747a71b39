"""Whether a model may send, judged on what a job must send.

A model whose completion store already holds every sample a job needs runs without a key and even when its
snapshot is retired: nothing is sent. Only a model that would have to send must be able to: pinned, not
retired (today < `retires`) and with its API key in the environment. What must be sent is read from the store's
key index (membership only; a stored M4 first turn is read to key its second turn), exactly as the job itself
plans it (`GenerationRun.owed_calls`). `mirage generate` applies the rule before any call
(`GenerationRun.refuse_if_blocked`); a whole slice, its LLM judge included, is checked by mirage/readiness.py.
"""

from __future__ import annotations

import datetime as dt
import os
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from mirage import artefacts
from mirage.config.generate import ModelSpec

#: Providers whose official endpoints (no base_url) need a key; a base_url server needs one only with api_key_env.
_KEYED = ("openai", "anthropic")
CACHED, SENDABLE, NEEDS_KEY, RETIRED, UNPINNED = "cached", "sendable", "needs key", "retired: release only", "not pinned"


class NotReady(RuntimeError):
    """A job would have to send calls its model may not send (an environment failure: exit 1)."""


def send_blockers(name: str, spec: ModelSpec, today: dt.date, environ: Mapping[str, str] | None) -> dict[str, str]:
    """Why registry entry `name` may not send requests today, by status (empty when it may); keys are not checked
    when `environ` is None."""
    out = {}
    if spec.retires is not None and today >= spec.retires:  # a key would not help: checked no further
        return {RETIRED: f"{spec.model_id} was retired on {spec.retires.isoformat()}"}
    if not spec.pinned and not spec.allow_unpinned:
        out[UNPINNED] = (f"models.{name}.revision is not pinned ({spec.revision or 'empty'}); set the hub commit sha, dated "
                         f"API snapshot or sha256 of the weights (or allow_unpinned: true, results then not reproducible)")
    needs_key = spec.api_key_env or (spec.provider in _KEYED and not spec.base_url)
    if environ is not None and needs_key and not (spec.api_key_env and environ.get(spec.api_key_env, "").strip()):
        out[NEEDS_KEY] = (f"no API key (set the environment variable {spec.api_key_env})" if spec.api_key_env
                          else f"no API key (set models.{name}.api_key_env to the variable holding its key)")
    return out


def status(blockers: Mapping[str, str], to_send: int) -> str:
    """cached (nothing to send) | retired: release only | not pinned | needs key | sendable."""
    if not to_send:
        return CACHED
    return next((s for s in (RETIRED, UNPINNED, NEEDS_KEY) if s in blockers), SENDABLE)


@dataclass
class Need:
    """What one model owes on a slice: missing and total samples per condition (None: not counted, the store being
    empty or the model able to send)."""

    name: str
    by_condition: dict[str, tuple[int, int]] | None
    store_empty: bool
    blockers: dict[str, str] = field(default_factory=dict)
    key_env: str | None = None  # the variable to set, when a missing key is a blocker
    unit: str = "samples"  # what is owed: generation samples, or an LLM judge's calls

    @property
    def missing(self) -> int | None:
        return None if self.by_condition is None else sum(m for m, _ in self.by_condition.values())

    @property
    def total(self) -> int | None:
        return None if self.by_condition is None else sum(t for _, t in self.by_condition.values())

    @property
    def refused(self) -> bool:
        """Cannot run: it must send (missing samples, or an empty store) and may not."""
        return bool(self.blockers) and (self.store_empty or bool(self.missing))

    def describe(self, slice_name: str) -> str:
        """One line: the model, what it lacks (of how many), and why it cannot send it."""
        if self.by_condition is None:
            owed = f"its store holds no {'completions' if self.unit == 'samples' else 'replies'}, so every one of the slice's {self.unit} would be sent"
        else:
            parts = ", ".join(f"{c} {m}/{t}" for c, (m, t) in self.by_condition.items() if m)
            owed = f"{self.missing} of {self.total} {self.unit} missing from its store ({parts})"
        return f"{self.name} on {slice_name}: {owed}, and it cannot send them: {'; '.join(self.blockers.values())}"


def missing_samples(run: Any) -> int:
    """Samples of a GenerationRun with at least one call not in its store."""
    return len({(rid, i) for rid, i, _ in run.owed_calls()})


def request_files(requests_dir: str | os.PathLike | None, conditions: Iterable[str]) -> dict[str, Path]:
    """Condition -> the rendered requests file in `requests_dir` (default: the pipeline's)."""
    folder = Path(requests_dir or artefacts.requests_dir())
    return {c: folder / Path(artefacts.requests(c)).name for c in conditions}


def refusal(needs: list[Need], slice_name: str, source: str = "params.yaml") -> str:
    """The message naming every refused model, how many samples it lacks, and the ways out."""
    refused = [n for n in needs if n.refused]
    keys = sorted({n.key_env for n in refused if NEEDS_KEY in n.blockers and n.key_env})
    ways = [f"`dvc pull --with-deps {slice_name or '<slice>'}` (released completions: nothing is then sent)"]
    if keys:
        ways.append(f"set {' / '.join(keys)}")
    ways.append("choose a current snapshot or model set (`--config model_set=current`, `mirage --model-set current ...`; "
                "docs/generation.md)")
    return (f"{source}: {len(refused)} model(s) would have to send requests they cannot send; nothing was started\n"
            + "\n".join(f"  - {n.describe(slice_name)}" for n in refused) + "\n  ways out: " + "; ".join(ways))
