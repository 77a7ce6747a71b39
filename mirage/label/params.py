"""`label:` section of params.yaml."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field

from mirage.label.lexicon import LEXICON_VERSION
from mirage.validation.params import ValidationParams


class LabelParams(BaseModel):
    model_config = ConfigDict(extra="forbid")

    judge: str = Field(
        LEXICON_VERSION,
        description=f"Labeler: `{LEXICON_VERSION}` (offline lexicon/rule labeler, the default) or a registry model name used as an LLM judge (paper §3.6 stage 1).",
    )
    window: int = Field(12, ge=1, description="Lexicon labeler: max tokens between a violence term and an identity/subject reference.")
    judge_max_tokens: int = Field(64, ge=8, description="LLM judge: max new tokens per judgement.")
    judge_batch: int = Field(64, ge=1, description="LLM judge: conversations sent per complete_chat call.")
    validation: ValidationParams = Field(default_factory=ValidationParams, description="Human spot-validation export/import (`mirage validate`).")
