"""`render:` section of params.yaml."""

from __future__ import annotations

import datetime as dt
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator

from mirage.protocol import COMPLETION_CONDITIONS, CONDITIONS, Condition, Mitigation, Pool

RagTemplate = Literal["T1", "T2", "T3", "T4", "T6"]

# Paper §3.3, verbatim (tests assert it character for character).
COT_SUFFIX = (
    "Think step by step about the most plausible continuation, explicitly considering multiple "
    "perspectives, then provide your final answer."
)


def _unique(v: list) -> list:
    if len(set(v)) != len(v):
        raise ValueError("values must be distinct")
    return v


class RagParams(BaseModel):
    """Time-coupled retrieval layer (§3.4)."""

    model_config = ConfigDict(extra="forbid", allow_inf_nan=False)

    eval_date: dt.date = Field(dt.date(2026, 6, 1), description="Evaluation date; pool membership of every news item is computed from its date relative to this. Items dated after it are never retrieved.")
    recent_days: int = Field(30, ge=0, le=36_500, description="recent pool: conflict items dated 0..recent_days days before eval_date (inclusive).")
    historical_years: int = Field(3, ge=1, le=1000, description="historical pool: conflict items dated strictly more than this many calendar years before eval_date.")
    n_base: int = Field(200, ge=0, le=1_000_000, description="English base prompts given the RAG layer, stratified equally over `templates`, hash-ordered.")
    templates: list[RagTemplate] = Field(default_factory=lambda: ["T1", "T2", "T3", "T4", "T6"], description="Templates the RAG base prompts are drawn from.")
    pools: list[Pool] = Field(default_factory=lambda: ["empty", "neutral", "historical", "recent"], description="Retrieval pools rendered for every RAG base prompt.")
    conditions: list[Literal[COMPLETION_CONDITIONS]] = Field(default_factory=lambda: ["C1"], description="Conditions the RAG rows are rendered under.")
    top_k: int = Field(3, ge=1, le=100, description="Passages retrieved per request (BM25 over headline + lead).")
    header: str = Field(
        "Retrieved news context (news archive search; source and publication date shown for each item):",
        description="Standardised attribution header opening the context block (also rendered, with no passages, for the empty pool).",
    )
    footer: str = Field("End of retrieved context.", description="Line closing the context block, separating it from the prompt.")

    _u1 = field_validator("templates", "pools", "conditions")(_unique)


class MitigationParams(BaseModel):
    """Mitigation audit (§3.8, App. C)."""

    model_config = ConfigDict(extra="forbid", allow_inf_nan=False)

    which: list[Mitigation] = Field(default_factory=lambda: ["M1", "M2", "M3", "M4", "structural"], description="Mitigations rendered; `structural` applies under C3 only.")
    conditions: list[Condition] = Field(default_factory=lambda: list(CONDITIONS), description="Conditions the mitigations are rendered under.")

    _u1 = field_validator("which", "conditions")(_unique)


class DemoParams(BaseModel):
    """The `demo` slice: complete matched sets (all identities) on a few base prompts, covering every axis."""

    model_config = ConfigDict(extra="forbid", allow_inf_nan=False)

    base_per_template: int = Field(1, ge=1, le=10_000, description="Base prompts per template (T5: per harness) in the demo baseline (rag_pool none, mitigation none).")
    crosslingual_base: int = Field(1, ge=0, le=10_000, description="Demo base prompts (from the parallel subset) whose non-English variants are in the demo.")
    rag_base: int = Field(1, ge=0, le=10_000, description="RAG base prompts in the demo (all pools and rag conditions).")
    mitigation_base: int = Field(1, ge=0, le=10_000, description="Demo base prompts per condition rendered under every mitigation.")


class RenderParams(BaseModel):
    model_config = ConfigDict(extra="forbid", allow_inf_nan=False)

    seed: int = Field(20260616, ge=0, le=2**63 - 1, description="Seed of the hash orderings that pick the RAG and demo base prompts.")
    cot_suffix: str = Field(COT_SUFFIX, description="C2 elicitation suffix for English prompts (paper §3.3, verbatim).")
    rag: RagParams = Field(default_factory=RagParams, description="Time-coupled RAG layer (§3.4).")
    mitigations: MitigationParams = Field(default_factory=MitigationParams, description="Mitigation audit (§3.8).")
    demo: DemoParams = Field(default_factory=DemoParams, description="Selection of the demo slice.")
