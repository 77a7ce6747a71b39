"""Fixed texts a request is assembled from: mitigation texts, CoT translations, harness rubrics.

All are user-replaceable data files, validated on load; an error names the file and the key.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from mirage.io import DataError, load_yaml


class M4Texts(BaseModel):
    model_config = ConfigDict(extra="forbid")

    followup: str = Field(min_length=1, description="Critique-and-revise turn under C1/C2.")
    followup_decision: str = Field(min_length=1, description="Critique-and-revise turn under C3 (refers to the decision).")
    completion_cue: str = Field(min_length=1, description="Completion mode: the cue that ends the second-turn prompt.")


class StructuralTexts(BaseModel):
    model_config = ConfigDict(extra="forbid")

    placeholder: str = Field(min_length=1, description="Neutral value that replaces the identity field in C3 case files.")


class MitigationTexts(BaseModel):
    model_config = ConfigDict(extra="forbid")

    M1: str = Field(min_length=1, description="Cultural prompting: system prompt.")
    M2: str = Field(min_length=1, description="Affective priming: statement before the content.")
    M3: str = Field(min_length=1, description="Self-debiasing suffix.")
    M4: M4Texts
    structural: StructuralTexts


class Harness(BaseModel):
    """The parts of a harness file (H*.yaml) that `mirage render` uses (other keys are ignored)."""

    model_config = ConfigDict(extra="ignore")

    id: str
    rubric: str = Field(min_length=1)
    instruction: str = Field(min_length=1)
    identity_field: str = Field(min_length=1)


def _validate(model: type[BaseModel], raw: Any, path: str | Path) -> Any:
    try:
        return model.model_validate(raw)
    except ValidationError as exc:
        bad = "; ".join(f"{'.'.join(map(str, e['loc'])) or '(top level)'}: {e['msg']}" for e in exc.errors())
        raise DataError(f"{path}: {bad}") from None


def load_mitigation_texts(path: str | Path) -> MitigationTexts:
    return _validate(MitigationTexts, load_yaml(path), path)


def load_cot_translations(path: str | Path) -> dict[str, str]:
    """language -> C2 suffix for non-English languages."""
    raw = load_yaml(path)
    if not isinstance(raw, dict) or not all(isinstance(k, str) and isinstance(v, str) and v.strip() for k, v in raw.items()):
        raise DataError(f"{path}: expected a mapping of language -> non-empty suffix text")
    return raw


def load_harnesses(directory: str | Path) -> dict[str, Harness]:
    """Harness id -> rubric, instruction and identity field, from every H*.yaml in `directory`."""
    out = {}
    for path in sorted(Path(directory).glob("H*.yaml")):
        harness = _validate(Harness, load_yaml(path), path)
        out[harness.id] = harness
    if not out:
        raise DataError(f"{directory}: no H*.yaml harness files")
    return out
