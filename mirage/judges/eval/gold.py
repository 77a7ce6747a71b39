"""Read a gold JSONL file and instantiate its identity placeholders once per identity (identities.yaml).

Row fields (docs/judge.md): `text` (str), `label` (0/1), optional `reasoning` (str: why the label,
shown with misclassified rows), `language` (default `en`; `ar`, `ar-msa`, `ar-egy`, `ar-lev`, `ar-mag`, ...
use the Arabic forms), `cat` (str), `id` (str), `split` (`dev` | `heldout`), `shape` (str: c1-continuation,
c2-reasoning, c3-moderation, news, story, ...), `condition` (`C1` | `C2` | `C3`; derived from `shape` when
absent: c2-* -> C2, c3-* -> C3, else C1), `phenomena` (list of str), `label_pass2` (0/1),
`reasoning_pass2` (str), `resolution` (str); real-text rows: `source` (str: the public source the text was taken
from) and `source_split` (`dev` | `heldout`: whether the whole source is frozen as held out). Any other field is kept
in `GoldItem.extra`.

`[ID]` is the identity's adjective (`adj`); `[ID:form]` names any form of identities.yaml for the row's
language family (en: `adj`, `noun_pl`; ar: `adj`, `adj_f`, `adj_def`, `adj_f_def`, `pl`, `pl_nom`, `pl_f`,
`dual`). A placeholder at the start of the text or of a sentence is capitalised.
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass, field
from pathlib import Path

from mirage import untrusted
from mirage.identities import load as load_identities
from mirage.io import DataError
from mirage.limits import LimitsParams

PLACEHOLDER = "[ID]"
_PLACEHOLDER = re.compile(r"\[ID(?::([A-Za-z_]+))?\]")
_SENTENCE_START = re.compile(r"(?:\A|[.!?:]\s+|\n\s*|[\"“]\s*)\Z")
SPLITS: tuple[str, ...] = ("dev", "heldout")
SPLIT_SALT = "mirage-realistic-gold-v1:"  # the realistic set's frozen split (SPLIT.md beside its files)
HELDOUT_SHARE = 0.45
CONDITIONS: tuple[str, ...] = ("C1", "C2", "C3")
# fields held by GoldItem's own attributes; every other field (label_pass2, reasoning_pass2, resolution, source,
# ...) is kept in GoldItem.extra
ITEM_FIELDS = frozenset({"text", "label", "language", "cat", "reasoning", "id", "split", "shape", "condition", "phenomena"})


@dataclass(frozen=True)
class GoldItem:
    line: int
    text: str
    label: int
    language: str
    cat: str
    identity: str  # the identity filled into the placeholders, or "none" for rows without one
    template: bool  # True when the row had a placeholder (counts towards invariance)
    reasoning: str | None = None
    row_id: str | None = None
    split: str | None = None
    shape: str | None = None
    condition: str = "C1"
    phenomena: tuple[str, ...] = ()
    source: str = ""  # the gold file's name (a named set when several files are evaluated)
    extra: dict = field(default_factory=dict, compare=False, hash=False)

    @property
    def family(self) -> str:
        """Language family: `en` or `ar` (all Arabic dialects)."""
        return family(self.language)


def realistic_split(row_id: str) -> str:
    """The realistic gold set's frozen split of a row id: `heldout` when the first 32 bits of
    sha256(SPLIT_SALT + id) fall below HELDOUT_SHARE, else `dev` (fixed before any rule was tuned)."""
    h = int(hashlib.sha256((SPLIT_SALT + row_id).encode("utf-8")).hexdigest()[:8], 16)
    return "heldout" if h / 2**32 < HELDOUT_SHARE else "dev"


def family(language: str) -> str:
    return language.split("-")[0]


def identity_forms(data_dir: str | Path = "data") -> dict[str, dict[str, dict[str, str]]]:
    """identity -> language family (`en`, `ar`) -> form key (`adj`, `noun_pl`, `pl`, ...) -> surface form."""
    return load_identities(data_dir).forms


def identity_adjectives(data_dir: str | Path = "data") -> dict[str, dict[str, str]]:
    """identity -> language family (`en`, `ar`) -> adjective form."""
    return {ident: {lang: table["adj"] for lang, table in langs.items()} for ident, langs in identity_forms(data_dir).items()}


def derive_condition(shape: str | None) -> str:
    """The condition a row's shape belongs to: c2-* -> C2, c3-* -> C3, anything else (or none) -> C1."""
    prefix = (shape or "").lower().split("-")[0]
    return {"c2": "C2", "c3": "C3"}.get(prefix, "C1")


def _field(path: Path, lineno: int, row: dict, name: str, kinds: tuple[type, ...], required: bool = True):
    if name not in row:
        if required:
            raise DataError(f"{path}:{lineno}: field {name}: missing")
        return None
    value = row[name]
    if not isinstance(value, kinds) or isinstance(value, bool) and bool not in kinds:
        raise DataError(f"{path}:{lineno}: field {name}: expected {' or '.join(k.__name__ for k in kinds)}, got {value!r}")
    return value


def _choice(path: Path, lineno: int, row: dict, name: str, allowed: tuple) -> object:
    value = _field(path, lineno, row, name, (str, int) if isinstance(allowed[0], int) else (str,), required=False)
    if value is not None and value not in allowed:
        raise DataError(f"{path}:{lineno}: field {name}: must be one of {', '.join(map(str, allowed))}, got {value!r}")
    return value


def fill(text: str, table: dict[str, str]) -> str:
    """`text` with every `[ID]` / `[ID:form]` replaced by the form of `table`; capitalised at a sentence start.
    An unknown form raises KeyError(form)."""
    out, last = [], 0
    for m in _PLACEHOLDER.finditer(text):
        value = table[m.group(1) or "adj"]
        out.append(text[last:m.start()])
        if _SENTENCE_START.search(text[:m.start()]):
            value = value[:1].upper() + value[1:]
        out.append(value)
        last = m.end()
    out.append(text[last:])
    return "".join(out)


def _row_fields(path: Path, lineno: int, row: dict) -> dict:
    """The optional annotation fields of one row, validated."""
    shape = _field(path, lineno, row, "shape", (str,), required=False)
    condition = _choice(path, lineno, row, "condition", CONDITIONS) or derive_condition(shape)
    phenomena = _field(path, lineno, row, "phenomena", (list,), required=False) or []
    if not all(isinstance(p, str) for p in phenomena):
        raise DataError(f"{path}:{lineno}: field phenomena: expected a list of str, got {phenomena!r}")
    pass2 = _field(path, lineno, row, "label_pass2", (int,), required=False)
    if pass2 is not None and pass2 not in (0, 1):
        raise DataError(f"{path}:{lineno}: field label_pass2: must be 0 or 1, got {pass2!r}")
    for name in ("reasoning_pass2", "resolution", "source"):
        _field(path, lineno, row, name, (str,), required=False)
    if _choice(path, lineno, row, "source_split", SPLITS) and not row.get("source"):
        raise DataError(f"{path}:{lineno}: field source: required with source_split (the real text's source)")
    return {"row_id": _field(path, lineno, row, "id", (str,), required=False),
            "split": _choice(path, lineno, row, "split", SPLITS), "shape": shape, "condition": condition,
            "phenomena": tuple(phenomena), "extra": {k: v for k, v in row.items() if k not in ITEM_FIELDS}}


def read_gold(path: str | Path, data_dir: str | Path = "data", limits: LimitsParams = untrusted.LIMITS) -> list[GoldItem]:
    """Every gold row, placeholder rows expanded per identity; a malformed row raises DataError naming line and field.
    The file is read as untrusted input (mirage.untrusted: size, line, JSON depth and duplicate-key limits)."""
    path = Path(path)
    forms = identity_forms(data_dir)
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
        common = dict(line=lineno, label=label, language=language, cat=cat, reasoning=reasoning, source=path.name,
                      **_row_fields(path, lineno, row))
        if not _PLACEHOLDER.search(text):
            items.append(GoldItem(text=text, identity="none", template=False, **common))
            continue
        fam = family(language)
        for ident, langs in forms.items():
            if fam not in langs:
                raise DataError(f"{path}:{lineno}: field language: no {fam!r} adjective for identity {ident} "
                                f"in {Path(data_dir) / 'identities.yaml'}")
            try:
                filled = fill(text, langs[fam])
            except KeyError as exc:
                raise DataError(f"{path}:{lineno}: field text: unknown identity form [ID:{exc.args[0]}] for language "
                                f"family {fam!r} (known: {', '.join(langs[fam])})") from None
            items.append(GoldItem(text=filled, identity=ident, template=True, **common))
    if not items:
        raise DataError(f"{path}: no gold rows")
    return items
