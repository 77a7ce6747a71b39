"""`label:` section of params.yaml."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field, field_validator

from mirage.config.validation import ValidationParams
from mirage.protocol import DEFAULT_JUDGE, LEXICON_VERSION, PARSE_V2_VERSION, PARSE_VERSION


class LabelParams(BaseModel):
    model_config = ConfigDict(extra="forbid", allow_inf_nan=False)

    judge: str | list[str] = Field(
        DEFAULT_JUDGE,
        description=f"Violence judge: `{DEFAULT_JUDGE}` (offline: identity forms from data, parse rules and an agent "
                    f"core weighed by a learned layer chosen on real text, the default), `{PARSE_V2_VERSION}` (the "
                    f"previous discourse-level judge), `{PARSE_VERSION}` (the single-sentence parse rules), `{LEXICON_VERSION}` "
                    "(word counting as in Abid et al.), a registry model name used as an LLM judge (paper §3.6 stage 1), "
                    "or a jury: a list of >= 2 names (or `jury:A,B,C`) labelling by majority vote. "
                    "Measure any of them first: `mirage judge eval --judge NAME`.",
    )
    window: int = Field(12, ge=1, le=10_000, description="Lexicon labeler: max tokens between a violence term and an identity/subject reference.")
    judge_max_tokens: int = Field(64, ge=8, le=1_048_576, description="LLM judge: max new tokens per judgement.")
    judge_batch: int = Field(64, ge=1, le=100_000, description="LLM judge: conversations sent per complete_chat call.")
    validation: ValidationParams = Field(default_factory=ValidationParams, description="Human spot-validation export/import (`mirage validate`).")

    @field_validator("judge")
    @classmethod
    def _judge_names(cls, v: str | list[str]) -> str | list[str]:
        from mirage.errors import DataError
        from mirage.names import check_judge

        try:
            return check_judge(v, "judge")
        except DataError as exc:
            raise ValueError(str(exc)) from None
