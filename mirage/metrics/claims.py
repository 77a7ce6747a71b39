"""The headline claims: the one set of metrics.csv rows per model that the report and summary.json state as
findings, and so the one family over which `mirage metrics` spends the model's error budget (Holm).

A claim is tested on its `excess_p` (the excess over the identity-placebo floor) when the metric carries a
floor, else on `p` (CAI: H0 V_C2 = V_C1). The set is fixed by the design (which conditions, pools,
mitigations, languages and harnesses a slice renders), never by the data; a claim whose test cannot run
(no refusals at all, n too small, identical by construction) has no p and does not count in m.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from mirage.metric_names import (
    CAI,
    DELTA_SIGNED,
    DELTA_T_DID,
    DV,
    DV_COT,
    MIT_DELTA_SIGNED,
    MIT_V,
    REASONING,
    REFUSAL_GAP,
    UNPARSEABLE_GAP,
    XLING_GAP,
)

FAMILY = "headline"
BASE = {"rag_pool": "none", "mitigation": "none", "language": "en"}
CONDITIONS = ("C1", "C2", "C3")


@dataclass(frozen=True)
class Claim:
    """Which rows of a metric are claims: fixed stratum values (None = any non-empty value)."""

    metric: str
    strata: Mapping[str, str | None]
    what: str  # how the report names it (condition / harness / mitigation appended)

    def matches(self, row: Mapping[str, object]) -> bool:
        if row.get("metric") != self.metric or row.get("placebo_kind") == "paraphrase":
            return False
        for col in ("condition", "template", "harness", "language", "rag_pool", "mitigation", "identity"):
            want, have = self.strata.get(col, ""), str(row.get(col) or "")
            if (want is None and have in ("", "none")) or (want is not None and have != want):
                return False
        return True


CLAIMS: tuple[Claim, ...] = (
    Claim(DV, {**BASE, "condition": None, "identity": "control"}, "ΔV"),
    Claim(DV + REASONING, {**BASE, "condition": "C2", "identity": "control"}, "ΔV of the reasoning trace"),
    Claim(DELTA_SIGNED, {**BASE, "condition": "C3", "template": "T5", "identity": "control"}, "Δ signed"),
    Claim(DELTA_SIGNED, {**BASE, "condition": "C3", "template": "T5", "harness": None, "identity": "control"}, "Δ signed"),
    Claim(DELTA_T_DID, {"condition": None, "rag_pool": "recent-neutral", "mitigation": "none", "language": "en",
                        "identity": "control"}, "δt (difference in differences)"),
    Claim(CAI, {**BASE, "condition": "C2/C1", "identity": None}, "CAI"),
    Claim(DV_COT, {**BASE, "condition": "C2-C1", "identity": "control"}, "ΔV C2 − C1 (CoT amplification of the gap)"),
    Claim(XLING_GAP, {"condition": None, "rag_pool": "none", "mitigation": "none", "language": "ar", "identity": None},
          "cross-lingual gap (Arabic − English)"),
    Claim(MIT_V, {"condition": None, "rag_pool": "none", "mitigation": None, "language": "en", "identity": None},
          "change in ΔV under mitigation"),
    Claim(MIT_DELTA_SIGNED, {"condition": "C3", "template": "T5", "rag_pool": "none", "mitigation": None, "language": "en",
                             "identity": "control"}, "change in Δ signed under mitigation"),
    Claim(REFUSAL_GAP, {**BASE, "condition": None, "identity": "control"}, "refusal gap"),
    Claim(UNPARSEABLE_GAP, {**BASE, "condition": "C3", "template": "T5", "identity": "control"}, "unparseable-decision gap"),
)


def claim_of(row: Mapping[str, object]) -> Claim | None:
    """The claim a metrics row states, or None when the row is not a headline claim."""
    return next((c for c in CLAIMS if c.matches(row)), None)


def test_column(metric: str) -> str:
    """The p-value column a claim is tested on: the excess over the floor, except CAI (no floor)."""
    return "p" if metric == CAI else "excess_p"


def describe(row: Mapping[str, object]) -> str:
    """'ΔV, C1' / 'Δ signed, H2' / 'change in ΔV under mitigation, M1, C2': how the report names a claim row."""
    c = claim_of(row)
    what = c.what if c else str(row.get("metric"))
    parts = [row.get("mitigation") if c and c.metric in (MIT_V, MIT_DELTA_SIGNED) else None,
             row.get("condition") if row.get("condition") not in ("", "C3", None) or (c and c.metric in (DV, REFUSAL_GAP, MIT_V))
             else None, row.get("harness") or None]
    return ", ".join([what, *(str(p) for p in parts if p)])


def planned(rows: Iterable[Mapping[str, object]], n_identities: int, refusals: bool) -> list[str]:
    """The claims a slice will test, from its rendered request rows (strata only): what `mirage estimate --power`
    counts as m. `refusals`: whether the refusal and unparseable gaps will have a test (some refusals expected)."""
    cells = {(r.get("condition"), r.get("rag_pool") or "none", r.get("mitigation") or "none", r.get("language") or "en",
              r.get("harness") or "") for r in rows if not r.get("paraphrase")}
    conds = sorted({c for c, *_ in cells})
    base = {c for c, pool, mit, lang, _ in cells if (pool, mit, lang) == ("none", "none", "en")}
    out = [f"{DV}/{c}" for c in conds if c in base]
    if "C2" in base:
        out.append(f"{DV}{REASONING}/C2")
    harnesses = sorted({h for c, pool, mit, lang, h in cells if c == "C3" and h and (pool, mit, lang) == ("none", "none", "en")})
    if "C3" in base:
        out += [f"{DELTA_SIGNED}/C3"] + [f"{DELTA_SIGNED}/C3/{h}" for h in harnesses]
    pools = {(c, pool) for c, pool, mit, lang, _ in cells if mit == "none" and lang == "en"}
    out += [f"{DELTA_T_DID}/{c}" for c in conds if {(c, "recent"), (c, "neutral")} <= pools]
    if {"C1", "C2"} <= base:
        out += [CAI, f"{DV_COT}/C2-C1"]
    arabic = {c for c, pool, mit, lang, _ in cells if lang.startswith("ar") and (pool, mit) == ("none", "none")}
    out += [f"{XLING_GAP}/{c}/ar" for c in conds if c in arabic and c in base]
    mits = sorted({(c, mit) for c, pool, mit, lang, _ in cells if mit != "none" and pool == "none" and lang == "en"
                   and c in base and mit != "structural"})
    out += [f"{MIT_V}/{c}/{m}" for c, m in mits]
    out += [f"{MIT_DELTA_SIGNED}/C3/{m}" for c, m in mits if c == "C3"]
    if refusals and n_identities > 1:
        out += [f"{REFUSAL_GAP}/{c}" for c in conds if c in base] + ([f"{UNPARSEABLE_GAP}/C3"] if "C3" in base else [])
    return out
