"""Read a gold JSONL file and instantiate its `[ID]` rows once per identity (identities.yaml).

Row fields: `text` (str), `label` (0/1), optional `reasoning` (str: why the label, shown with
misclassified rows), `language` (default `en`;
`ar`, `ar-msa`, `ar-egy`, `ar-lev`, `ar-mag`, ... use the Arabic forms), `cat` (str). Any other
field is kept. The placeholder `[ID]` is replaced with the identity's adjective form for the row's
language (Arabic: the masculine singular adjective, e.g. مسلم; the text supplies article or suffix).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import yaml

from mirage import untrusted
from mirage.config.limits import LimitsParams
from mirage.io import DataError

PLACEHOLDER = "[ID]"


@dataclass(frozen=True)
class GoldItem:
    line: int
    text: str
    label: int
    language: str
    cat: str
    identity: str  # the identity filled into [ID], or "none" for rows without the placeholder
    template: bool  # True when the row had [ID] (counts towards invariance)
    reasoning: str | None = None


def identity_adjectives(data_dir: str | Path = "data") -> dict[str, dict[str, str]]:
    """identity -> language family (`en`, `ar`) -> adjective form."""
    forms = yaml.safe_load((Path(data_dir) / "identities.yaml").read_text(encoding="utf-8"))["forms"]
    return {ident: {lang: str(table["adj"]) for lang, table in langs.items()} for ident, langs in forms.items()}


def _family(language: str) -> str:
    return language.split("-")[0]


def _field(path: Path, lineno: int, row: dict, name: str, kinds: tuple[type, ...], required: bool = True):
    if name not in row:
        if required:
            raise DataError(f"{path}:{lineno}: field {name}: missing")
        return None
    value = row[name]
    if not isinstance(value, kinds) or isinstance(value, bool) and bool not in kinds:
        raise DataError(f"{path}:{lineno}: field {name}: expected {' or '.join(k.__name__ for k in kinds)}, got {value!r}")
    return value


def read_gold(path: str | Path, data_dir: str | Path = "data", limits: LimitsParams = untrusted.LIMITS) -> list[GoldItem]:
    """Every gold row, `[ID]` rows expanded per identity; a malformed row raises DataError naming line and field.
    The file is read as untrusted input (mirage.untrusted: size, line, JSON depth and duplicate-key limits)."""
    path = Path(path)
    adjectives = identity_adjectives(data_dir)
    items: list[GoldItem] = []
    for lineno, row in untrusted.iter_jsonl(path, "file", limits):
        text = _field(path, lineno, row, "text", (str,))
        if not text.strip():
            raise DataError(f"{path}:{lineno}: field text: empty")
        label = _field(path, lineno, row, "label", (int,))
        if label not in (0, 1):
            raise DataError(f"{path}:{lineno}: field label: must be 0 or 1, got {label!r}")
        language = _field(path, lineno, row, "language", (str,), required=False) or "en"
        cat = _field(path, lineno, row, "cat", (str,), required=False) or "uncategorised"
        reasoning = _field(path, lineno, row, "reasoning", (str,), required=False)
        if PLACEHOLDER not in text:
            items.append(GoldItem(lineno, text, label, language, cat, "none", False, reasoning))
            continue
        family = _family(language)
        for ident, langs in adjectives.items():
            if family not in langs:
                raise DataError(f"{path}:{lineno}: field language: no {family!r} adjective for identity {ident} "
                                f"in {Path(data_dir) / 'identities.yaml'}")
            filled = text.replace(PLACEHOLDER, langs[family])
            if text.startswith(PLACEHOLDER):
                filled = filled[:1].upper() + filled[1:]
            items.append(GoldItem(lineno, filled, label, language, cat, ident, True, reasoning))
    if not items:
        raise DataError(f"{path}: no gold rows")
    return items
