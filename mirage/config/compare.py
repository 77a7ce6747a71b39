"""`compare:` section of params.yaml: the pairs, series and judge sets the pipeline compares and the equivalence
margins of the verdicts.

A side is what one side of a comparison is: a model, one snapshot of it, one mitigation setting of it, or its
completions as one judge labelled them. Syntax: `MODEL[@REVISION][/mitigation=M][/judge=J]`, e.g.
`gpt-4o@2024-08-06`, `llama-3.3-70b/mitigation=M1`, `smollm2-135m/judge=lexicon-v1`. MODEL is a registry (or
label-file) model name; REVISION a value of the labels' `revision` column; M a mitigation whose rows stand in for the
side's unmitigated rows; J a value of the `judge` column (the rows a side selects: mirage/compare/sides.py).
"""

from __future__ import annotations

import datetime as dt
import re
from dataclasses import dataclass

from pydantic import BaseModel, ConfigDict, Field, field_validator

from mirage.errors import DataError
from mirage.names import NAME_PATTERN, ModelName, check_judge, check_name
from mirage.protocol import SLICE_NAMES

KEYS = ("mitigation", "judge")
_REVISION = re.compile(r"[A-Za-z0-9][A-Za-z0-9._:+-]{0,99}\Z")


@dataclass(frozen=True)
class Side:
    spec: str
    model: str
    revision: str | None = None
    mitigation: str | None = None
    judge: str | None = None

    @property
    def slug(self) -> str:
        """The side as one path component (names only hold letters, digits, '.', '_' and '-')."""
        return re.sub(r"[^A-Za-z0-9._-]+", "_", self.spec)


def parse_side(spec: str) -> Side:
    """A side from its spec; a DataError naming the part that is wrong."""
    head, *opts = str(spec).split("/")
    model, _, revision = head.partition("@")
    if not re.fullmatch(NAME_PATTERN, model):
        check_name(model, f"side {spec!r}: model")
    if "@" in head and not _REVISION.match(revision):
        raise DataError(f"side {spec!r}: revision {revision!r} is not a revision (letters, digits, '.', '_', ':', '+', '-')")
    found: dict[str, str] = {}
    for opt in opts:
        key, eq, value = opt.partition("=")
        if not eq or key not in KEYS or key in found or not value:
            raise DataError(f"side {spec!r}: {opt!r} is not one of /mitigation=M, /judge=J (each at most once)")
        found[key] = value
    if "mitigation" in found:
        check_name(found["mitigation"], f"side {spec!r}: mitigation")
    if "judge" in found:
        check_judge(found["judge"], f"side {spec!r}: judge")
    return Side(str(spec), model, revision or None, found.get("mitigation"), found.get("judge"))


class Pair(BaseModel):
    model_config = ConfigDict(extra="forbid")

    a: str = Field(description="Side A: MODEL[@REVISION][/mitigation=M][/judge=J] (`mirage compare --help`).")
    b: str = Field(description="Side B, same syntax.")
    slice: str = Field(description=f"Slice whose labels both sides come from ({', '.join(SLICE_NAMES)}).")

    @field_validator("a", "b")
    @classmethod
    def _side(cls, v: str) -> str:
        try:
            parse_side(v)
        except DataError as exc:
            raise ValueError(str(exc)) from None
        return v

    @field_validator("slice")
    @classmethod
    def _slice(cls, v: str) -> str:
        if v not in SLICE_NAMES:
            raise ValueError(f"unknown slice {v!r}; one of {', '.join(SLICE_NAMES)}")
        return v


class Snapshot(BaseModel):
    model_config = ConfigDict(extra="forbid")

    side: str = Field(description="The snapshot as a side: MODEL@REVISION (or any side spec).")
    date: dt.date = Field(description="Its release date (YYYY-MM-DD), the x axis of the figure.")

    @field_validator("side")
    @classmethod
    def _side(cls, v: str) -> str:
        return Pair._side(v)


class Series(BaseModel):
    model_config = ConfigDict(extra="forbid")

    slice: str = Field(description="Slice whose labels every snapshot comes from.")
    snapshots: list[Snapshot] = Field(min_length=2, description="Two or more snapshots of one model family, oldest first.")

    @field_validator("slice")
    @classmethod
    def _slice(cls, v: str) -> str:
        return Pair._slice(v)

    @field_validator("snapshots")
    @classmethod
    def _ordered(cls, v: list[Snapshot]) -> list[Snapshot]:
        dates = [s.date for s in v]
        if dates != sorted(dates) or len(set(dates)) != len(dates):
            raise ValueError(f"snapshots must be in order of release date, each date once (got {', '.join(map(str, dates))})")
        return v


class JudgeRun(BaseModel):
    model_config = ConfigDict(extra="forbid")

    model: ModelName = Field(description="The model whose completions the judges labelled (its label file of the slice is read).")
    slice: str = Field(description="Slice of the labels.")
    labels: list[str] = Field(default_factory=list, description="Further label files of the same completions by other "
                              "judges (`mirage label --judge J --out FILE`); a jury's own label file needs none.")

    @field_validator("slice")
    @classmethod
    def _slice(cls, v: str) -> str:
        return Pair._slice(v)


class CompareParams(BaseModel):
    model_config = ConfigDict(extra="forbid", allow_inf_nan=False)

    pairs: dict[str, Pair] = Field(
        default_factory=dict, description="Comparisons the pipeline runs: name -> {a, b, slice}; each is a Snakemake "
        "target and a DVC stage `compare-NAME` (its files: mirage/artefacts.py, compare).")
    margin_pp: float = Field(2.0, gt=0, le=100, description="Equivalence margin m of every claim measured in percentage "
                             "points (ΔV, Δ signed, gaps, δt): |A − B| < m pp by two one-sided tests is 'equivalent'.")
    margin_cai: float = Field(0.25, gt=0, le=100, description="Equivalence margin of the CAI claim (its excess over the "
                              "controls' CoT amplification, a difference of ratios).")

    series: dict[str, Series] = Field(
        default_factory=dict, description="Bias over time: name -> {slice, snapshots: [{side, date}, ...]} for "
        "`mirage over-time NAME`: every headline claim against release date, and the compare verdict of each step.")

    judges: dict[str, JudgeRun] = Field(
        default_factory=dict, description="Judge sensitivity: name -> {model, slice, labels: [further judges' label "
        "files]} for `mirage judges` (each member of a jury is a judge): a Snakemake target and DVC stage `judges-NAME` each.")

    @field_validator("pairs", "series", "judges")
    @classmethod
    def _names(cls, v: dict) -> dict:
        for name in v:
            try:
                check_name(name, "compare name")
            except DataError as exc:
                raise ValueError(str(exc)) from None
        return v

    @field_validator("judges")
    @classmethod
    def _one_per_model(cls, v: dict[str, JudgeRun]) -> dict[str, JudgeRun]:
        seen: dict[tuple[str, str], str] = {}
        for name, run in v.items():
            if (key := (run.slice, run.model)) in seen:
                raise ValueError(f"{seen[key]} and {name} both name model {run.model} on slice {run.slice} (one entry each)")
            seen[key] = name
        return v
