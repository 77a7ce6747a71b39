"""The single run configuration, `params.yaml`, validated against typed per-stage sections.

Every field has a description and a default; a bad value stops with an error that names the
key and, where the field is a choice, the allowed values. Each stage package defines its own
section model in `<stage>/params.py`; this module composes them.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator

from mirage import secrets
from mirage.config.compare import CompareParams
from mirage.config.corpus import CorpusParams
from mirage.config.generate import GenerateParams, ModelSpec, default_models
from mirage.config.label import LabelParams
from mirage.config.metrics import MetricsParams
from mirage.config.probe import ProbeParams
from mirage.config.render import RenderParams
from mirage.config.report import ReportParams
from mirage.config.slices import LLM_JUDGE, MODEL_SETS, SlicesParams
from mirage.hashing import content_hash
from mirage.io import DataError
from mirage.limits import LimitsParams
from mirage.names import check_name, judge_members
from mirage.protocol import OFFLINE_JUDGES

DEFAULT_PATH = "params.yaml"
#: Slices whose judge, when params leave it out, is the paper's LLM judge; the held-out `test` split keeps label.judge,
#: the offline judge the leaderboard's verifier recomputes every label with (it never calls a paid model).
LLM_JUDGED_SLICES: tuple[str, ...] = ("lite", "full")
#: Slices that run a model set unless they list their own `models` (the demo runs the embedded model).
SETS_SLICES = ("lite", "full", "test")
#: Set (to anything but 0) by `mirage --defaults`: a missing or section-less params file means built-in defaults.
DEFAULTS_ENV = "MIRAGE_DEFAULTS"
#: Set by `mirage --model-set NAME` and by the workflow (to what `--config model_set=NAME` chose): overrides `model_set`.
MODEL_SET_ENV = "MIRAGE_MODEL_SET"


class Params(BaseModel):
    """Root of params.yaml: one section per pipeline stage."""

    model_config = ConfigDict(extra="forbid")

    corpus: CorpusParams = Field(default_factory=CorpusParams, description="Corpus construction (`mirage corpus`).")
    render: RenderParams = Field(default_factory=RenderParams, description="Request rendering: conditions, RAG layer, mitigations (`mirage render`).")
    probe: ProbeParams = Field(default_factory=ProbeParams, description="Logit-lens probe of open models (`mirage probe`).")
    report: ReportParams = Field(default_factory=ReportParams, description="Figures, tables and the HTML report (`mirage report`).")
    label: LabelParams = Field(default_factory=LabelParams, description="Violence labels, C3 decisions, CoT pathways (`mirage label`); human spot-validation (`mirage validate`).")
    metrics: MetricsParams = Field(default_factory=MetricsParams, description="Metrics and App. G statistics (`mirage metrics`).")
    compare: CompareParams = Field(default_factory=CompareParams, description="Paired comparisons of two models, snapshots, mitigations or judges (`mirage compare`).")
    slices: SlicesParams = Field(default_factory=SlicesParams, description="Models and protocol deviations per slice (demo, lite, full).")
    models: dict[str, ModelSpec] = Field(default_factory=default_models, description="Model registry: name -> provider, model id, pinned revision, limits, prices (docs/generation.md).")
    generate: GenerateParams = Field(default_factory=GenerateParams, description="Sampling protocol and completion store (`mirage generate`, `mirage estimate`).")
    limits: LimitsParams = Field(default_factory=LimitsParams, description="How much of a file a stranger hands us (bundles, gold files, validation imports) is read before it is refused (docs/leaderboard.md).")
    model_sets: dict[str, list[str]] = Field(
        default_factory=lambda: {k: list(v) for k, v in MODEL_SETS.items()},
        description="Named sets of registry models: `paper` (the paper's six, pinned, for rebuilds; two are retired and "
        "run only from released completions) and `current` (their successors; docs/generation.md says why each).")
    model_set: str = Field("paper", description="The model set run by every slice that lists no `models` of its own (lite, "
                           "full, test). From the command line: `snakemake --config model_set=current`, `mirage --model-set "
                           f"current <command>` or `mirage estimate --model-set current` ({MODEL_SET_ENV}).")

    @field_validator("models")
    @classmethod
    def _model_names(cls, v: dict[str, ModelSpec]) -> dict[str, ModelSpec]:
        for name in v:
            check_name(name, "model name")
        return v

    @model_validator(mode="after")
    def _slice_models_in_registry(self) -> "Params":
        """Slices without `models` run the chosen model set; models a slice or a chosen set names must be registry
        entries (the default sets are checked when a slice runs them)."""
        if self.model_set not in self.model_sets:
            raise ValueError(f"model_set: unknown set {self.model_set!r}; model_sets has {', '.join(sorted(self.model_sets))}")
        checked = {f"model_sets.{k}": v for k, v in self.model_sets.items()} if "model_sets" in self.model_fields_set else (
            {f"model_sets.{self.model_set}": self.model_sets[self.model_set]} if "model_set" in self.model_fields_set else {})
        for name in SlicesParams.model_fields:
            sl = getattr(self.slices, name)
            if "models" in sl.model_fields_set:
                checked[f"slices.{name}.models"] = sl.models
            elif name in SETS_SLICES:  # set in __dict__: `models` stays not-explicitly-set
                sl.__dict__["models"] = list(self.model_sets[self.model_set])
            if "judge" not in sl.model_fields_set and name in LLM_JUDGED_SLICES:  # real audits: the paper's LLM judge
                sl.__dict__["judge"] = LLM_JUDGE
            if "judge" in sl.model_fields_set and sl.judge is not None:
                checked[f"slices.{name}.judge"] = [m for m in judge_members(sl.judge) if m not in OFFLINE_JUDGES]
        for where, names in checked.items():
            if unknown := [m for m in names if m not in self.models]:
                raise ValueError(f"{where}: unknown model(s) {', '.join(unknown)}; "
                                 f"registry (models:) has {', '.join(sorted(self.models))}")
        return self

    def judge_of(self, slice_name: str) -> str | list[str]:
        """The violence judge that labels a slice: its own `judge`, else label.judge."""
        judge = getattr(self.slices, slice_name).judge
        return self.label.judge if judge is None else judge

    def model_set_of(self, slice_name: str) -> str | None:
        """The model set a slice runs (None: it lists its own models)."""
        sl = getattr(self.slices, slice_name)
        return None if "models" in sl.model_fields_set or slice_name not in SETS_SLICES else self.model_set


class ParamsError(ValueError):
    """params.yaml failed validation; the message lists every bad key."""


#: Fields whose given value is never echoed in an error (a key pasted there must not reach a terminal or a log).
SECRET_FIELDS: frozenset[str] = frozenset({"api_key_env", "base_url"})


def _allowed_keys(model: type[BaseModel], loc: tuple) -> list[str]:
    """Field names allowed at the parent of `loc` (for 'unknown key' errors)."""
    for part in loc[:-1]:
        field = model.model_fields.get(part) if isinstance(part, str) else None
        ann = getattr(field, "annotation", None) if field else None
        if isinstance(ann, type) and issubclass(ann, BaseModel):
            model = ann
        else:
            return []
    return sorted(model.model_fields)


def _shown(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 80 else text[:77] + "..."


def format_validation_error(exc: ValidationError, source: str) -> str:
    """One line: `source: key: problem (got value)`, problems joined by `; ` when there are several."""
    parts = []
    for err in exc.errors():
        key = ".".join(str(p)[:60] for p in err["loc"]) or "(top level)"
        msg = err["msg"].removeprefix("Value error, ")[:300]
        if err["type"] == "extra_forbidden":
            allowed = _allowed_keys(Params, err["loc"])
            msg = "unknown key" + (f"; allowed keys here: {', '.join(allowed)}" if allowed else "")
        given = err.get("input")
        quiet = err["type"] in ("extra_forbidden", "missing") or not err["loc"] or isinstance(given, dict)
        if err["loc"] and err["loc"][-1] in SECRET_FIELDS:  # what was given there may be a key: never echoed
            quiet = True
        shown = "" if quiet else f" (got {_shown(secrets.public(given))})"
        parts.append(f"{key}: {msg}{shown}")
    head = f"{source}: " if len(parts) == 1 else f"{source}: {len(parts)} invalid values: "
    return head + "; ".join(parts)


def validate_params(raw: dict[str, Any] | None, source: str = DEFAULT_PATH) -> Params:
    """Validate a parsed params mapping (e.g. Snakemake's `config`); no sections at all is an error unless defaults are allowed."""
    if not raw and not defaults_allowed():
        raise ParamsError(f"{source}: no sections (empty file?); write the run configuration there, or run "
                          f"`mirage --defaults ...` (or set {DEFAULTS_ENV}=1) to use the built-in defaults")
    try:
        params = Params.model_validate(raw or {})
    except ValidationError as exc:
        raise ParamsError(format_validation_error(exc, source)) from None
    secrets.watch_registry(params.models)  # keys in base_url query strings are redacted wherever they reappear
    return params


def load_params(path: str | os.PathLike = DEFAULT_PATH, model_set: str | None = None) -> Params:
    """Read and validate params.yaml; a missing file is an error unless defaults are allowed (`mirage --defaults`).
    `model_set` (else MIRAGE_MODEL_SET) overrides the file's `model_set`."""
    path = Path(path)
    chosen = model_set or os.environ.get(MODEL_SET_ENV) or None
    if not path.exists() or path.is_dir():
        if defaults_allowed() and not path.exists():
            return validate_params({"model_set": chosen} if chosen else {}, str(path)) if chosen else Params()
        raise ParamsError(f"{path}: params file not found; pass --params FILE, or run `mirage --defaults ...` "
                          f"(or set {DEFAULTS_ENV}=1) to use the built-in defaults")
    raw = load_params_raw(path)
    if chosen and raw:
        raw["model_set"] = chosen
    return validate_params(raw, str(path))


def load_params_raw(path: str | os.PathLike) -> dict[str, Any] | None:
    """The parsed (not yet validated) mapping of a params file, read as untrusted input (`mirage.untrusted`: a
    regular file of at most 4 MB, YAML without alias bombs, deep nesting, duplicate keys or huge integers)."""
    from mirage import untrusted

    try:
        data = untrusted.read_bytes(path, "params file", untrusted.PARAMS_MAX_BYTES, None)
        raw = untrusted.load_yaml(untrusted.decode(data, str(path)), str(path))
    except DataError as exc:
        raise ParamsError(str(exc)) from None
    if raw is not None and not isinstance(raw, dict):
        raise ParamsError(f"{path}: top level must be a mapping of sections")
    return raw


def defaults_allowed() -> bool:
    """Whether `mirage --defaults` (or MIRAGE_DEFAULTS=1) asked for built-in defaults when params are absent."""
    return os.environ.get(DEFAULTS_ENV, "") not in ("", "0")


def params_hash(params: Params) -> str:
    """Hash of the whole validated params (every section, defaults included): two runs with different params files
    never share it."""
    return content_hash(params.model_dump(mode="json"))


def section_hash(params: Params, *sections: str) -> str:
    """Hash of the named sections, recorded next to outputs for provenance."""
    return content_hash({s: getattr(params, s).model_dump(mode="json") for s in sections})


def describe(model: type[BaseModel] = Params, prefix: str = "") -> list[tuple[str, str, str]]:
    """(key, default, description) for every leaf field, for `mirage params` and the docs."""
    rows = []
    for name, field in model.model_fields.items():
        key = f"{prefix}{name}"
        ann = field.annotation
        if isinstance(ann, type) and issubclass(ann, BaseModel):
            rows.append((key, "", field.description or ""))
            rows.extend(describe(ann, key + "."))
        else:
            default = field.get_default(call_default_factory=True)
            rows.append((key, repr(default), field.description or ""))
    return rows
