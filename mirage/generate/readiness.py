"""Refuse models that cannot give a reproducible run before any job starts: unpinned, retired or keyless.

Called by `mirage estimate` and at Snakemake DAG time (workflow/rules/common.smk), so a stale registry
fails in seconds, naming every bad model, instead of at job start hours later.
"""

from __future__ import annotations

import datetime as dt
import os
from collections.abc import Iterable, Mapping

from mirage.config.generate import ModelSpec
from mirage.params import ParamsError

#: Providers that always need a key: the official endpoints of OpenAI (no base_url) and Anthropic.
_KEYED = ("anthropic",)


def model_problems(name: str, spec: ModelSpec, today: dt.date, environ: Mapping[str, str] | None) -> list[str]:
    """Why registry entry `name` must not run today (empty when it may); keys are not checked when `environ` is None."""
    problems = []
    if not spec.pinned and not spec.allow_unpinned:
        problems.append(f"models.{name}.revision: not pinned ({spec.revision or 'empty'}); set the hub commit sha, "
                        f"dated API snapshot or sha256 of the weights (or allow_unpinned: true, results then not reproducible)")
    if spec.retires is not None and today >= spec.retires:
        problems.append(f"models.{name}.retires: {spec.model_id} was retired on {spec.retires.isoformat()}; "
                        f"choose a current snapshot (a new revision is a new model in the store)")
    needs_key = spec.api_key_env or spec.provider in _KEYED or (spec.provider == "openai" and not spec.base_url)
    if environ is not None and needs_key and not (spec.api_key_env and environ.get(spec.api_key_env, "").strip()):
        what = f"set the environment variable {spec.api_key_env}" if spec.api_key_env else "set api_key_env to the variable holding its key"
        problems.append(f"models.{name}.api_key_env: no API key ({what})")
    return problems


def check_ready(models: Mapping[str, ModelSpec], names: Iterable[str], source: str = "params.yaml",
                today: dt.date | None = None, environ: Mapping[str, str] | None = None, keys: bool = True) -> None:
    """Raise ParamsError listing every problem of the models `names` (unknown names included); `keys=False`
    leaves API keys unchecked (planning: `mirage estimate`)."""
    today = today or dt.date.today()
    environ = (os.environ if environ is None else environ) if keys else None
    problems = []
    for name in names:
        if name not in models:
            problems.append(f"models.{name}: not in the registry (known: {', '.join(sorted(models))})")
        else:
            problems += model_problems(name, models[name], today, environ)
    if problems:
        raise ParamsError(f"{source}: {len(problems)} model problem(s); nothing was started\n" + "\n".join(f"  - {p}" for p in problems))

