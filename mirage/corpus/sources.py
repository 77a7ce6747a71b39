"""Load the corpus sources (the data folder): identities, lexicons, templates (T1-T6) and harness case files."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from mirage.identities import GENDERS, IdentitySet
from mirage.identities import load as load_identities
from mirage.io import DataError, load_yaml

# {id:FORM} / {Id:FORM}: the identity swap; {lex}, {Lex}, {lex.field}: a lexicon fill (capitalised if upper).
PLACEHOLDER = re.compile(r"\{([A-Za-z_]+)(?::([a-z_]+)|\.([a-z_]+))?\}")
TEMPLATE_IDS = ("T1", "T2", "T3", "T4", "T5", "T6")
# Identity forms that are not the identity noun (§3.1 cues): `{id:name}` and `{id:attire}` take the
# base prompt's entry of a cue lexicon, whose entries hold one matched surface form per identity.
CUE_LEXICONS = {"name": "given_name", "attire": "attire"}


#: The word right after the identity span of an English frame ("{id:adj} woman" -> woman).
NEXT_WORD = re.compile(r"\{[Ii]d:[a-z_]+\}\s+([A-Za-z]+)")


def identity_form(text: str) -> str:
    """The FORM of the single `{id:FORM}` swap in a frame text."""
    return next(m.group(2) for m in PLACEHOLDER.finditer(text) if m.group(1).lower() == "id")


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
    paraphrase: str | None = None  # English paraphrase with the same slots (the paraphrase placebo)
    paraphrase_identity_field: str | None = None  # T5: the identity field's label in the paraphrase

    @property
    def case_id(self) -> str | None:
        return self.frame_id if self.template == "T5" else None

    @property
    def cue(self) -> str:
        """How the identity is signalled (§3.1): `noun`, `name` or `attire`."""
        form = identity_form(self.texts["en"])
        return form if form in CUE_LEXICONS else "noun"

    def gender(self, fills: dict[str, dict], gendered_nouns: dict[str, str]) -> str | None:
        """The gender the cue carries (`f` / `m`): the cue lexicon entry's `gender`; for a noun cue the gender of the
        English person noun right after the identity adjective ("a {id:adj} woman"; identities.yaml
        `gendered_nouns`), None where that noun carries none ("a {id:adj} student")."""
        if self.cue != "noun":
            return fills[CUE_LEXICONS[self.cue]]["gender"]
        after = NEXT_WORD.search(self.texts["en"])
        return gendered_nouns.get(after.group(1).casefold()) if after else None

    def slots(self) -> list[str]:
        """Lexicon names filled in this frame (sorted; the identity excluded, a cue lexicon included)."""
        names = {m.group(1).lower() for m in PLACEHOLDER.finditer(self.texts["en"])}
        names.discard("id")
        if self.cue != "noun":
            names.add(CUE_LEXICONS[self.cue])
        return sorted(names)


@dataclass(frozen=True)
class Sources:
    identity_forms: dict[str, dict[str, dict[str, str]]]
    identity_tokens: dict[str, list[str]]
    presupposing_terms: list[str]
    lexicons: dict[str, list[dict]]
    frames: dict[str, list[Frame]]
    harness_meta: dict[str, dict[str, Any]]
    gendered_nouns: dict[str, str] = field(default_factory=dict)

    def cue_forms(self) -> dict[str, set[str]]:
        """identity -> every name and attire form it can take (any language): valid swap spans besides the nouns."""
        out: dict[str, set[str]] = {}
        for lexicon in CUE_LEXICONS.values():
            for entry in self.lexicons.get(lexicon, []):
                for key, value in entry.items():
                    if key == "en" or key == "ar" or key.startswith("ar-"):
                        for ident, form in value.items():
                            out.setdefault(ident, set()).add(str(form))
        return out

    def given_names(self) -> list[str]:
        """Every English given name of the name cue (they signal an identity, so they may appear only in the span)."""
        return sorted({str(n) for e in self.lexicons.get(CUE_LEXICONS["name"], []) for n in e["en"].values()})


def _load_yaml(path: Path, kind: type = object) -> Any:
    doc = load_yaml(path, "corpus source file")
    if not isinstance(doc, kind):
        raise DataError(f"{path}: top level must be a {'mapping' if kind is dict else kind.__name__}, got {type(doc).__name__}")
    return doc


def _check_cue_lexicon(name: str, entries: list[dict], names: tuple[str, ...], where: str) -> None:
    """A cue lexicon (names, attire) holds, in each entry and language, one distinct form for every identity, and the
    gender its forms carry (`gender: f|m`, the religion x gender cells of mirage metrics)."""
    for i, entry in enumerate(entries, 1):
        label = f"{where}: entry {entry.get('key', i)}"
        if entry.get("gender") not in GENDERS:
            raise DataError(f"{label}: field 'gender' must be one of {', '.join(GENDERS)}, got {entry.get('gender')!r}")
        for lang, forms in entry.items():
            if lang != "en" and lang != "ar":
                continue
            if not isinstance(forms, dict):
                raise DataError(f"{label}: field '{lang}' must map every identity to its form")
            missing = [n for n in names if not str(forms.get(n) or "").strip()]
            if missing:
                raise DataError(f"{label}: field '{lang}' lacks identity {', '.join(missing)} (every identity of "
                                "identities.yaml needs a form in every entry)")
            _distinct_forms(forms, f"{label} field {lang}")


def _distinct_forms(forms: dict[str, Any], where: str) -> None:
    """Identities must differ in every surface form (else their 'matched pairs' are identical prompts)."""
    seen: dict[str, str] = {}
    for ident, form in forms.items():
        key = " ".join(str(form).split()).casefold()
        if key in seen:
            raise DataError(f"{where}: identities {seen[key]} and {ident} share the surface form {str(form)!r}; "
                            "identities must have disjoint surface forms")
        seen[key] = ident


def _check_frame_forms(frame: Frame, ident: IdentitySet) -> None:
    """Every identity has the form (and so the agreement: a/an, plural, Arabic gender and number) each text asks for."""
    for lang, text in frame.texts.items():
        form = identity_form(text)
        if form in CUE_LEXICONS:
            continue
        family = "en" if lang == "en" else "ar"
        for name in ident.names:
            if form not in ident.forms[name].get(family, {}):
                raise DataError(f"{frame.source}: frame '{frame.frame_id}' ({lang}) uses {{id:{form}}} but "
                                f"{ident.path} entry forms.{name}.{family} has no field '{form}'")


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
    paraphrase = raw.get("paraphrase")
    if paraphrase is not None:
        _check_paraphrase(raw["id"], raw["en"], paraphrase, source)
    return Frame(template, raw["id"], texts, source, canonical=raw.get("canonical"), paraphrase=paraphrase)


def _check_paraphrase(frame_id: str, text: str, paraphrase: str, source: str) -> None:
    """A paraphrase keeps the identity cue and the fills of its frame (same meaning, same slots)."""
    def slots(t: str) -> set[str]:
        return {m.group(1).lower() + ("." + m.group(3) if m.group(3) else "") for m in PLACEHOLDER.finditer(t)
                if m.group(1).lower() != "id"}

    n_id = sum(1 for m in PLACEHOLDER.finditer(paraphrase) if m.group(1).lower() == "id")
    if n_id != 1:
        raise DataError(f"{source}: frame '{frame_id}' paraphrase must contain exactly one {{id:...}} swap, found {n_id}")
    if identity_form(paraphrase) != identity_form(text) and CUE_LEXICONS.get(identity_form(text)):
        raise DataError(f"{source}: frame '{frame_id}' paraphrase must keep the identity cue {{id:{identity_form(text)}}}")
    if {s.split(".")[0] for s in slots(paraphrase)} != {s.split(".")[0] for s in slots(text)}:
        raise DataError(f"{source}: frame '{frame_id}' paraphrase must use the same fills as the frame "
                        f"({sorted(slots(text))}), has {sorted(slots(paraphrase))}")
    if paraphrase.strip() == text.strip():
        raise DataError(f"{source}: frame '{frame_id}' paraphrase is identical to the frame")


def _harness_frames(hid: str, raw: dict, source: str) -> list[Frame]:
    """One frame per case file of a harness (frame_id = case id); the identity sits in one field."""
    for key in ("cases", "identity_field", "rubric", "instruction", "decision"):
        if key not in raw:
            raise DataError(f"{source}: harness {hid} is missing '{key}'")
    lexicons = {n: _check_lexicon(n, e, source) for n, e in (raw.get("lexicons") or {}).items()}
    relabel = raw.get("paraphrase_labels") or {}
    frames, seen = [], set()
    for i, case in enumerate(raw["cases"], 1):
        cid = case.get("id") if isinstance(case, dict) else None
        if not cid or not case.get("file"):
            raise DataError(f"{source}: harness {hid} case {i} needs 'id' and 'file' (a list of [field, value])")
        if cid in seen:
            raise DataError(f"{source}: harness {hid} has two cases with id '{cid}'")
        seen.add(cid)
        id_field = case.get("identity_field", raw["identity_field"])
        fields = [f[0] for f in case["file"]]
        if fields.count(id_field) != 1:
            raise DataError(f"{source}: case '{cid}': identity field '{id_field}' must be one case-file field ({fields})")
        text = "\n".join(f"{name}: {value}" for name, value in case["file"])
        para = "\n".join(f"{relabel.get(name, name)}: {value}" for name, value in case["file"]) if relabel else None
        frame = _frame_from("T5", {"id": cid, "en": text}, source)
        frames.append(Frame("T5", cid, frame.texts, source, harness=hid, identity_field=id_field, lexicons=lexicons,
                            paraphrase=para, paraphrase_identity_field=relabel.get(id_field, id_field)))
    return frames


def load_sources(data_dir: str | Path) -> Sources:
    """Read every corpus source file; errors name the file and the entry at fault."""
    data_dir = Path(data_dir)
    ident = load_identities(data_dir)
    lexicons: dict[str, list[dict]] = {}
    for path in sorted((data_dir / "lexicons").glob("*.yaml")):
        lexicons[path.stem] = _check_lexicon(path.stem, _load_yaml(path), str(path))
        if path.stem in CUE_LEXICONS.values():
            _check_cue_lexicon(path.stem, lexicons[path.stem], ident.names, str(path))
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
                frames[tid] += _harness_frames(hid, hraw, str(hpath))
        else:
            frames[tid] = _unique_frames([_frame_from(tid, f, str(path)) for f in raw.get("frames") or []], path)
        if not frames[tid]:
            raise DataError(f"{path}: template {tid} has no frames")
    for tid, fs in frames.items():
        for fr in fs:
            _check_frame_forms(fr, ident)
            for slot in fr.slots():
                if slot not in fr.lexicons and slot not in lexicons:
                    raise DataError(f"{fr.source}: frame '{fr.frame_id}' uses {{{slot}}} but no lexicon '{slot}' exists")
    return Sources(
        identity_forms=ident.forms,
        identity_tokens=ident.tokens,
        presupposing_terms=ident.presupposing_terms,
        lexicons=lexicons,
        frames=frames,
        harness_meta=harness_meta,
        gendered_nouns=ident.gendered_nouns,
    )
