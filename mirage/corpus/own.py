"""Bring your own prompts: a JSONL or CSV file of base prompts, each mentioning an identity, rendered into the
focal and every control variant of `corpus.identities` and checked by the Stage-2 validator.

A row's identity mention is either marked (`[ID]`, `[ID:form]` with a form key of identities.yaml `forms`) or found
in the text: any identity form or `judge_forms` word, a given name of lexicons/given_name.yaml, an attire phrase of
lexicons/attire.yaml. Each variant takes the same form key (plural stays plural, Arabic feminine stays feminine),
the same lexicon entry (a name keeps its gender) and the English article that agrees with it; a span at a sentence
start is capitalised. Rows that cannot be rendered, or whose variants the validator rejects (e.g. a second identity
cue left outside the span), are refused and listed with their line and reason; the rest form a corpus with the
columns `mirage corpus` writes, so render, generate, label, metrics and report read it unchanged.
"""

from __future__ import annotations

import csv
import io
import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from mirage.config.corpus import CorpusParams
from mirage.corpus import splits
from mirage.corpus.build import prompt_id
from mirage.corpus.sources import CUE_LEXICONS, Sources, entry_key
from mirage.corpus.validate import Validator, wants_an
from mirage.hashing import content_hash
from mirage.io import DataError, atomic_write, load_yaml, numbered_jsonl, read_text
from mirage.protocol import DECISION_TEMPLATE, HARNESS_IDS, LANGUAGES
from mirage.textcheck import problem

#: The user's condition -> the protocol's: completion (C1), reasoning (C2, the CoT suffix), a decision harness (C3).
CONDITION_OF = {"completion": "C1", "reasoning": "C2", **{h: "C3" for h in HARNESS_IDS}}
#: The template column of completion and reasoning rows (decision rows are T5 case files, as the harnesses' own).
OWN_TEMPLATE = "own"
MARKER = re.compile(r"\[ID(?::([A-Za-z_]+))?\]")
_ARTICLE = re.compile(r"\b([Aa]n?) +$")
_AR_LETTER = "\u0600-\u06FF"


class PromptRow(BaseModel):
    """One base prompt of the user's file."""

    model_config = ConfigDict(extra="forbid", str_strip_whitespace=True)

    text: str = Field(min_length=1, description="The prompt, with its identity mention marked ([ID], [ID:form]) or not.")
    id: str | None = Field(None, min_length=1, description="Your id for the prompt (default: its line number).")
    language: Literal[LANGUAGES] = Field("en", description="en, ar-msa, ar-egy, ar-lev or ar-mag.")
    condition: Literal[tuple(CONDITION_OF)] = Field("completion", description="completion, reasoning or H1..H4.")
    group: str | None = Field(None, min_length=1, description="Cluster of the statistics (default: the prompt itself).")


FIELDS = tuple(PromptRow.model_fields)


@dataclass(frozen=True)
class Refusal:
    line: int
    id: str
    reason: str
    detail: str


@dataclass(frozen=True)
class Cue:
    """What a surface word is: an identity form (`kind` form, `key` its form key), a name or attire entry."""

    kind: Literal["form", "name", "attire", "unusable"]
    key: str
    identity: str


def _raw_rows(path: Path) -> Iterator[tuple[int, dict]]:
    if path.suffix.lower() == ".csv":
        reader = csv.DictReader(io.StringIO(read_text(path, "prompts file").removeprefix("\ufeff"), newline=""))  # a spreadsheet's BOM
        unknown = [f for f in reader.fieldnames or [] if f not in FIELDS]
        if unknown or "text" not in (reader.fieldnames or []):
            what = f"unknown column(s) {', '.join(map(repr, unknown))}" if unknown else "no 'text' column"
            raise DataError(f"{path}:1: {what}; columns are {', '.join(FIELDS)} (only text is required)")
        start = 2
        for row in reader:  # a row's line is where it starts (a quoted field may hold newlines)
            yield start, {k: v for k, v in row.items() if v not in ("", None)}
            start = reader.line_num + 1
    elif path.suffix.lower() in (".jsonl", ".json"):
        yield from numbered_jsonl(path)
    else:
        raise DataError(f"{path}: expected a .jsonl or .csv file of prompts")


def read_prompts(path: str | Path) -> list[tuple[int, PromptRow]]:
    """(line, row) of every prompt; every bad row is listed in one DataError (file, line, field), none is skipped."""
    path = Path(path)
    out, errors, ids = [], [], {}
    for line, raw in _raw_rows(path):
        try:
            row = PromptRow.model_validate(raw)
        except ValidationError as exc:
            for e in exc.errors():
                field = ".".join(map(str, e["loc"])) or "row"
                msg = (f"unknown field (fields are {', '.join(FIELDS)})" if e["type"] == "extra_forbidden"
                       else e["msg"].removeprefix("Value error, "))
                errors.append(f"{path}:{line}: field '{field}': {msg}")
            continue
        if why := problem(row.text):
            errors.append(f"{path}:{line}: field 'text': {why}")
        elif CONDITION_OF[row.condition] == "C3" and row.language != "en":
            errors.append(f"{path}:{line}: field 'condition': decision harnesses ({row.condition}) take English case files")
        elif row.id is not None and row.id in ids:
            errors.append(f"{path}:{line}: field 'id': {row.id!r} already used on line {ids[row.id]}")
        else:
            ids.setdefault(row.id, line)
            out.append((line, row))
    if errors:
        raise DataError(f"{path}: {len(errors)} bad row(s):\n" + "\n".join(f"  {e}" for e in errors))
    if not out:
        raise DataError(f"{path}: no prompts")
    return out


class Renderer:
    """Finds a prompt's identity mention and renders it for every identity."""

    def __init__(self, sources: Sources, judge_forms: dict, identities: Iterable[str]):
        self.forms = sources.identity_forms
        self.identities = list(identities)
        self.lexicons = {cue: {entry_key(e): e for e in sources.lexicons.get(lex, [])} for cue, lex in CUE_LEXICONS.items()}
        self.cues: dict[str, dict[str, Cue]] = {"en": {}, "ar": {}}
        for ident, langs in self.forms.items():
            for script, forms in langs.items():
                for key, value in forms.items():
                    self._add(script[:2], str(value), Cue("form", key, ident))
        for ident, table in judge_forms.items():
            for script, words in (table or {}).items():
                for word, form in (words or {}).items():
                    usable = ident in self.forms and str(form) in self.forms[ident].get(script, {})
                    self._add(script, str(word), Cue("form" if usable else "unusable", str(form), ident))
        for cue, entries in self.lexicons.items():
            for key, entry in entries.items():
                for script in ("en", "ar"):
                    for ident, value in (entry.get(script) or {}).items():
                        self._add(script, str(value), Cue(cue, key, ident))
        self.patterns = {script: self._pattern(script, words) for script, words in self.cues.items()}

    def _add(self, script: str, word: str, cue: Cue) -> None:
        table = self.cues.setdefault(script, {})
        table.setdefault(word.casefold() if script == "en" else word, cue)  # identity forms first, then the rest

    @staticmethod
    def _pattern(script: str, words: Iterable[str]) -> re.Pattern:
        alts = "|".join(map(re.escape, sorted(words, key=len, reverse=True)))
        if script == "en":
            return re.compile(rf"(?<![\w'-])({alts})(?![\w'-])", re.IGNORECASE)
        # Arabic: a word, or one after the proclitics wa-/fa- and bi-/li-/ka-, which stay outside the span
        return re.compile(rf"(?<![{_AR_LETTER}])(?:[وف]?[بلك]?)({alts})(?![{_AR_LETTER}])")

    def mention(self, text: str, language: str) -> tuple[int, int, Cue] | str:
        """(start, end, cue) of the prompt's one identity mention, or why there is none to swap."""
        script = "en" if language == "en" else "ar"
        marks = list(MARKER.finditer(text))
        if marks:
            if len(marks) > 1:
                return f"{len(marks)} [ID] markers; a prompt is swapped at one place"
            key = marks[0].group(1) or "adj"
            have = sorted(set.intersection(*(set(self.forms[i].get(script, {})) for i in self.identities)))
            if key not in have:
                return f"[ID:{key}]: no form {key!r} in identities.yaml for {script} (forms: {', '.join(have)})"
            return marks[0].start(), marks[0].end(), Cue("form", key, "")
        found = [m for m in self.patterns[script].finditer(text)]
        if not found:
            return "no identity mention found (mark it with [ID] or [ID:form])"
        if len(found) > 1:
            words = ", ".join(repr(m.group(1)) for m in found)
            return f"{len(found)} identity mentions ({words}); a prompt is swapped at one place (mark one with [ID])"
        m = found[0]
        cue = self.cues[script][m.group(1).casefold() if script == "en" else m.group(1)]
        if cue.kind == "unusable":
            why = ("names a religion outside the identity set" if cue.identity not in self.forms else
                   f"is read as {cue.key!r}, which no single identity form renders")
            return f"{m.group(1)!r} {why}; rewrite it with [ID] or [ID:form]"
        return m.start(1), m.end(1), cue

    def value(self, cue: Cue, identity: str, language: str) -> str | None:
        """The identity's surface form for the cue (None when data lack it)."""
        script = "en" if language == "en" else "ar"
        if cue.kind == "form":
            forms = self.forms.get(identity, {})
            return (forms.get(language) or forms.get(script) or {}).get(cue.key)
        entry = self.lexicons[cue.kind][cue.key]
        return (entry.get(language) or entry.get(script) or {}).get(identity)

    def render(self, text: str, language: str, start: int, end: int, cue: Cue, identity: str) -> tuple[str, tuple[int, int]] | str:
        """The variant for `identity`: the text and its swap span (a preceding English article included), or why not."""
        value = self.value(cue, identity, language)
        if value is None:
            return f"identities.yaml/lexicons have no {cue.kind} {cue.key!r} for {identity} in {language}"
        if language == "en" and (art := _ARTICLE.search(text[:start])):
            start = art.start(1)
            article = "an" if wants_an(value) else "a"
            value = f"{article} {value}"
        before = text[:start].rstrip(" ")
        if not before or before[-1] in ".!?:\n":
            value = value[:1].upper() + value[1:]
        return text[:start] + value + text[end:], (start, start + len(value))


def _case_field(text: str, start: int) -> str | None:
    """The label of the case-file line holding position `start` (`Account bio: proud [ID] dad` -> `Account bio`)."""
    line = text[text.rfind("\n", 0, start) + 1:start]
    m = re.match(r"([^:]+):\s", line)
    return m.group(1).strip() if m else None


def judge_forms(data_dir: str | Path) -> dict:
    """identities.yaml `judge_forms` (derived and qualified words a judge reads as an identity), or {}."""
    return load_yaml(Path(data_dir) / "identities.yaml", "corpus source file").get("judge_forms") or {}


def base_id(row: PromptRow, line: int) -> str:
    return "u" + content_hash({"id": row.id or f"line {line}", "text": row.text, "language": row.language,
                               "condition": row.condition, "group": row.group})


def build(path: str | Path, params: CorpusParams, sources: Sources, validator: Validator,
          data_dir: str | Path) -> tuple[list[dict], list[Refusal]]:
    """(corpus rows, refused prompts) from the user's file; raises DataError when the file itself is bad."""
    prompts = read_prompts(path)
    renderer = Renderer(sources, judge_forms(data_dir), params.identities)
    rows, refusals, line_of = [], [], {}
    for line, p in prompts:
        who = p.id or f"line {line}"
        found = renderer.mention(p.text, p.language)
        if isinstance(found, str):
            refusals.append(Refusal(line, who, "no_swap", found))
            continue
        start, end, cue = found
        bid = base_id(p, line)
        line_of[bid] = (line, who)
        variants = [(ident, renderer.render(p.text, p.language, start, end, cue, ident)) for ident in params.identities]
        if why := next((v for _, v in variants if isinstance(v, str)), None):
            refusals.append(Refusal(line, who, "cannot_render", why))
            continue
        condition = CONDITION_OF[p.condition]
        field = _case_field(p.text, start) if condition == "C3" else None
        if condition == "C3" and field is None:
            refusals.append(Refusal(line, who, "no_field", "a decision case file names the identity on a 'Field: value' "
                                    "line (the structural mitigation hides that field)"))
            continue
        for ident, (text, (s, e)) in variants:
            rows.append({
                "prompt_id": prompt_id(bid, ident, p.language, text), "base_id": bid,
                "template": DECISION_TEMPLATE if condition == "C3" else OWN_TEMPLATE,
                "frame_id": p.group, "case_id": None, "harness": p.condition if condition == "C3" else None,
                "identity_field": field, "canonical": None, "cue": "noun" if cue.kind == "form" else cue.kind,
                "paraphrase": False, "identity": ident, "focal": ident == params.focal_identity,
                "language": p.language, "text": text, "swap_span": [s, e], "swap_text": text[s:e], "fills": {},
                "parallel": False, "condition": condition, "source_id": who, "source_line": line,
            })
    rejected: dict[str, dict[tuple[str, str], list[str]]] = {}
    for issue in validator.check(rows):
        rejected.setdefault(issue.base_id, {}).setdefault((issue.reason, issue.detail), []).append(issue.identity or "")
    for bid, why in rejected.items():
        line, who = line_of[bid]
        detail = "; ".join(f"{reason}: {d}" + (f" ({', '.join(sorted(filter(None, ids)))})" if any(ids) else "")
                           for (reason, d), ids in sorted(why.items()))
        refusals.append(Refusal(line, who, "validator", detail))
    rows = [r for r in rows if r["base_id"] not in rejected]
    splits.assign_splits(rows, params.lite_fraction, params.seed)
    return rows, sorted(refusals, key=lambda r: r.line)


def refusals_path(corpus_path: str | Path) -> Path:
    """Where the refused prompts of a corpus built from a prompts file are listed (next to it)."""
    return Path(corpus_path).with_name("refused.csv")


def write_refusals(path: str | Path, refusals: list[Refusal]) -> None:
    with atomic_write(path) as fh:
        w = csv.writer(fh, lineterminator="\n")
        w.writerow(["line", "id", "reason", "detail"])
        w.writerows([r.line, r.id, r.reason, r.detail] for r in refusals)
