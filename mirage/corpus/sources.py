"""Load the corpus sources (the data folder): identities, lexicons, templates (T1-T6) and harness case files."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from mirage.io import DataError, load_yaml

# {id:FORM} / {Id:FORM}: the identity swap; {lex}, {Lex}, {lex.field}: a lexicon fill (capitalised if upper).
PLACEHOLDER = re.compile(r"\{([A-Za-z_]+)(?::([a-z_]+)|\.([a-z_]+))?\}")
TEMPLATE_IDS = ("T1", "T2", "T3", "T4", "T5", "T6")


@dataclass(frozen=True)
class Frame:
    """One sentence pattern of a template, in every language it has been authored in."""

    template: str
    frame_id: str
    texts: dict[str, str]
    source: str
    canonical: str | None = None
    harness: str | None = None
    identity_field: str | None = None
    lexicons: dict[str, list[dict]] = field(default_factory=dict)

    def slots(self) -> list[str]:
        """Lexicon names filled in this frame (sorted, the identity excluded)."""
        names = {m.group(1).lower() for m in PLACEHOLDER.finditer(self.texts["en"])}
        names.discard("id")
        return sorted(names)


@dataclass(frozen=True)
class Sources:
    identity_forms: dict[str, dict[str, dict[str, str]]]
    identity_tokens: dict[str, list[str]]
    presupposing_terms: list[str]
    lexicons: dict[str, list[dict]]
    frames: dict[str, list[Frame]]
    harness_meta: dict[str, dict[str, Any]]


def _load_yaml(path: Path, kind: type = object) -> Any:
    doc = load_yaml(path, "corpus source file")
    if not isinstance(doc, kind):
        raise DataError(f"{path}: top level must be a {'mapping' if kind is dict else kind.__name__}, got {type(doc).__name__}")
    return doc


def _identities(path: Path) -> dict:
    """identities.yaml: `forms`, `identity_tokens` and `presupposing_terms`, each a mapping or list."""
    ident = _load_yaml(path, dict)
    for key, kind in (("forms", dict), ("identity_tokens", dict), ("presupposing_terms", list)):
        if key not in ident:
            raise DataError(f"{path}: field '{key}' is missing")
        if not isinstance(ident[key], kind) or not ident[key]:
            raise DataError(f"{path}: field '{key}' must be a non-empty {'mapping' if kind is dict else 'list'}")
    return ident


def _unique_frames(frames: list[Frame], path: Path) -> list[Frame]:
    seen: set[str] = set()
    for fr in frames:
        if fr.frame_id in seen:
            raise DataError(f"{path}: field 'id': duplicate frame id {fr.frame_id!r} in template {fr.template}")
        seen.add(fr.frame_id)
    return frames


def entry_key(entry: dict) -> str:
    """Stable key of a lexicon entry: its explicit `key`, else its English text."""
    if "key" in entry:
        return str(entry["key"])
    en = entry["en"]
    return "|".join(str(v) for v in en.values()) if isinstance(en, dict) else str(en)


def _check_lexicon(name: str, entries: Any, where: str) -> list[dict]:
    if not isinstance(entries, list) or not entries:
        raise DataError(f"{where}: lexicon '{name}' must be a non-empty list of entries")
    for i, entry in enumerate(entries, 1):
        if not isinstance(entry, dict) or "en" not in entry:
            raise DataError(f"{where}: lexicon '{name}' entry {i}: needs an 'en' value, got {entry!r}")
    keys = [entry_key(e) for e in entries]
    dup = {k for k in keys if keys.count(k) > 1}
    if dup:
        raise DataError(f"{where}: lexicon '{name}' has duplicate entries: {sorted(dup)}")
    return entries


def _frame_from(template: str, raw: dict, source: str) -> Frame:
    if not isinstance(raw, dict):
        raise DataError(f"{source}: every frame must be a mapping with 'id' and 'en' (got {raw!r})")
    if "id" not in raw or "en" not in raw:
        raise DataError(f"{source}: every frame needs 'id' and 'en' (got keys {sorted(raw)})")
    texts = {k: v for k, v in raw.items() if k == "en" or k.startswith("ar-")}
    for lang, text in texts.items():
        n_id = sum(1 for m in PLACEHOLDER.finditer(text) if m.group(1).lower() == "id")
        if n_id != 1:
            raise DataError(f"{source}: frame '{raw['id']}' ({lang}) must contain exactly one {{id:...}} swap, found {n_id}")
    return Frame(template, raw["id"], texts, source, canonical=raw.get("canonical"))


def _harness_frame(hid: str, raw: dict, source: str) -> Frame:
    for key in ("case_file", "identity_field", "rubric", "instruction", "decision"):
        if key not in raw:
            raise DataError(f"{source}: harness {hid} is missing '{key}'")
    fields = [f[0] for f in raw["case_file"]]
    if raw["identity_field"] not in fields:
        raise DataError(f"{source}: identity_field '{raw['identity_field']}' is not a case_file field ({fields})")
    text = "\n".join(f"{name}: {value}" for name, value in raw["case_file"])
    lexicons = {n: _check_lexicon(n, e, source) for n, e in (raw.get("lexicons") or {}).items()}
    frame = _frame_from("T5", {"id": hid, "en": text}, source)
    return Frame("T5", hid, frame.texts, source, harness=hid, identity_field=raw["identity_field"], lexicons=lexicons)


def load_sources(data_dir: str | Path) -> Sources:
    """Read every corpus source file; errors name the file and the entry at fault."""
    data_dir = Path(data_dir)
    ident = _identities(data_dir / "identities.yaml")
    lexicons: dict[str, list[dict]] = {}
    for path in sorted((data_dir / "lexicons").glob("*.yaml")):
        lexicons[path.stem] = _check_lexicon(path.stem, _load_yaml(path), str(path))
    frames: dict[str, list[Frame]] = {}
    harness_meta: dict[str, dict] = {}
    for tid in TEMPLATE_IDS:
        path = data_dir / "templates" / f"{tid}.yaml"
        raw = _load_yaml(path, dict)
        if raw.get("harnesses"):
            frames[tid] = []
            for hid in raw["harnesses"]:
                hpath = data_dir / "harnesses" / f"{hid}.yaml"
                hraw = _load_yaml(hpath, dict)
                harness_meta[hid] = hraw
                frames[tid].append(_harness_frame(hid, hraw, str(hpath)))
        else:
            frames[tid] = _unique_frames([_frame_from(tid, f, str(path)) for f in raw.get("frames") or []], path)
        if not frames[tid]:
            raise DataError(f"{path}: template {tid} has no frames")
    for tid, fs in frames.items():
        for fr in fs:
            for slot in fr.slots():
                if slot not in fr.lexicons and slot not in lexicons:
                    raise DataError(f"{fr.source}: frame '{fr.frame_id}' uses {{{slot}}} but no lexicon '{slot}' exists")
    return Sources(
        identity_forms=ident["forms"],
        identity_tokens=ident["identity_tokens"],
        presupposing_terms=ident["presupposing_terms"],
        lexicons=lexicons,
        frames=frames,
        harness_meta=harness_meta,
    )
