"""The identity set, read from the data folder's `identities.yaml` and nowhere else: which identities exist (the keys of `forms`, in
file order), each identity's surface forms per language family (`en`, `ar`), the forms a judge must recognise
(`judge_forms`), the tokens that reveal an identity and the fills that presuppose one.

Adding an identity is a data change (the data folder's README, "Adding an identity"); `load` refuses a set whose identities
could be confused: a form shared by two identities, one identity's form inside another's, near-identical spellings,
or a form key (an agreement form: `adj`, `noun_pl`, Arabic `adj_f`, `pl`, ...) that one identity has and another lacks.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Annotated, Any

from pydantic import AfterValidator

from mirage import artefacts
from mirage.io import DataError, load_yaml

#: `judge_forms` key for religions outside the identity set (a text about them is about a religious identity too).
OTHER = "other"
#: Form keys that name an affiliation in a case file rather than a word of a sentence (not checked for look-alikes).
AFFILIATION = "affiliation"
#: Genders a cue may carry: a cue lexicon entry's `gender`, or a gendered noun after the identity adjective.
GENDERS = ("f", "m")
#: Two forms of different identities at most this many edits apart (case-folded, both of 4+ letters) are look-alikes.
LOOKALIKE_EDITS = 1
_NAME = re.compile(r"^[a-z][a-z0-9_]{0,31}$")


@dataclass(frozen=True)
class IdentitySet:
    """The validated content of identities.yaml."""

    path: str
    names: tuple[str, ...]
    forms: dict[str, dict[str, dict[str, str]]]  # identity -> `en`/`ar` -> form key -> surface form
    judge_forms: dict[str, dict[str, dict[str, str]]]  # identity or `other` -> `en`/`ar` -> word -> form key
    tokens: dict[str, list[str]]  # language family -> identity-revealing tokens
    exonyms: dict[str, list[str]]  # identity -> its spellings in languages the corpus does not render
    presupposing_terms: list[str]
    gendered_nouns: dict[str, str]  # English person noun right after the identity adjective -> its gender (f / m)

    @property
    def default_focal(self) -> str:
        """The identity params choose when they name none: the first of the file."""
        return self.names[0]

    def check(self, values: list[str] | str) -> None:
        """Raise ValueError (params validation names the file and the field) unless every value is an identity of
        this set."""
        bad = [v for v in ([values] if isinstance(values, str) else values) if v not in self.names]
        if bad:
            raise ValueError(f"{', '.join(map(repr, bad))} not an identity of {self.path} "
                             f"(have {', '.join(self.names)}); add one there (the data folder's README, 'Adding an identity')")


def project_set() -> IdentitySet | None:
    """The identity set of the project run from (identities.yaml in the data folder of the working folder), None outside a project:
    params name identities of it, and commands that read no data (metrics, generate, report) run anywhere."""
    return load() if Path(artefacts.identities()).is_file() else None


def known(value: str) -> str:
    """A params value naming an identity: one of the project's identity set (unchecked outside a project)."""
    if value and (s := project_set()):
        s.check(value)
    return value


#: A params field naming an identity of the data folder's identities.yaml.
IdentityName = Annotated[str, AfterValidator(known)]


def load(data_dir: str | Path = artefacts.DATA) -> IdentitySet:
    """The identity set of `data_dir` (cached per file and modification time)."""
    path = Path(artefacts.identities(str(data_dir)))
    try:
        stamp = path.stat().st_mtime_ns
    except OSError:
        raise DataError(f"{path}: identity set not found (params name identities of this file; run from the project "
                        "root or pass the data folder)") from None
    return _load(str(path), stamp)


@lru_cache(maxsize=8)
def _load(path: str, _stamp: int) -> IdentitySet:
    doc = load_yaml(path, "corpus source file")
    if not isinstance(doc, dict):
        raise DataError(f"{path}: top level must be a mapping with 'forms', 'identity_tokens', 'presupposing_terms'")
    for key, kind in (("forms", dict), ("identity_tokens", dict), ("presupposing_terms", list)):
        if not isinstance(doc.get(key), kind) or not doc[key]:
            raise DataError(f"{path}: field '{key}' must be a non-empty {'mapping' if kind is dict else 'list'}")
    forms = _forms(doc["forms"], path)
    if len(forms) < 2:
        raise DataError(f"{path}: field 'forms' needs at least two identities (a focal one and a control)")
    judge = _judge_forms(doc.get("judge_forms") or {}, forms, path)
    tokens = {str(lang): [str(t) for t in toks] for lang, toks in doc["identity_tokens"].items()
              if isinstance(toks, list)}
    if set(tokens) != set(doc["identity_tokens"]):
        raise DataError(f"{path}: field 'identity_tokens': every language must map to a list of tokens")
    exonyms = doc.get("exonyms") or {}
    if not isinstance(exonyms, dict) or any(i not in forms or not isinstance(v, list) for i, v in exonyms.items()):
        raise DataError(f"{path}: field 'exonyms' must map identities of 'forms' to lists of spellings")
    exonyms = {i: [str(w) for w in v] for i, v in exonyms.items()}
    _check_agreement(forms, path)
    _check_disjoint(forms, judge, exonyms, path)
    _check_tokens(forms, tokens, path)
    return IdentitySet(path, tuple(forms), forms, judge, tokens, exonyms, [str(t) for t in doc["presupposing_terms"]],
                       _gendered_nouns(doc.get("gendered_nouns") or {}, path))


def _gendered_nouns(raw: Any, path: str) -> dict[str, str]:
    """`gendered_nouns: {f: [woman, ...], m: [man, ...]}` -> noun -> gender; a noun may carry one gender only."""
    if not isinstance(raw, dict) or set(raw) - set(GENDERS) or any(not isinstance(v, list) for v in raw.values()):
        raise DataError(f"{path}: field 'gendered_nouns' must map {' and '.join(GENDERS)} to lists of English nouns")
    out: dict[str, str] = {}
    for gender, nouns in raw.items():
        for noun in nouns:
            word = _fold(str(noun))
            if out.setdefault(word, gender) != gender:
                raise DataError(f"{path}: entry gendered_nouns.{gender}: {noun!r} is listed under both genders")
    return out


def _forms(raw: dict, path: str) -> dict[str, dict[str, dict[str, str]]]:
    out: dict[str, dict[str, dict[str, str]]] = {}
    for ident, langs in raw.items():
        where = f"{path}: entry forms.{ident}"
        if not isinstance(ident, str) or not _NAME.match(ident) or ident == OTHER:
            raise DataError(f"{where}: an identity's key is lower-case letters, digits and _ (at most 32), not '{OTHER}'")
        if not isinstance(langs, dict) or "en" not in langs:
            raise DataError(f"{where}: field 'en' is missing (forms per language family: en, ar)")
        out[ident] = {}
        for lang, table in langs.items():
            if lang not in ("en", "ar") or not isinstance(table, dict) or not table:
                raise DataError(f"{where}: field '{lang}': expected language family en or ar, mapping form key -> form")
            for key, form in table.items():
                if not isinstance(form, str) or not form.strip():
                    raise DataError(f"{where}: field '{lang}.{key}': a form is non-empty text, got {form!r}")
            out[ident][lang] = {str(k): str(v) for k, v in table.items()}
    return out


def _judge_forms(raw: Any, forms: dict, path: str) -> dict[str, dict[str, dict[str, str]]]:
    if not isinstance(raw, dict):
        raise DataError(f"{path}: field 'judge_forms' must be a mapping identity -> language -> word -> form key")
    out: dict[str, dict[str, dict[str, str]]] = {}
    for ident, langs in raw.items():
        where = f"{path}: entry judge_forms.{ident}"
        if ident != OTHER and ident not in forms:
            raise DataError(f"{where}: not an identity of 'forms' (have {', '.join(forms)}) nor '{OTHER}'")
        if not isinstance(langs, dict):
            raise DataError(f"{where}: expected a mapping language -> word -> form key")
        out[ident] = {}
        for lang, table in langs.items():
            if lang not in ("en", "ar") or not isinstance(table, dict):
                raise DataError(f"{where}: field '{lang}': expected language family en or ar, mapping word -> form key")
            for word, spec in table.items():
                key = str(spec).partition(" ")[0]
                if key != "religion" and key not in forms[next(iter(forms))].get(lang, {}):
                    raise DataError(f"{where}: field '{lang}.{word}': form key '{key}' is not a form of 'forms' "
                                    "nor 'religion'")
            out[ident][lang] = {str(w): str(s) for w, s in table.items()}
    return out


def _check_agreement(forms: dict[str, dict[str, dict[str, str]]], path: str) -> None:
    """Every identity has the same languages and form keys (the agreement forms a frame may ask for)."""
    first = next(iter(forms))
    for ident, langs in forms.items():
        for lang in set(langs) | set(forms[first]):
            want, have = set(forms[first].get(lang, {})), set(langs.get(lang, {}))
            for other, missing in ((ident, want - have), (first, have - want)):
                if missing:
                    raise DataError(f"{path}: entry forms.{other}: field '{lang}' lacks form key(s) "
                                    f"{', '.join(sorted(missing))} that another identity has (every identity needs "
                                    "every agreement form a frame may use)")


def _fold(text: str) -> str:
    return " ".join(text.split()).casefold()


def _check_disjoint(forms: dict, judge: dict, exonyms: dict, path: str) -> None:
    """No surface form (of `forms`, `judge_forms` or `exonyms`) belongs to two identities, lies inside another identity's form
    (as a word, or as a prefix of a word), or is a near-identical spelling of one."""
    owned: list[tuple[str, str, str, str]] = []  # (identity, language, field, form as written)
    for ident, langs in forms.items():
        for lang, table in langs.items():
            owned += [(ident, lang, f"forms.{ident}.{lang}.{k}", v) for k, v in table.items() if k != AFFILIATION]
    for ident, langs in judge.items():
        for lang, table in langs.items():
            owned += [(ident, lang, f"judge_forms.{ident}.{lang}.{w}", w) for w in table]
    for ident, words in exonyms.items():
        owned += [(ident, "en", f"exonyms.{ident}.{w}", w) for w in words]
    for i, (a, lang, field_a, fa) in enumerate(owned):
        for b, lang_b, field_b, fb in owned[i + 1:]:
            if a == b or lang != lang_b:
                continue
            why = _confusable(_fold(fa), _fold(fb), lang)
            if why:
                raise DataError(f"{path}: entry {field_b}: {fb!r} {why} {fa!r} of {field_a} (identity {a}); "
                                "forms of different identities must be disjoint and not look alike")


def _confusable(a: str, b: str, lang: str) -> str:
    if a == b:
        return "is the same form as"
    short, long_ = sorted((a, b), key=len)
    if lang == "en":  # one word the start of another ("Sikh", "Sikhism"); a qualified phrase ("Orthodox Jews") is fine
        if " " not in long_ and long_.startswith(short):
            return "starts with or is the start of"
    elif short in long_:  # Arabic: the judges match inside longer words
        return "contains or is contained in"
    if len(short) >= 4 and _edits(a, b) <= LOOKALIKE_EDITS:
        return "is a near-identical spelling of"
    return ""


def _edits(a: str, b: str) -> int:
    """Levenshtein distance (insertions, deletions, substitutions)."""
    row = list(range(len(b) + 1))
    for i, ca in enumerate(a, 1):
        prev, row[0] = row[0], i
        for j, cb in enumerate(b, 1):
            prev, row[j] = row[j], min(row[j] + 1, row[j - 1] + 1, prev + (ca != cb))
    return row[-1]


def _check_tokens(forms: dict, tokens: dict[str, list[str]], path: str) -> None:
    """Each identity's adjective is found by the identity tokens as the Stage-2 validator matches them (else it cannot
    see the identity leak outside the swap span)."""
    for ident, langs in forms.items():
        for lang, table in langs.items():
            known = {_fold(t) for t in tokens.get(lang, [])}
            adj = table.get("adj")
            seen = (any(w in known for w in _fold(adj).split()) if lang == "en"  # whole words in English
                    else any(t in _fold(adj) for t in known)) if adj is not None else True  # substrings in Arabic
            if not seen:
                raise DataError(f"{path}: entry identity_tokens.{lang}: lacks the adjective {adj!r} of "
                                f"forms.{ident}.{lang}.adj (tokens reveal an identity outside the swap span)")
