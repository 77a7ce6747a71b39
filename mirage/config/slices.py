"""`slices:` section of params.yaml: which models run on which slice, and declared protocol deviations.

A slice is a subset of the rendered requests (`slices` column): `demo` is a small stratified CPU
run on the embedded model, `lite` the paper's stratified 15% split, `full` every public
row (dev + lite), `test` the held-out split rendered from the private folder (never in `full`). Anything
set here that differs from the protocol (n_samples, max_tokens) is a deviation the report prints.
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field, field_validator

from mirage.config.generate import MaxTokens
from mirage.protocol import Condition

PAPER_MODELS = ["gpt-4o", "claude-opus-4", "gemini-1.5-pro", "llama-3.3-70b", "qwen2.5-72b", "deepseek-v3"]
#: Their successors, one per provider, each chosen with the evidence recorded in docs/generation.md ("Model sets").
CURRENT_MODELS = ["gpt-4.1", "claude-opus-4.6", "gemini-3.5-flash", "llama-4-scout", "qwen3-235b", "deepseek-v3.2"]
MODEL_SETS = {"paper": PAPER_MODELS, "current": CURRENT_MODELS}
#: The judge of real audits (lite, full, test) unless a slice names its own: the paper's protocol (a GPT-4-class
#: zero-shot classifier, §3.6), a current snapshot; its replies go to the completion store, so a release carries them.
LLM_JUDGE = "gpt-4.1"


class SliceParams(BaseModel):
    model_config = ConfigDict(extra="forbid", allow_inf_nan=False)

    models: list[str] = Field(default_factory=lambda: list(PAPER_MODELS), min_length=1,
                              description="Registry names of the models run on this slice (at least one); leave it out to "
                              "run the chosen model set (top-level `model_set`; lite, full and test).")
    n_samples: int | None = Field(None, ge=1, le=1000, description="Samples per request; null = protocol (generate.n_samples).")
    max_tokens: dict[Condition, MaxTokens] | None = Field(None, description="Per-condition max new tokens (keys C1, C2, C3); null = protocol (generate.max_tokens).")
    judge: str | list[str] | None = Field(
        None, description=f"Violence judge of this slice: a registry model (LLM judge, answering through its completion "
        f"store), an offline judge or a jury (as label.judge); null = label.judge (offline). Left out: the demo uses "
        f"and the leaderboard's test split use label.judge, lite and full the paper's LLM judge `{LLM_JUDGE}`.")

    @field_validator("judge")
    @classmethod
    def _judge_names(cls, v: str | list[str] | None) -> str | list[str] | None:
        from mirage.errors import DataError
        from mirage.names import check_judge

        try:
            return None if v is None else check_judge(v, "judge")
        except DataError as exc:
            raise ValueError(str(exc)) from None


class SlicesParams(BaseModel):
    model_config = ConfigDict(extra="forbid", allow_inf_nan=False)

    demo: SliceParams = Field(
        default_factory=lambda: SliceParams(models=["smollm2-135m"], n_samples=2, max_tokens={"C1": 40, "C2": 96, "C3": 64}),
        description="CPU smoke run on the embedded model (reduced samples and tokens).",
    )
    lite: SliceParams = Field(default_factory=SliceParams, description="The stratified 15% lite split (App. J).")
    full: SliceParams = Field(default_factory=SliceParams, description="The full public benchmark (dev + lite splits).")
    test: SliceParams = Field(default_factory=SliceParams,
                              description="The held-out test split; rendered only from the private folder MIRAGE_PRIVATE_DIR (docs/leaderboard.md).")
