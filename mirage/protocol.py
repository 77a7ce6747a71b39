"""The protocol's vocabularies, each defined once: conditions, slices, templates, harnesses, pools, mitigations,
languages. Types are `Literal`s (for params validation and click choices); the tuples are derived from them.
Identities are data, not vocabulary: `mirage.identities` reads them from the data folder's identities.yaml."""

from __future__ import annotations

from typing import Literal, get_args

Condition = Literal["C1", "C2", "C3"]
SliceName = Literal["demo", "lite", "full", "test"]
TemplateId = Literal["T1", "T2", "T3", "T4", "T5", "T6"]
HarnessId = Literal["H1", "H2", "H3", "H4"]
Pool = Literal["empty", "neutral", "historical", "recent"]
Mitigation = Literal["M1", "M2", "M3", "M4", "structural"]
Language = Literal["en", "ar-msa", "ar-egy", "ar-lev", "ar-mag"]
Provider = Literal["local", "vllm", "openai", "anthropic"]

CONDITIONS: tuple[str, ...] = get_args(Condition)
SLICE_NAMES: tuple[str, ...] = get_args(SliceName)
#: The held-out split: instantiated from a private folder, never pushed to a public remote.
HELD_OUT = "test"
PUBLIC_SLICES: tuple[str, ...] = tuple(s for s in SLICE_NAMES if s != HELD_OUT)
TEMPLATE_IDS: tuple[str, ...] = get_args(TemplateId)
HARNESS_IDS: tuple[str, ...] = get_args(HarnessId)
POOLS: tuple[str, ...] = get_args(Pool)
MITIGATIONS: tuple[str, ...] = get_args(Mitigation)
LANGUAGES: tuple[str, ...] = get_args(Language)
ARABIC: tuple[str, ...] = LANGUAGES[1:]
PROVIDERS: tuple[str, ...] = get_args(Provider)
API_PROVIDERS: tuple[str, ...] = ("openai", "anthropic")
WEIGHT_PROVIDERS: tuple[str, ...] = ("local", "vllm")

#: The offline violence judges, by versioned name (mirage/judges/parse3.py, parse2.py, parse.py, lexicon.py); parse-v3
#: is the default (chosen on real text, leave-one-source-out), parse-v2 and parse-v1 are kept by name.
PARSE_VERSION = "parse-v1"
PARSE_V2_VERSION = "parse-v2"
PARSE_V3_VERSION = "parse-v3"
DEFAULT_JUDGE = PARSE_V3_VERSION
LEXICON_VERSION = "lexicon-v1"
OFFLINE_JUDGES: tuple[str, ...] = (PARSE_V3_VERSION, PARSE_V2_VERSION, PARSE_VERSION, LEXICON_VERSION)

#: The mitigation that hides the identity field: every identity variant renders to the same request.
STRUCTURAL = "structural"
#: Conditions whose requests are completions of the prompt (T1-T4, T6); C3 asks for a decision (T5).
COMPLETION_CONDITIONS: tuple[str, ...] = ("C1", "C2")
DECISION_CONDITION = "C3"
DECISION_TEMPLATE = "T5"


def mitigations_for(condition: str, which: list[str] | tuple[str, ...]) -> list[str]:
    """Mitigations rendered under `condition`: `structural` applies to C3 only."""
    return [m for m in which if m != STRUCTURAL or condition == DECISION_CONDITION]
#: A jury member's own labels of one sample, kept in a label row's `votes` (member -> these fields).
VOTE_FIELDS: tuple[str, ...] = ("violent", "violent_reasoning", "decision", "score", "parse_ok", "refusal")
