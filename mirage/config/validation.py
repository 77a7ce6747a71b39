"""`label.validation:` sub-section of params.yaml."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field


class ValidationParams(BaseModel):
    model_config = ConfigDict(extra="forbid", allow_inf_nan=False)

    fraction: float = Field(0.10, gt=0, le=1, description="Share of labelled samples drawn per template x identity x condition cell (App. H: 10%).")
    seed: int = Field(20260616, ge=0, le=2**63 - 1, description="Seed of the (hash-based, platform-independent) sample draw.")
    mask: str = Field("[GROUP]", description="Text replacing identity mentions so annotators are blind to the identity.")
