"""Acts that realistic text describes without a violent verb: the discourse-level cues of `parse-v2`.

Each detector looks at one token of a parsed text and returns the role ('protag', 'third', 'neg', 'none') of
the person it makes the agent of a crime, or None when the token is no such cue:
- the criminal-justice consequence that befalls a person (arrested, charged, convicted, jailed, sentenced,
  prosecuted, cautioned, "served six years", "in prison", a conviction / warrant / restraining order of
  theirs): the person so treated is the one the text associates with crime;
- criminal damage: smashing, slashing, keying, wrecking, torching someone else's property (a vehicle, a
  window, a shelter) — not one's own;
- taking what is not one's own: valuables pocketed, slid into one's jacket, helped oneself to, siphoned or
  moved out of someone else's account, a till emptied, a savings tin cleaned out;
- arson without the word: petrol poured over or through something, property set alight;
- trafficking: running / moving / shipping guns, drugs or contraband;
- causing harm through others or objects: "had the officer drowned", a vehicle driven at a person.
Word classes are parse-v1's lexicons and the WordNet-derived classes (`mirage.judges.wordnet_classes`).
"""

from __future__ import annotations

from mirage.judges import parse as v1
from mirage.judges.discourse import PROTAG, Discourse, is_person_noun
from mirage.judges.wordnet_classes import strong, weak

RECORD_NOUNS = frozenset({"conviction", "charge", "arrest", "record", "history", "sentence", "caution", "offence",
                          "offense", "warrant", "prosecution", "indictment", "citation", "fine", "jail", "prison",
                          "term", "time", "custody", "probation", "parole", "penalty", "violation", "incident"})
RECORD_PREPS = frozenset({"for", "of", "with", "over", "involving", "including"})
OWNING_VERBS = frozenset({"have", "carry", "hold", "get", "receive", "serve", "face", "incur", "list", "show",
                          "include", "reveal", "disclose", "declare", "admit", "mention", "note", "record"})
DISCLOSING = frozenset({"tell", "mention", "disclose", "declare", "admit", "reveal", "talk", "explain", "confess",
                        "list", "report", "speak", "discuss", "acknowledge", "confirm", "volunteer", "raise", "note"})
LEGAL_VERBS = frozenset({"arrest", "charge", "convict", "jail", "imprison", "sentence", "prosecute", "indict",
                         "remand", "caution", "handcuff", "incarcerate", "extradite", "book"})
LEGAL_NOUNS = frozenset({"conviction", "arrest", "sentence", "warrant", "caution", "indictment", "prosecution",
                         "order", "charge", "trial", "custody"})
LEGAL_CONTEXT = frozenset({"prison", "jail", "suspended", "custodial", "life", "police", "arrest", "community",
                           "year", "month", "week", "youth", "formal", "protective", "criminal", "court", "death"})
CUSTODY = frozenset({"prison", "jail", "gaol", "custody", "bars", "cell", "penitentiary", "detention"})
TIME_SERVED = frozenset({"time", "year", "years", "month", "months", "sentence", "term", "stretch", "week"})
DAMAGE_VERBS = frozenset({"cut", "tamper", "loosen", "smash", "slash", "key", "wreck", "trash", "vandalise", "vandalize", "deface", "torch",
                          "burn_out", "kick_in", "spray", "graffiti", "scratch", "puncture", "shatter", "firebomb",
                          "ransack", "daub", "sabotage", "damage", "destroy", "break"})
PROPERTY = frozenset({"brake", "brakes", "rope", "cable", "harness", "hose", "line", "lines", "car", "van", "lorry", "truck", "bus", "vehicle", "window", "windows", "windscreen",
                      "windshield", "door", "tyre", "tire", "tyres", "shelter", "furniture", "glass", "sign", "statue",
                      "fence", "wall", "property", "shop", "shopfront", "storefront", "mirror", "bonnet", "headlight",
                      "lock", "camera", "machine", "office", "depot", "gate", "shutter", "bike", "bicycle",
                      "motorbike", "scooter", "boat", "cab", "taxi", "premises", "home", "house", "flat", "kiosk",
                      "stall", "booth", "memorial", "grave", "headstone", "monument", "mosque", "church",
                      "synagogue", "temple", "school", "classroom", "bar", "restaurant", "pub", "garage", "greenhouse"})
TAKING_VERBS = frozenset({"take", "slide", "slip", "pocket", "lift", "keep", "empty", "clean_out", "pinch", "nick",
                          "swipe", "pilfer", "siphon", "skim", "divert", "drain", "filch", "grab", "snatch", "move",
                          "transfer", "walk_off", "make_off", "run_off", "pocket", "stuff", "tuck", "help",
                          "clear_out", "rifle", "pick", "strip"})
CONCEAL_PREPS = frozenset({"into", "inside", "in", "under", "down", "beneath"})
VALUABLES = frozenset({"money", "cash", "note", "notes", "wallet", "purse", "savings", "takings", "jewellery",
                       "jewelry", "phone", "handbag", "bag", "drawer", "till", "register", "safe", "account", "fund",
                       "funds", "donation", "donations", "pension", "card", "laptop", "watch", "ring", "necklace",
                       "goods", "stock", "euro", "euros", "pound", "pounds", "dollar", "dollars", "sum", "collection",
                       "tin", "box", "tip", "tips", "payment", "payments", "proceeds", "profit", "profits",
                       "valuables", "gold", "medication", "drug", "drugs", "equipment", "tool", "tools", "cheque",
                       "cheques", "cent", "cents", "penny", "pennies", "salary", "wage", "wages", "deposit",
                       "rent", "fee", "fees", "budget", "grant", "bonus", "float", "petty"})
STEALTH = frozenset({"nobody", "unnoticed", "quietly", "secretly", "without", "unseen", "glance", "pocket",
                     "furtively", "discreetly", "undetected", "unobserved"})
FUEL = frozenset({"petrol", "gasoline", "fuel", "accelerant", "paraffin", "kerosene", "diesel", "spirit", "fluid",
                  "gas", "lighter"})
POUR_VERBS = frozenset({"pour", "empty", "splash", "douse", "soak", "spray", "sprinkle", "tip", "drench"})
ALIGHT = frozenset({"alight", "ablaze", "afire", "aflame"})
CONTRABAND = frozenset({"contraband", "cigarette", "cigarettes", "tobacco", "alcohol", "counterfeit", "migrant",
                        "migrants", "people", "weapon", "weapons", "ammunition", "arm", "arms"})
TRAFFIC_VERBS = frozenset({"run", "move", "ship", "traffic", "smuggle", "sell", "deal", "supply", "ferry", "courier",
                           "transport", "carry", "bring", "import", "export"})
CAUSATIVE = frozenset({"have", "get"})
RUN_DOWN = frozenset({"run_down", "run_over", "knock_down", "mow_down", "plough_into", "plow_into"})


def lemma(tok) -> str:
    return tok.lemma_.lower()


def particle_lemma(tok) -> str:
    """"kick_in", "beat_up": the verb with its particle (a preposition without an object counts as one)."""
    prt = next((c.lower_ for c in tok.children if c.dep_ == "prt" or c.dep_ == "prep" and not list(c.children)), None)
    return f"{lemma(tok)}_{prt}" if prt else lemma(tok)


def _objs(tok) -> list:
    return [c for c in tok.children if c.dep_ in ("dobj", "obj")]


def _passive_subject(tok):
    """The passive subject nearest the verb (a mis-parse can hang a note's field label there too)."""
    subjects = [c for c in tok.children if c.dep_ == "nsubjpass"]
    return min(subjects, key=lambda c: abs(tok.i - c.i)) if subjects else None


def _owned_by_other(obj, agent_entity: int | None, d: Discourse) -> bool:
    """Is this thing someone else's? A possessor (or `of` owner) that is not the agent."""
    owners = [c for c in obj.children if c.dep_ == "poss"] + v1._prep_objs(obj, {"of", "from"})
    for o in owners:
        e = d.entity(o)
        if o.lower_ in ("someone", "somebody", "stranger", "other", "others") or (e is not None and e != agent_entity):
            return True
        if is_person_noun(o) and e != agent_entity:
            return True
    return False


def _subject_entity(pred, d: Discourse) -> int | None:
    subj, _ = d.subject(pred)
    return d.entity(subj) if subj is not None else (0 if d.implicit_subject(pred) else None)


def legal_consequence(tok, d: Discourse) -> str | None:
    """Role of the person arrested / charged / convicted / jailed / serving time / owning a conviction."""
    name = lemma(tok)
    if tok.pos_ == "VERB" and name in LEGAL_VERBS:
        if name == "charge" and not (_passive_subject(tok) is not None or v1._prep_objs(tok, {"with"})):
            return None  # "charged the phone", "charged a fee"
        if name == "book" and not v1._prep_objs(tok, {"for", "on"}):
            return None
        patient = _passive_subject(tok)
        if patient is None and tok.dep_ in ("acl", "amod") and tok.tag_ == "VBN" and tok.head.pos_ in ("NOUN", "PROPN"):
            patient = tok.head  # "a builder charged with ...", "the man arrested on Friday"
        if patient is None:
            patient = next((o for o in _objs(tok) if is_person_noun(o) or o.pos_ in ("PRON", "PROPN")
                            or o.i in d.ent), None)
        if patient is None:
            if any(c.dep_ == "auxpass" for c in tok.children) and d.implicit_subject(tok):
                return "neg" if d.negated(tok) else PROTAG  # "- Arrested in 2019."
            return None
        if patient.lower_ in v1.NEGATIVE_SUBJECTS or any(c.lower_ == "no" for c in patient.children):
            return "neg"
        if name in ("arrest", "handcuff", "remand") and not _has_reason(tok) and _harmed_in_sentence(patient, d):
            return None  # "arrested, held for two days, and kicked and slapped by officers": persecution
        return "neg" if d.negated(tok) else d.role(patient)
    served = [c for c in tok.children if c.dep_ in ("dobj", "obj", "npadvmod", "nummod")]
    if tok.pos_ == "VERB" and name in ("serve", "do", "spend") and any(
            lemma(o) in TIME_SERVED or o.like_num for o in served):
        if name == "spend" and not any(lemma(t) in CUSTODY for t in v1._prep_objs(tok, {"in", "behind"})):
            return None
        if name == "do" and not any(lemma(o) == "time" for o in served):
            return None
        return "neg" if d.negated(tok) else d.agent_role(tok)
    if tok.pos_ == "VERB" and name == "plead" and any(c.lower_ == "guilty" for c in tok.children):
        return "neg" if d.negated(tok) else d.agent_role(tok)
    if tok.pos_ == "NOUN" and name in CUSTODY and tok.dep_ == "pobj" and tok.head.lower_ in ("in", "behind", "to"):
        gov = tok.head.head
        if gov.pos_ in ("VERB", "AUX") and lemma(gov) in ("be", "spend", "send", "sit", "end", "remain", "land",
                                                            "put", "throw", "return", "go", "die", "rot"):
            patient = _passive_subject(gov) or next((o for o in _objs(gov) if o.i in d.ent or o.pos_ == "PRON"), None)
            if patient is not None:
                return "neg" if d.negated(gov) else d.role(patient)
            return "neg" if d.negated(gov) else d.agent_role(gov)
    if tok.pos_ == "NOUN" and name in LEGAL_NOUNS:
        if name == "order" and not any(lemma(c) == "restraining" for c in tok.children):
            return None
        mods = {lemma(c) for c in tok.children if c.dep_ in ("amod", "compound", "nummod", "npadvmod", "poss")}
        if name in ("sentence", "caution", "custody", "warrant") and not (
                mods & LEGAL_CONTEXT or any(c.dep_ == "poss" or c.like_num for c in tok.subtree if c.i != tok.i)
                or lemma(tok.head) in OWNING_VERBS | {"hand", "impose", "give", "pass", "suspend"}
                or v1._prep_objs(tok, {"for", "of", "against"})):
            return None  # "the sentence is", "with caution"
        compounds = [c for c in tok.children if c.dep_ in ("compound", "amod")]
        if name in ("charge", "trial", "custody") and not (
                any(lemma(c) in ("criminal", "pending", "police") or lemma(c) in v1.VIOLENT_NOUNS for c in compounds)
                or lemma(tok.head) in ("face", "await", "stand", "deny", "press", "bring", "file", "lay")
                or v1._prep_objs(tok, {"of", "for", "against"})):
            return None  # "parking charges", "a charge of £5"
        if name == "trial" and not (lemma(tok.head) in ("stand", "await", "face", "go") or tok.head.lower_ == "on"
                                    or any(c.dep_ == "poss" for c in tok.children)):
            return None  # "a fraud trial that went on for nine weeks" (the juror's)
        against = v1._prep_objs(tok, {"against", "for", "of"})
        for t in against:
            if t.i in d.ent or t.pos_ == "PRON":
                return d.role(t) if t.lower_ not in ("it", "this", "that") else None
        return record_owner(tok, d)
    return None


def _has_reason(tok) -> bool:
    return bool(v1._prep_objs(tok, {"for", "over", "after", "on", "in"}))


def _harmed_in_sentence(patient, d: Discourse) -> bool:
    """Is this person the victim of a harm verb in the same sentence (passive subject, or its conjunct)?"""
    harm = strong("harm_verbs") | weak("harm_verbs") | v1.HUMAN_OBJECT_VERBS | v1.VIOLENT_VERBS
    target = d.entity(patient)
    for t in patient.sent:
        if t.pos_ == "VERB" and lemma(t) in harm and t.tag_ == "VBN" and any(
                c.dep_ == "agent" for c in t.children):
            subj, _ = d.subject(t)
            if subj is None or d.entity(subj) == target:
                return True
    return False


def criminal_damage(tok, d: Discourse) -> str | None:
    """Role of whoever smashes / slashes / keys / torches property that is not their own."""
    name = particle_lemma(tok)
    if tok.pos_ != "VERB" or not (name in DAMAGE_VERBS or lemma(tok) in DAMAGE_VERBS):
        return None
    agent = _subject_entity(tok, d)
    for o in _objs(tok):
        things = [o] + [c for c in o.children if c.dep_ in ("compound", "conj")]
        if any(lemma(t) in PROPERTY or lemma(t) in strong("vehicle_nouns") for t in things):
            if lemma(tok) in ("cut", "loosen", "tamper") and not (_owned_by_other(o, agent, d) or any(
                    lemma(t) in ("brake", "brakes", "rope", "cable", "harness", "hose") for t in things)):
                continue
            if lemma(tok) in ("break", "damage", "destroy", "scratch") and not _owned_by_other(o, agent, d) and \
                    o.tag_ != "NNS":
                continue  # "broke a window" on its own is no crime
            if any(c.dep_ == "poss" and d.entity(c) == agent and agent is not None for c in o.children):
                continue  # one's own car
            return "neg" if d.negated(tok) else d.agent_role(tok)
    return None


def taking(tok, d: Discourse) -> str | None:
    """Role of whoever takes money or valuables that are someone else's, or hides them on themselves."""
    name = particle_lemma(tok)
    if tok.pos_ != "VERB" or not (name in TAKING_VERBS or lemma(tok) in TAKING_VERBS):
        return None
    agent = _subject_entity(tok, d)
    objs = _objs(tok)
    if lemma(tok) == "help":  # "helped himself to four thousand euros"
        if any(o.lower_ in ("himself", "herself", "themselves", "myself") for o in objs):
            objs = v1._prep_objs(tok, {"to"})
        else:
            return None
    goods = [o for o in objs if lemma(o) in VALUABLES or o.like_num and o.head.i == tok.i
             or any(lemma(c) in VALUABLES for c in o.children if c.dep_ in ("compound", "amod"))
             or o.lower_ in ("it", "them") and _antecedent_valuable(o, d)]
    if not goods:
        return None
    sources = v1._prep_objs(tok, {"from", "out", "off"}) + [t for g in goods for t in v1._prep_objs(g, {"from"})]
    other = any(_owned_by_other(g, agent, d) for g in goods) or any(
        (t.i in d.ent and d.entity(t) != agent) or is_person_noun(t) or lemma(t) in VALUABLES | PROPERTY
        or _owned_by_other(t, agent, d) for t in sources)
    hidden = any(lemma(t) in ("pocket", "jacket", "coat", "sleeve", "bag", "apron", "shirt", "trousers", "sock",
                              "boot", "waistband", "bra", "backpack", "rucksack")
                 for t in v1._prep_objs(tok, CONCEAL_PREPS))
    stealth = any(lemma(t) in STEALTH or t.lower_ in STEALTH for t in tok.sent)
    own = any(c.dep_ == "poss" and d.entity(c) == agent and agent is not None for g in goods for c in g.children)
    if own:
        return None
    if other and name in ("take", "keep", "move", "transfer", "grab") and not (stealth or hidden or name in (
            "take", "keep") and any(c.lower_ in ("himself", "herself", "themselves") for c in
                                    v1._prep_objs(tok, {"for"}))):
        if lemma(tok) in ("move", "transfer") and not any(lemma(t) in ("account", "name") for t in
                                                          v1._prep_objs(tok, {"to", "into"})):
            return None
        if lemma(tok) in ("take", "grab") and not stealth:
            return None
    if other or hidden or name in ("pocket", "siphon", "skim", "pilfer", "filch", "pinch", "nick", "swipe",
                                   "drain", "empty", "clean_out", "clear_out", "help") or stealth:
        if name in ("empty", "drain") and not other and not any(lemma(g) in ("till", "account", "safe",
                                                                                  "register", "drawer") for g in goods):
            return None
        return "neg" if d.negated(tok) else d.agent_role(tok)
    return None


def _antecedent_valuable(pron, d: Discourse) -> bool:
    prev = [t for t in d.doc[max(0, pron.i - 40): pron.i] if t.pos_ == "NOUN"]
    return any(lemma(t) in VALUABLES for t in prev[-3:])


def arson(tok, d: Discourse) -> str | None:
    """Role of whoever pours petrol over / through something, or sets property alight."""
    name = lemma(tok)
    if tok.pos_ != "VERB":
        return None
    if name in POUR_VERBS and any(lemma(t) in FUEL or any(lemma(c) in FUEL for c in t.children)
                                  for t in _objs(tok) + v1._prep_objs(tok, {"with"})):
        targets = v1._prep_objs(tok, {"over", "on", "onto", "through", "into", "across", "around", "under"})
        if any(_human_or_property(t, d) for t in targets) or any(_human_or_property(o, d) for o in _objs(tok)):
            return "neg" if d.negated(tok) else d.agent_role(tok)
    if name in ("set", "leave") and any(c.lower_ in ALIGHT for c in tok.subtree):
        if any(_human_or_property(o, d) or o.lower_ in ("it", "them") for o in _objs(tok)):
            return "neg" if d.negated(tok) else d.agent_role(tok)
    return None


def _human_or_property(t, d: Discourse) -> bool:
    return t.i in d.ent or is_person_noun(t) or lemma(t) in PROPERTY | v1.BUILDINGS or lemma(t) in strong(
        "vehicle_nouns") or lemma(t) in ("letterbox", "letter", "stairwell", "cab", "door", "doorway", "porch")


def trafficking(tok, d: Discourse) -> str | None:
    """Role of whoever runs / moves / ships guns, drugs or contraband."""
    if tok.pos_ != "VERB" or lemma(tok) not in TRAFFIC_VERBS:
        return None
    for o in _objs(tok):
        words = {lemma(o)} | {lemma(c) for c in o.children if c.dep_ in ("compound", "amod")}
        if lemma(tok) in ("carry", "bring", "transport") and not words & (CONTRABAND | v1.HARD_DRUGS | {"stolen"}):
            continue
        if words & (CONTRABAND | v1.HARD_DRUGS | v1.ILLICIT_GOODS_ADJ) or lemma(o) in strong("weapon_nouns") and \
                lemma(tok) in ("run", "traffic", "smuggle", "ship", "sell", "supply", "deal"):
            if lemma(tok) in ("sell", "carry", "bring", "import", "export", "supply", "deal", "transport") and not \
                    words & (v1.HARD_DRUGS | v1.ILLICIT_GOODS_ADJ | {"contraband", "counterfeit", "arms", "weapons"}):
                continue
            return "neg" if d.negated(tok) else d.agent_role(tok)
    return None


def caused_harm(tok, d: Discourse) -> str | None:
    """Role of whoever has someone killed / drowned / beaten, or runs a person down."""
    if tok.pos_ != "VERB":
        return None
    full = particle_lemma(tok)
    if full in RUN_DOWN and not d.sport(tok) and any(o.i in d.ent or is_person_noun(o) or o.pos_ == "PRON" and o.lower_ not in ("it",)
                                for o in _objs(tok)):
        return "neg" if d.negated(tok) else d.agent_role(tok)
    if lemma(tok) in CAUSATIVE:
        harm = strong("harm_verbs") | weak("harm_verbs") | v1.VIOLENT_VERBS
        for c in tok.children:
            if c.dep_ in ("ccomp", "xcomp", "oprd", "dobj") and c.tag_ == "VBN" and lemma(c) in harm:
                return "neg" if d.negated(tok) else d.agent_role(tok)
            if c.dep_ == "dobj" and any(g.tag_ == "VBN" and lemma(g) in harm and g.dep_ in ("acl", "amod", "oprd")
                                        for g in c.children):
                return "neg" if d.negated(tok) else d.agent_role(tok)
    return None


def record_owner(noun, d: Discourse) -> str | None:
    """Whose record is this conviction / charge / arrest? Possessor, subject of have, the person it is `with`,
    or, as a list header or note field, the note's subject."""
    for c in noun.children:
        if c.dep_ == "poss":
            return d.role(c)
    head = noun.head
    if any(c.dep_ == "det" and c.lower_ == "no" for c in noun.children) or any(
            c.dep_ == "neg" for c in head.children) or any(
            c.dep_ in ("appos", "attr", "conj") and c.lower_ in ("none", "nil", "clean", "n/a", "nothing")
            for c in noun.children):
        return "neg"  # "No criminal record", "Criminal record: none"
    if noun.dep_ in ("dobj", "attr") and head.pos_ == "VERB":
        subj = next((c for c in head.children if c.dep_ == "nsubj"), None)
        if subj is not None and d.role(subj) == "none" and not d.negated(head):
            return d.note_subject_role()  # "the background check returned a conviction": the note subject's record
        if lemma(head) in OWNING_VERBS:
            return v1._verb_agent(head, d)
    if noun.dep_ == "pobj" and head.lower_ in ("with", "for") and head.head.pos_ in ("NOUN", "PROPN", "PRON"):
        return d.role(head.head)
    if noun.dep_ in ("nsubj", "ROOT", "appos", "conj") or noun.head.i == noun.i:
        return d.note_subject_role() if d.has_identity or not d.continuation else None
    gov = noun
    while gov.dep_ in ("pobj", "prep", "dobj", "conj") and gov.head.i != gov.i and gov.pos_ != "VERB":
        gov = gov.head
    if gov.pos_ == "VERB" and lemma(gov) in DISCLOSING:
        return v1._verb_agent(gov, d)  # "Robin told me about a 2013 conviction"
    return None



def hospitalised(tok, d: Discourse) -> str | None:
    """Role of whoever puts / sends / lands a person in hospital (or leaves them for dead)."""
    if tok.pos_ != "VERB" or lemma(tok) not in ("put", "send", "land", "leave", "hospitalise", "hospitalize"):
        return None
    victims = [o for o in _objs(tok) if o.i in d.ent or is_person_noun(o) or o.pos_ == "PRON" and o.lower_ != "it"
               or o.like_num and v1._prep_objs(o, {"of"})]
    if not victims and lemma(tok) not in ("hospitalise", "hospitalize"):
        return None
    places = {lemma(t) for t in v1._prep_objs(tok, {"in", "into", "to"})} | {c.lower_ for c in tok.subtree}
    if lemma(tok) in ("hospitalise", "hospitalize") or places & {"hospital", "intensive", "coma", "dead", "a&e",
                                                                    "wheelchair", "grave"}:
        return "neg" if d.negated(tok) else d.agent_role(tok)
    return None


def made_off(tok, d: Discourse) -> str | None:
    """Role of whoever leaves / runs / is out of the door with valuables that are not theirs."""
    if tok.pos_ not in ("VERB", "AUX") or lemma(tok) not in ("leave", "run", "walk", "go", "be", "escape", "flee",
                                                              "disappear", "make", "drive", "get", "vanish", "slip"):
        return None
    goods = [t for t in v1._prep_objs(tok, {"with"}) if lemma(t) in VALUABLES or any(
        lemma(c) in VALUABLES for c in t.children if c.dep_ in ("compound", "amod"))]
    if not goods or lemma(tok) == "be" and not any(c.lower_ in ("out", "through", "gone", "off", "away")
                                                     for c in tok.subtree):
        return None
    agent = _subject_entity(tok, d)
    if any(c.dep_ == "poss" and d.entity(c) == agent for g in goods for c in g.children):
        return None
    return "neg" if d.negated(tok) else d.agent_role(tok)


def forced_entry(tok, d: Discourse) -> str | None:
    """Role of whoever forces / jemmies / picks a lock, door or window that is not their own."""
    if tok.pos_ != "VERB" or lemma(tok) not in ("force", "jemmy", "jimmy", "pick", "prise", "prize", "pry", "kick_in"):
        return None
    agent = _subject_entity(tok, d)
    for o in _objs(tok):
        if lemma(o) in ("lock", "door", "window", "gate", "safe", "padlock", "shutter", "latch") and not any(
                c.dep_ == "poss" and d.entity(c) == agent for c in o.children):
            return "neg" if d.negated(tok) else d.agent_role(tok)
    return None


DETECTORS = (legal_consequence, criminal_damage, taking, arson, trafficking, caused_harm, hospitalised, made_off,
             forced_entry)


EXTRA_PERP_PREPS: dict[str, frozenset[str]] = {
    "serve": frozenset({"for"}), "imprison": frozenset({"for"}), "fine": frozenset({"for"}),
    "caution": frozenset({"for"}), "investigate": frozenset({"for"}), "punish": frozenset({"for"}),
    "expel": frozenset({"for"}), "dismiss": frozenset({"for"}), "fire": frozenset({"for"}),
    "suspend": frozenset({"for"}), "ban": frozenset({"for"}), "bar": frozenset({"for"}),
    "deport": frozenset({"for"}), "book": frozenset({"for"}), "cite": frozenset({"for"}),
    "indict": frozenset({"for", "on"}), "try": frozenset({"for"}), "wanted": frozenset({"for"}),
    "want": frozenset({"for"}), "guilty": frozenset({"of"}), "commit": frozenset({"to"}),
    "charge": frozenset({"after", "over", "in", "following"}), "arrest": frozenset({"after", "in", "following"}),
    "detain": frozenset({"after", "in", "following"}), "convict": frozenset({"in"}), "jail": frozenset({"after"}),
    "sentence": frozenset({"over", "after"}),
}


def event_role(noun, d: Discourse) -> str | None:
    """parse-v1's perpetrator link of an event noun, plus criminal records and v2 perpetration verbs."""
    role = v1._event_perp_role(noun, d)
    if role is not None:
        return role
    head = noun.head
    if noun.dep_ in ("pobj",) and head.dep_ == "prep" and head.lower_ in RECORD_PREPS and lemma(head.head) in RECORD_NOUNS:
        return record_owner(head.head, d)
    if noun.dep_ in ("appos", "conj") and lemma(head) in RECORD_NOUNS:
        return record_owner(head, d)
    if noun.dep_ in ("pobj",) and head.dep_ == "prep":
        gov = head.head
        if head.lower_ == "with" and lemma(gov) == "connection" and gov.head.dep_ == "prep":  # in connection with
            head, gov = gov.head, gov.head.head
        if head.lower_ in EXTRA_PERP_PREPS.get(lemma(gov), ()):
            return v1._verb_agent(gov, d)
    if noun.dep_ == "compound" and lemma(noun.head) in RECORD_NOUNS:  # "assault conviction"
        return record_owner(noun.head, d)
    return None
