"""`report:` section of params.yaml."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field


class ReportParams(BaseModel):
    model_config = ConfigDict(extra="forbid")

    metrics_dir: str = Field("results/metrics", description="Input: `{metrics_dir}/{slice}/metrics.csv` and `summary.json` from `mirage metrics`.")
    labels_dir: str = Field("results/labels", description="Input: `{labels_dir}/{model}/{slice}.jsonl` (CoT pathways, kappa, drill-down labels).")
    generations_dir: str = Field("results/generations", description="Input: `{generations_dir}/{model}/{slice}/{condition}/{pool}-{mitigation}.jsonl` (drill-down texts, measured compute).")
    estimate_dir: str = Field("results/estimate", description="Input: `{estimate_dir}/{slice}.json` from `mirage estimate` (Table 15).")
    probe_dir: str = Field("results/probe", description="Optional input: `{probe_dir}/{model}/lambda.csv` and `table7.csv` (logit-lens figure).")
    figures_dir: str = Field("results/figures", description="Output: `{figures_dir}/{slice}/*.png|svg`.")
    tables_dir: str = Field("results/tables", description="Output: `{tables_dir}/{slice}/*.csv|md|tex`.")
    out_dir: str = Field("results/report", description="Output: `{out_dir}/{slice}/index.html`, one self-contained page.")
    figure_formats: list[Literal["png", "svg"]] = Field(
        default_factory=lambda: ["png", "svg"], min_length=1, description="Figure files written next to each other."
    )
    dpi: int = Field(150, ge=50, le=600, description="Resolution of PNG figures (also the inlined HTML images).")
    examples_per_cell: int = Field(3, ge=0, le=50, description="Matched focal/control pairs shown per model x condition drill-down (0 = none).")
    max_example_chars: int = Field(1200, ge=80, description="Completions longer than this are cut (with a marker) in the drill-down.")
