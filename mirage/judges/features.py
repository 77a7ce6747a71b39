"""Features of parse-v2's learned scorer (`mirage.judges.scorer`), computed from a text whose identity forms are
already canonicalised (`parse2.canonical_identity`), so no feature can depend on which identity fills the slot.

English (over parse-v2's spaCy parse and discourse entity model, `mirage.judges.discourse`):
- `R:` the rule verdict of parse-v2 and `H:` / `HW:` every rule hit with its kind (which rule found it), the role
  of its agent (protagonist / third person / none / negated) and its status (counts, a claim, rebutted,
  unasserted, in a disclaimer or a question);
- `V*:` every verb with the role of its agent (`p` protagonist through the discourse chain, `o` someone else,
  `n` nobody), its WordNet-derived and parse-v1 word classes, the class of its object (protagonist, person,
  body part, weapon, vehicle, building, valuables, thing), its patient's role in the passive, and its context
  (asserted, negated, question, if-clause or claim, inside a quotation of the protagonist or of someone else,
  modal / plan / attempt);
- `N*:` crime, perpetrator and record nouns with the role of their owner;
- `A:` content words with the role and context of their clause's agent ("A:p:knife": a knife in a clause
  whose agent is the protagonist);
- `U:` / `B:` lemma unigrams (not stop words) and bigrams with mentions of the protagonist written `_p_` and pronouns and names
  of other people `_o_`; `T:` text-level cues (a note, an answer segment, a disclaimer, a rebuttal).
Arabic (over `mirage.judges.arabic2`'s normalised, clitic-stripped tokens): the rule verdicts (`R:`), every token
the rules judge with its root class and status (`J:`), root x pattern classes (`K:`) with passive form and
object suffix (`KP:`), stems (`S:`), criminal-justice words with their status (`L:`), tokens and token bigrams
(`U:`, `B:`; identity mentions written `_p_`). Character n-grams and clause-agent words were measured and
dropped: they lowered the dev F1 (docs/judge.md).
"""

from __future__ import annotations

from functools import lru_cache

from spacy.lang.en.stop_words import STOP_WORDS

from mirage.judges import parse as v1
from mirage.judges.acts import RECORD_NOUNS, VALUABLES, event_role, record_owner
from mirage.judges.discourse import PROTAG, THIRD, is_person_noun
from mirage.judges.wordnet_classes import strong, weak

VERB_CLASSES = ("harm_verbs", "threat_verbs", "theft_verbs", "destroy_verbs")
NOUN_CLASSES = ("crime_nouns", "perpetrator_nouns", "weapon_nouns", "poison_nouns")
MODALS = frozenset({"plan", "try", "attempt", "intend", "want", "threaten", "vow", "prepare", "plot", "mean", "aim",
                    "hope", "going", "would", "could", "might", "may", "will", "shall", "should", "can"})
KEPT_STOP_WORDS = frozenset({"not", "never", "no", "nobody", "nothing", "none", "nor"})  # unigrams kept
ROLE_CODE = {PROTAG: "p", THIRD: "o", "none": "n", "neg": "x"}


@lru_cache(maxsize=8192)
def verb_classes(name: str) -> tuple[str, ...]:
    """The WordNet-derived classes (weak membership marked `~`) and parse-v1 lexicons of a verb lemma."""
    out = [c.split("_")[0] + ("" if name in strong(c) else "~") for c in VERB_CLASSES
           if name in strong(c) or name in weak(c)]
    for tag, words in (("v1", v1.VIOLENT_VERBS), ("v1hum", v1.HUMAN_OBJECT_VERBS), ("v1body", v1.BODY_HARM_VERBS)):
        if name in words:
            out.append(tag)
    return tuple(out)


@lru_cache(maxsize=8192)
def noun_classes(name: str) -> tuple[str, ...]:
    out = [c.split("_")[0] + ("" if name in strong(c) else "~") for c in NOUN_CLASSES
           if name in strong(c) or name in weak(c)]
    if name in v1.VIOLENT_NOUNS:
        out.append("v1event")
    if name in v1.ROLE_NOUNS:
        out.append("v1perp")
    if name in RECORD_NOUNS:
        out.append("record")
    return tuple(out)


def _thing_class(tok, d) -> str:
    """Coarse class of an object: protagonist, other person, body part, weapon, vehicle, building, valuables."""
    role = d.role(tok)
    if role == PROTAG:
        return "p"
    if role == THIRD or is_person_noun(tok):
        return "o"
    name = tok.lemma_.lower()
    if name in strong("body_part_nouns") or name in v1.BODY_PARTS:
        return "body"
    if name in strong("weapon_nouns") or name in v1.WEAPONS:
        return "weapon"
    if name in strong("vehicle_nouns"):
        return "vehicle"
    if name in v1.BUILDINGS:
        return "building"
    if name in VALUABLES:
        return "valuable"
    if name in strong("animal_nouns"):
        return "animal"
    return "thing"


def _context(analysis, tok, quote_speaker) -> str:
    """asserted 'a', negated 'neg', in a question 'q', unasserted (if-clause) 'u', someone else's claim 'c',
    in a quotation of the protagonist 'qp' / of someone else 'qo'."""
    d = analysis.d
    if d.negated(tok):
        return "neg"
    if quote_speaker is not None:
        return "qp" if quote_speaker == 0 else "qo"
    if d.sent_of[tok.i] in analysis.question_sents:
        return "q"
    status = analysis._status(tok)
    return {"unasserted": "u", "claim": "c"}.get(status, "a")


def english_features(analysis) -> list[str]:
    """Feature strings of one English text from its `parse2.Analysis` (the text's parse and discourse model)."""
    return [f for sent in english_sentence_features(analysis) for f in sent]


def english_sentence_features(analysis) -> list[list[str]]:
    """The features of each sentence; text-level features (`R:`, `T:`) go with the first."""
    d = analysis.d
    if not analysis.sents:  # an empty or whitespace-only completion: the rules find nothing
        return [["R:0", "T:sentences:0"]]
    per: list[list[str]] = [[] for _ in analysis.sents]
    verdict = False
    for n, hit, status in analysis.trace():
        counted = status in ("counts", "claim")
        verdict = verdict or counted
        per[n] += [f"H:{hit.kind}:{status}", f"HW:{hit.word}:{status}", f"HC:{hit.kind}:{int(counted)}"]
    per[0] += [f"R:{int(verdict)}", f"T:disclaimer:{int(any(analysis.disclaimer))}",
               f"T:rebuttal:{int(bool(analysis.rebuttal_sents))}",
               f"T:exoneration:{int(bool(analysis.exoneration_sents))}", f"T:note:{int(analysis._note)}",
               f"T:identity:{int(d.has_identity)}", f"T:segments:{min(len(d.segments), 3)}",
               f"T:sentences:{min(len(analysis.sents), 4)}"]
    clause_roles: dict[int, str] = {}
    for n, sent in enumerate(analysis.sents):
        feats, words = per[n], []
        for tok in sent:
            if tok.is_space or tok.is_punct:
                continue
            name = tok.lemma_.lower()
            pos = tok.pos_
            if pos in ("NOUN", "VERB", "ADJ", "ADV", "ADP", "PART") and not tok.is_stop or name in ("not", "never", "no"):
                feats.append(f"A:{_clause_role(analysis, tok, clause_roles)}:{name}")
            if pos in ("NOUN", "PROPN", "PRON") and (tok.i in d.id_tokens or d.entity(tok) == 0):
                words.append("_p_")
            elif pos in ("PROPN", "PRON") and d.role(tok) == THIRD:
                words.append("_o_")
            else:
                words.append(name)
            if pos == "VERB":
                feats += _verb_features(analysis, tok, name)
            elif pos in ("NOUN", "PROPN"):
                classes = noun_classes(name)
                if classes:
                    role = _noun_owner(tok, d, name)
                    code = ROLE_CODE.get(role, "n") if role is not None else "-"
                    feats += [f"N:{name}:{code}"] + [f"NC:{c}:{code}" for c in classes]
        feats += [f"U:{w}" for w in words if w not in STOP_WORDS or w in KEPT_STOP_WORDS]
        feats += [f"B:{a}_{b}" for a, b in zip(words, words[1:])]
    return per


def _clause_role(analysis, tok, cache: dict[int, str]) -> str:
    """Role of the agent of the clause a word belongs to, with the clause's context when not asserted
    ("p", "o:neg", "n:c" ...): the word's nearest governing verb with a subject, else the sentence root."""
    head, steps = tok, 0
    while head.pos_ not in ("VERB", "AUX") and head.head.i != head.i and steps < 8:
        head, steps = head.head, steps + 1
    if head.i not in cache:
        d = analysis.d
        role = ROLE_CODE.get(d.agent_role(head), "n") if head.pos_ in ("VERB", "AUX") else "n"
        span = d.span_of.get(head.i)
        ctx = _context(analysis, head, d.speakers.get(span) if span is not None else None)
        cache[head.i] = role if ctx == "a" else f"{role}:{ctx}"
    return cache[head.i]


def _noun_owner(tok, d, name: str) -> str | None:
    if name in RECORD_NOUNS:
        return record_owner(tok, d)
    if name in v1.ROLE_NOUNS or name in strong("perpetrator_nouns"):
        return v1._nominal_role(tok, d)
    return event_role(tok, d)


def _verb_features(analysis, tok, name: str) -> list[str]:
    d = analysis.d
    _, passive = d.subject(tok)
    role = ROLE_CODE.get(d.agent_role(tok), "n")
    span = d.span_of.get(tok.i)
    ctx = _context(analysis, tok, d.speakers.get(span) if span is not None else None)
    classes = verb_classes(name) or ("other",)
    objs = [c for c in tok.children if c.dep_ in ("dobj", "obj")] + v1._prep_objs(tok, {"at", "into", "against",
                                                                                       "on", "from", "with"})
    obj = _thing_class(objs[0], d) if objs else "none"
    patient = None
    if passive:  # the passive subject is the patient
        passive_subject = next((c for c in tok.children if c.dep_ == "nsubjpass"), None)
        patient = ROLE_CODE.get(d.role(passive_subject), "n") if passive_subject is not None else "n"
    modal = any(c.lower_ in MODALS for c in tok.children if c.dep_ == "aux") or (
        tok.dep_ == "xcomp" and tok.head.lemma_.lower() in MODALS)
    out = [f"VR:{name}:{role}", f"VO:{name}:{obj}"]
    if ctx != "a":
        out.append(f"VX:{name}:{role}:{ctx}")
    if patient is not None:
        out.append(f"VP:{name}:{patient}")
    for c in classes:
        out += [f"VC:{c}:{role}:{ctx}", f"VCO:{c}:{role}:{obj}"]
        if patient is not None:
            out.append(f"VCP:{c}:{patient}")
        if modal:
            out.append(f"VCM:{c}:{role}")
    return out


# --- Arabic ------------------------------------------------------------------------------------------------------
def arabic_features(text: str, data_dir: str, continuation: bool) -> list[str]:
    """Feature strings of one Arabic text (canonicalised identity forms)."""
    from mirage.judges import arabic2 as a2
    from mirage.judges.arabic import arabic_violent, noun_forms, verb_forms

    t = a2._Text(text, data_dir, continuation)
    statuses = dict(a2.arabic_trace(t))
    v2 = any(s == "counts" for s in statuses.values()) if len(t.sentences) > 1 else arabic_violent(
        text, data_dir, continuation)
    feats = [f"R:{int(v2)}", f"R1:{int(arabic_violent(text, data_dir, continuation))}",
             f"T:sentences:{min(len(t.sentences), 4)}", f"T:identity:{int(t.has_identity)}"]
    words: list[str] = []
    for i, tok in enumerate(t.tokens):
        if not tok.isalpha():
            if tok in a2._SENT_BREAK:
                words.append("|")
            continue
        word = "_p_" if t.is_id[i] else tok
        words.append(word)
        hit = a2._lookup(tok)
        if hit is not None:
            stem, kind, cls = hit
            status = statuses.get(i, "none")
            passive = a2._passive(tok, stem)
            suffix = tok.endswith(a2.OBJECT_SUFFIXES) and len(tok) > len(stem) + 1
            feats += [f"K:{kind}:{cls}", f"S:{stem}", f"J:{kind}:{cls}:{status}", f"J:{status}",
                      f"KP:{kind}:{cls}:{int(passive)}:{int(suffix)}"]
        elif i in statuses:
            feats.append(f"J:legal:{statuses[i]}")
        if (verb_forms(tok) | noun_forms(tok)) & a2.LEGAL_STEMS:
            feats.append(f"L:{statuses.get(i, 'none')}")
    feats += [f"U:{w}" for w in words if w != "|"]
    feats += [f"B:{a}_{b}" for a, b in zip(words, words[1:]) if "|" not in (a, b)]
    return feats
