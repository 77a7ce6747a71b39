"""C3 decision parsing: harness definitions from the H*.yaml harness files, normalised to s in [0, 1]."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path

from mirage.io import DataError, load_yaml


@dataclass(frozen=True)
class Harness:
    """The `decision:` block of one harness file."""

    id: str
    kind: str  # choice | score | summary
    options: tuple[str, ...] = ()
    scores: dict[str, float] = field(default_factory=dict)
    lo: int = 1
    hi: int = 5

    def normalise(self, decision: str) -> float:
        """Favourability s in [0, 1] of a parsed decision (1 = most favourable to the person)."""
        if self.kind == "score":
            return (int(decision) - self.lo) / (self.hi - self.lo)
        return float(self.scores[decision])


def load_harnesses(data_dir: str | Path = "data") -> dict[str, Harness]:
    """Every harnesses/H*.yaml under `data_dir`, keyed by harness id."""
    out = {}
    for path in sorted(Path(data_dir, "harnesses").glob("H*.yaml")):
        doc = load_yaml(path, "harness file")
        dec = doc.get("decision") if isinstance(doc, dict) else None
        if not isinstance(dec, dict) or "id" not in doc:
            raise DataError(f"{path}: fields 'id' and 'decision' (a mapping) are required")
        kind = dec.get("kind")
        try:
            if kind == "choice":
                h = Harness(doc["id"], kind, tuple(dec["options"]), {k: float(v) for k, v in dec["score"].items()})
            elif kind == "score":
                h = Harness(doc["id"], kind, lo=int(dec["min"]), hi=int(dec["max"]))
            elif kind == "summary":
                h = Harness(doc["id"], kind, tuple(dec["scale"]), {k: float(v) for k, v in dec["scale"].items()})
            else:
                raise DataError(f"{path}: field 'decision.kind' must be choice, score or summary (got {kind!r})")
        except KeyError as exc:
            raise DataError(f"{path}: field 'decision.{exc.args[0]}' is missing (decision kind {kind})") from None
        except (TypeError, ValueError, AttributeError) as exc:
            raise DataError(f"{path}: field 'decision' of kind {kind} is malformed: {exc}") from None
        out[h.id] = h
    if not out:
        raise DataError(f"{Path(data_dir, 'harnesses')}: no H*.yaml harness definitions found")
    return out


_FIELD = r"(?:decision|recommendation|action|answer|final answer)"


def parse_choice(text: str, options: tuple[str, ...]) -> str | None:
    """`Decision: <option>` if present, else the single option named anywhere; None if absent or ambiguous."""
    alts = "|".join(map(re.escape, options))
    m = re.search(rf"\b{_FIELD}\s*[:\-–]\s*[*_\"'\[(]*\s*({alts})\b", text, re.IGNORECASE)
    if m:
        return m.group(1).lower()
    named = {o for o in options if re.search(rf"\b{re.escape(o)}\b", text, re.IGNORECASE)}
    return named.pop() if len(named) == 1 else None


def parse_score(text: str, lo: int = 1, hi: int = 5) -> str | None:
    """`Score: N`, else `N/5` or `N out of 5`, else the single in-range number; None if absent or ambiguous."""
    rng = f"[{lo}-{hi}]"
    for pattern in (rf"\bscore\s*[:\-–=]?\s*[*_\"'\[(]*\s*({rng})(?!\d|\.\d)", rf"\b({rng})\s*(?:/|out of)\s*{hi}\b"):
        m = re.search(pattern, text, re.IGNORECASE)
        if m:
            return m.group(1)
    found = set(re.findall(rf"(?<![\d.]){rng}(?!\d|\.\d)", text))
    return found.pop() if len(found) == 1 else None
