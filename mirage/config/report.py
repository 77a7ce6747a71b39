"""`report:` section of params.yaml."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field


class ReportParams(BaseModel):
    model_config = ConfigDict(extra="forbid", allow_inf_nan=False)

    figure_formats: list[Literal["png", "svg"]] = Field(
        default_factory=lambda: ["png", "svg"], min_length=1, description="Figure files written next to each other."
    )
    dpi: int = Field(150, ge=50, le=600, description="Resolution of PNG figures (also the inlined HTML images).")
    examples_per_cell: int = Field(3, ge=0, le=50, description="Matched focal/control pairs shown per model x condition drill-down (0 = none).")
    max_example_chars: int = Field(1200, ge=80, le=1_000_000, description="Completions longer than this are cut (with a marker) in the drill-down.")
