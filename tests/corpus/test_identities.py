"""The identity set is data (data/identities.yaml): an added identity is accepted when complete, and a broken one is
refused with one error naming the file, the entry and the field."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
import yaml

from mirage import identities
from mirage.corpus.sources import load_sources
from mirage.io import DataError
from mirage.params import ParamsError, load_params
from tests.corpus.sikh import add_sikh


@pytest.fixture()
def data(tmp_path, root) -> Path:
    """A copy of the shipped data folder with a complete `sikh` identity added."""
    shutil.copytree(root / "data", tmp_path / "data", ignore=shutil.ignore_patterns("judge", "news"))
    add_sikh(tmp_path / "data")
    return tmp_path / "data"


def edit(path: Path, change) -> None:
    doc = yaml.safe_load(path.read_text(encoding="utf-8"))
    change(doc)
    path.write_text(yaml.safe_dump(doc, allow_unicode=True, sort_keys=False), encoding="utf-8")


def refused(data: Path, match: str, sources: bool = False) -> str:
    with pytest.raises(DataError, match=match) as err:
        load_sources(data) if sources else identities.load(data)
    return str(err.value)


def test_the_shipped_set_is_read_in_file_order(root):
    ident = identities.load(root / "data")
    assert ident.names == ("muslim", "christian", "jewish", "hindu", "secular") and ident.default_focal == "muslim"
    assert ident.judge_forms["other"]["en"]["Buddhist"] == "adj"


def test_an_added_identity_is_a_data_change(data):
    ident = identities.load(data)
    assert ident.names[-1] == "sikh" and ident.forms["sikh"]["ar"]["adj_f"] == "سيخية"
    sources = load_sources(data)
    assert sources.cue_forms()["sikh"] >= {"Harpreet", "a man wearing a dastar turban"}


def test_a_form_shared_by_two_identities_is_refused(data):
    edit(data / "identities.yaml", lambda d: d["forms"]["sikh"]["en"].update(adj="Hindu"))
    msg = refused(data, "is the same form as")
    assert "identities.yaml: entry forms.sikh.en.adj: 'Hindu'" in msg and "of forms.hindu.en.adj" in msg


@pytest.mark.parametrize("form, why", [("Hinduist", "starts with or is the start of"),
                                       ("Muslin", "is a near-identical spelling of")])
def test_look_alike_forms_are_refused(data, form, why):
    edit(data / "identities.yaml", lambda d: d["forms"]["sikh"]["en"].update(adj=form))
    assert "entry forms.sikh.en.adj" in refused(data, why)


def test_an_arabic_form_inside_another_identitys_is_refused(data):
    edit(data / "identities.yaml", lambda d: d["forms"]["sikh"]["ar"].update(pl="مسلم"))
    assert "entry forms.sikh.ar.pl" in refused(data, "is the same form as|contains or is contained in")


def test_a_judge_form_of_another_identity_is_refused(data):
    """Adding Sikh as an identity while `other` still lists it (a judge would read it as a religion outside the set)."""
    edit(data / "identities.yaml", lambda d: d["judge_forms"]["other"]["en"].update(Sikhs="noun_pl"))
    msg = refused(data, "starts with or is the start of")
    assert "entry judge_forms.other.en.Sikhs: 'Sikhs'" in msg and "of forms.sikh.en.adj (identity sikh)" in msg


def test_a_missing_agreement_form_is_refused(data):
    edit(data / "identities.yaml", lambda d: d["forms"]["sikh"]["ar"].pop("adj_f"))
    assert "identities.yaml: entry forms.sikh: field 'ar' lacks form key(s) adj_f" in refused(data, "lacks form key")


def test_a_form_a_frame_uses_must_exist_for_every_identity(data):
    """A frame asking for {id:adj_pl} (an agreement form no identity has) names the frame and the field."""
    t1 = data / "templates" / "T1.yaml"
    doc = yaml.safe_load(t1.read_text(encoding="utf-8"))
    frame = doc["frames"][0]
    frame["en"] = frame["en"].replace("{id:noun_pl}", "{id:adj_pl}")
    t1.write_text(yaml.safe_dump(doc, allow_unicode=True, sort_keys=False), encoding="utf-8")
    msg = refused(data, "has no field 'adj_pl'", sources=True)
    assert f"frame '{frame['id']}' (en) uses {{id:adj_pl}}" in msg and "entry forms.muslim.en" in msg


def test_a_missing_name_is_refused(data):
    edit(data / "lexicons" / "given_name.yaml", lambda d: d[2]["ar"].pop("sikh"))
    msg = refused(data, "lacks identity sikh", sources=True)
    assert "given_name.yaml: entry f03: field 'ar' lacks identity sikh" in msg


def test_missing_attire_and_a_name_without_gender_are_refused(data):
    edit(data / "lexicons" / "attire.yaml", lambda d: d[1]["en"].pop("sikh"))
    assert "attire.yaml: entry man: field 'en' lacks identity sikh" in refused(data, "lacks identity", sources=True)
    edit(data / "lexicons" / "attire.yaml", lambda d: d[1]["en"].update(sikh="a man wearing a dastar turban"))
    edit(data / "lexicons" / "given_name.yaml", lambda d: d[0].pop("gender"))
    assert "given_name.yaml: entry f01: field 'gender' must be one of f, m" in refused(data, "gender", sources=True)


def test_an_identity_without_its_token_is_refused(data):
    edit(data / "identities.yaml", lambda d: d["identity_tokens"]["en"].remove("sikh"))
    assert "entry identity_tokens.en: lacks the adjective 'Sikh' of forms.sikh.en.adj" in refused(data, "lacks the adjective")


def test_params_name_identities_of_the_set(tmp_path, monkeypatch, data):
    """Params default to every identity of the data; one outside it is refused naming the file and the field."""
    monkeypatch.chdir(data.parent)
    (data.parent / "params.yaml").write_text("corpus: {focal_identity: sikh}\nprobe: {controls: [muslim, buddhist]}\n",
                                             encoding="utf-8")
    with pytest.raises(ParamsError) as err:
        load_params(data.parent / "params.yaml")
    assert "params.yaml: probe.controls.1: 'buddhist' not an identity of data/identities.yaml" in str(err.value)
    (data.parent / "params.yaml").write_text("corpus: {focal_identity: sikh}\n", encoding="utf-8")
    p = load_params(data.parent / "params.yaml")
    assert p.corpus.identities[-1] == "sikh" and p.corpus.focal_identity == "sikh"
    assert p.probe.focal_identity == "muslim" and p.probe.controls == ["christian", "jewish", "hindu", "secular", "sikh"]


def test_the_corpus_refuses_identities_its_data_folder_lacks(root, data):
    """Params checked against one project's set still meet the data folder the corpus reads (--data-dir)."""
    from mirage.config.corpus import CorpusParams
    from mirage.corpus.build import build_rows

    params = CorpusParams(identities=["muslim", "christian"], focal_identity="muslim").model_copy(
        update={"identities": ["muslim", "sikh"]})
    with pytest.raises(DataError, match=r"corpus.identities / corpus.focal_identity: 'sikh' not identities of the data "
                                        r"folder's identities.yaml \(have muslim, christian, jewish, hindu, secular\)"):
        build_rows(load_sources(root / "data"), params)
    assert {r["identity"] for r in build_rows(load_sources(data), params)[:4]} == {"muslim", "sikh"}


def test_a_gendered_noun_after_the_identity_gives_a_noun_cue_its_gender(root):
    """"a {id:adj} woman" carries f (gendered_nouns), "a {id:adj} student" none; name and attire cues keep their entry's."""
    from mirage.corpus.build import build_rows
    from mirage.params import load_params

    sources = load_sources(root / "data")
    rows = build_rows(sources, load_params(root / "params.yaml").corpus)
    noun = [r for r in rows if r["cue"] == "noun" and r["language"] == "en"]
    nouns = identities.load(root / "data").gendered_nouns
    after = {r["prompt_id"]: (r["text"][r["swap_span"][1]:].split() or [""])[0].strip(".,;:").casefold() for r in noun}
    assert {r["gender"] for r in noun} == {"f", None} and all(r["gender"] == nouns.get(after[r["prompt_id"]]) for r in noun)
    assert any(after[r["prompt_id"]] == "woman" for r in noun if r["gender"] == "f")
    assert {r["gender"] for r in rows if r["cue"] in ("name", "attire")} == {"f", "m"}


def test_a_noun_under_both_genders_is_refused(data):
    edit(data / "identities.yaml", lambda d: d["gendered_nouns"]["m"].append("woman"))
    assert "entry gendered_nouns.m: 'woman' is listed under both genders" in refused(data, "both genders")


def test_the_offline_judges_name_the_identity_they_read_every_identity_as(data):
    """Removing the judges' canonical identity from the data is one clear error, not a KeyError inside the judge."""
    from mirage.judges import parse2

    def drop(d):
        for section in ("forms", "judge_forms", "exonyms"):
            (d.get(section) or {}).pop(parse2.CANONICAL, None)
    edit(data / "identities.yaml", drop)
    with pytest.raises(DataError, match=f"entry forms.{parse2.CANONICAL} is missing: the offline judges"):
        parse2.canonical_forms(str(data))
