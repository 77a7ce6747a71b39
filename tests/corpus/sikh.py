"""A Sikh identity added to a copy of the data folder, as a user would add one (data/README.md, "Adding an identity"):
forms per language, identity tokens, a given name per entry and an attire descriptor per entry."""

from __future__ import annotations

from pathlib import Path

import yaml

FORMS = {"en": {"adj": "Sikh", "noun_pl": "Sikhs", "affiliation": "Sikh"},
         "ar": {"adj": "سيخي", "adj_f": "سيخية", "adj_def": "السيخي", "pl": "سيخ", "dual": "سيخيان",
                "adj_f_def": "السيخية", "pl_nom": "سيخ", "pl_f": "سيخيات", "affiliation": "سيخي"}}
TOKENS = {"en": ["sikh", "sikhs", "sikhism", "gurdwara", "dastar", "khalsa"], "ar": ["سيخ"]}
NAMES = {"f01": ("Harpreet", "هاربريت"), "f02": ("Simran", "سيمران"), "f03": ("Jaspreet", "جاسبريت"),
         "f04": ("Manpreet", "مانبريت"), "f05": ("Navneet", "نافنيت"), "m01": ("Balwinder", "بالويندر"),
         "m02": ("Gurdeep", "غورديب"), "m03": ("Harbhajan", "هاربهاجان"), "m04": ("Kuldeep", "كولديب"),
         "m05": ("Sukhdev", "سوخديف")}
ATTIRE = {"woman": "a woman wearing a kara bangle", "man": "a man wearing a dastar turban",
          "young-woman": "a young woman wearing a kara bangle", "older-man": "an older man wearing a dastar turban"}


def _edit(path: Path, change) -> None:
    doc = yaml.safe_load(path.read_text(encoding="utf-8"))
    change(doc)
    path.write_text(yaml.safe_dump(doc, allow_unicode=True, sort_keys=False), encoding="utf-8")


def add_sikh(data: Path) -> None:
    """Add `sikh` to every data file that holds one entry per identity; `Sikh` leaves judge_forms.other."""
    def identities(doc: dict) -> None:
        doc["forms"]["sikh"] = FORMS
        for lang, tokens in TOKENS.items():
            doc["identity_tokens"][lang] += tokens
        for word in ("Sikh", "Sikhs"):
            del doc["judge_forms"]["other"]["en"][word]
        doc["judge_forms"]["sikh"] = {"en": {"Sikhism": "religion"}}

    def names(entries: list) -> None:
        for e in entries:
            e["en"]["sikh"], e["ar"]["sikh"] = NAMES[e["key"]]

    def attire(entries: list) -> None:
        for e in entries:
            e["en"]["sikh"] = ATTIRE[e["key"]]

    _edit(data / "identities.yaml", identities)
    _edit(data / "lexicons" / "given_name.yaml", names)
    _edit(data / "lexicons" / "attire.yaml", attire)
