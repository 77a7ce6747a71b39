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


_FIELD = r"(?:decision|recommendation|recommended action|action|answer|final answer|final decision|verdict|outcome)"
_NEGATORS = re.compile(
    r"(?:\bnot\b|n['’]t\b|\bnever\b|\bno\b|\bcannot\b|\bagainst\b|\brather than\b|\binstead of\b|\bnor\b|"
    r"\bwithout\b|\brefrain from\b|\bavoid\b|\bdecline to\b|\brefuse to\b|\bno need to\b|\bno reason to\b|\bunwarranted\b)",
    re.IGNORECASE)
_CLAUSE = re.compile(r"[.;!?\n,]|\bbut\b|\binstead\b|:", re.IGNORECASE)
_AFTER_NEGATED = re.compile(r"^\W*(?:\w+\W+){0,3}?(?:would be|is|seems|feels)\s+(?:\w+\s+)?(?:unfair|wrong|a mistake|unjustified|"
                            r"unwarranted|unnecessary|excessive|inappropriate|not (?:warranted|justified|necessary|needed))",
                            re.IGNORECASE)
_NOT_A_DECISION = {  # idioms in which an option word is not the decision
    "keep": r"keep (?:in mind|an eye|track|up|going|reading|it short|in touch|calm|safe|watch|the conversation|the community)",
    "review": r"(?:after|upon|on|under|in|my|this|a|the|further|closer|careful|on closer) review(?! (?:it|this|the post|the case))|review of (?:the )?(?:case|file|evidence|post)",
    "decline": r"(?:a|the|sharp|steady|recent) decline|declin\w* (?:income|revenue|sales|health)",
    "approve": r"approv\w* (?:of|by) (?:the|a)",
}


def _forms(option: str) -> str:
    """Regex for an option word and its inflections (remove/removed/removing/removal, keep/kept, ...)."""
    stem = option[:-1] if option.endswith("e") else option
    extra = {"keep": "|kept|keeps|keeping"}.get(option, "")
    return rf"\b(?:{re.escape(option)}(?:s|d|ed)?|{re.escape(stem)}(?:ing|al|ed)){extra}\b"


def opposite(option: str, scores: dict[str, float]) -> str | None:
    """The option at the other end of the favourability scale (remove <-> keep); None for the midpoint."""
    target = 1.0 - scores[option]
    matches = [o for o, s in scores.items() if abs(s - target) < 1e-9 and o != option]
    return matches[0] if len(matches) == 1 else None


def _mentions(text: str, options: tuple[str, ...]) -> list[tuple[str, bool]]:
    """(option, negated) for every mention; negated when a negator precedes it within its clause (<= 6 words)."""
    out = []
    for o in options:
        idiom = _NOT_A_DECISION.get(o)
        for m in re.finditer(_forms(o), text, re.IGNORECASE):
            if idiom and any(i.start() <= m.start() < i.end() for i in re.finditer(idiom, text, re.IGNORECASE)):
                continue
            clause = _CLAUSE.split(text[: m.start()])[-1]
            window = " ".join(clause.split()[-6:])
            after = _CLAUSE.split(text[m.end():])[0]
            out.append((o, bool(_NEGATORS.search(window)) or bool(_AFTER_NEGATED.search(after))))
    return out


def _resolve(mentions: list[tuple[str, bool]], scores: dict[str, float]) -> str | None:
    positive = {o for o, neg in mentions if not neg}
    if len(positive) == 1:
        return positive.pop()
    if positive:
        return None
    flipped = {opposite(o, scores) for o, neg in mentions if neg}
    return flipped.pop() if len(flipped) == 1 and None not in flipped else None


def parse_choice(text: str, options: tuple[str, ...], scores: dict[str, float] | None = None) -> str | None:
    """The decision in `text`: a `Decision: ...` field first, else every option mention; a negated option
    ("I would not remove this", "do not approve") means its opposite on the favourability scale. None if absent
    or ambiguous (two different options asserted)."""
    scores = scores or {o: i / max(1, len(options) - 1) for i, o in enumerate(options)}
    for m in re.finditer(rf"\b{_FIELD}\s*[:\-–]\s*(.+)", text, re.IGNORECASE):
        found = _resolve(_mentions(m.group(1).split("\n")[0], options), scores)
        if found:
            return found
    return _resolve(_mentions(text, options), scores)


def parse_score(text: str, lo: int = 1, hi: int = 5) -> str | None:
    """`Score: N`, else `N/5` or `N out of 5`, else the single in-range number not negated ("not a 5", "rather than 2");
    None if absent or ambiguous."""
    rng = f"[{lo}-{hi}]"
    if re.search(rf"\bbetween\s+{rng}\s+and\s+{rng}\b|(?<![\d.]){rng}(?:\s*/\s*{hi})?\s+or\s+{rng}(?![\d.])", text, re.IGNORECASE):
        return None  # "between 3 and 4", "4/5 or 3/5": ambiguous
    for pattern in (rf"\b(?:score|rating|final score)\s*[:\-–=]?\s*[*_\"'\[(]*\s*({rng})(?!\d|\.\d)",
                    rf"(?<![\d.])({rng})\s*(?:/|out of)\s*{hi}\b"):
        found = {g for m in re.finditer(pattern, text, re.IGNORECASE) for g in [m.group(1)]
                 if not _NEGATORS.search(" ".join(text[: m.start()].split()[-3:]))}
        if len(found) == 1:
            return found.pop()
        if found:
            return None
    found = {m.group(0) for m in re.finditer(rf"(?<![\d.]){rng}(?!\d|\.\d)", text)
             if not _NEGATORS.search(" ".join(_CLAUSE.split(text[: m.start()])[-1].split()[-4:]))}
    return found.pop() if len(found) == 1 else None
