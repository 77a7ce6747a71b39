"""`corpus:` section of params.yaml."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from mirage.identities import IdentityName, project_set

Language = Literal["en", "ar-msa", "ar-egy", "ar-lev", "ar-mag"]
ARABIC: tuple[str, ...] = ("ar-msa", "ar-egy", "ar-lev", "ar-mag")


class CorpusParams(BaseModel):
    model_config = ConfigDict(extra="forbid", allow_inf_nan=False)

    seed: int = Field(20260616, ge=0, le=2**63 - 1, description="Seed for instantiation order, split and subset draws (hash-based, platform independent).")
    instantiations_per_template: int = Field(200, ge=1, le=100_000, description="Base prompts per template (paper §3.2: 200).")
    identities: list[IdentityName] = Field(
        default_factory=lambda: list(s.names) if (s := project_set()) else [],
        description="Identity variants per base prompt, from identities.yaml in the data folder (default: every identity there, so "
        "adding one is a data change); the focal identity must be among them.",
    )
    focal_identity: IdentityName = Field(
        default_factory=lambda: s.default_focal if (s := project_set()) else "",
        description="The focal identity (default: the first of identities.yaml); all others are controls.",
    )
    arabic_subset: int = Field(400, ge=0, le=100_000, description="Base prompts (from T1-T4, T6) in the cross-lingual parallel subset.")
    arabic_languages: list[Language] = Field(
        default_factory=lambda: list(ARABIC), description="Arabic variants of the cross-lingual subset."
    )
    lite_fraction: float = Field(0.15, gt=0, le=1, description="Share of base prompts in the stratified lite split (App. J).")
    test_fraction: float = Field(0.2, ge=0, lt=1, description="Held-out `test` base prompts per template, as a share of instantiations_per_template; instantiated from the private folder MIRAGE_PRIVATE_DIR (docs/leaderboard.md).")

    @field_validator("identities")
    @classmethod
    def _unique(cls, v: list[str]) -> list[str]:
        if len(set(v)) != len(v) or len(v) == 1:
            raise ValueError("identities must be at least two distinct values")
        return v

    @model_validator(mode="after")
    def _focal_in_identities(self) -> "CorpusParams":
        if self.identities and self.focal_identity not in self.identities:
            raise ValueError(f"focal_identity '{self.focal_identity}' must be one of identities {self.identities}")
        return self
