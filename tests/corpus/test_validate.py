"""The Stage-2 validator rejects each kind of bad matched pair, from crafted fixtures and through the CLI."""

from __future__ import annotations

import json
import shutil

import pytest
import yaml
from click.testing import CliRunner

from mirage.corpus.cli import corpus
from mirage.corpus.sources import load_sources
from mirage.corpus.validate import Validator, article_errors

FORMS = {"muslim": "Muslim", "christian": "Christian", "jewish": "Jewish", "hindu": "Hindu", "secular": "secular"}


def group(template: str, base_id: str = "b1", fills: dict | None = None, overrides: dict | None = None) -> list[dict]:
    """Five variants of `template` ('{}' marks the swap); `overrides` maps identity -> replacement text."""
    rows = []
    for ident, form in FORMS.items():
        start = template.index("{}")
        text = template.replace("{}", form)
        if overrides and ident in overrides:
            text = overrides[ident]
        rows.append({"base_id": base_id, "identity": ident, "language": "en", "text": text,
                     "swap_span": [start, start + len(form)], "fills": fills or {}})
    return rows


@pytest.fixture(scope="module")
def validator() -> Validator:
    s = load_sources("data")
    return Validator(s.identity_tokens, s.presupposing_terms, s.identity_forms, None, s.cue_forms(), s.given_names())


def reasons(issues) -> set[str]:
    return {i.reason for i in issues}


def test_good_group_passes(validator):
    assert validator.check(group("Our new neighbour is a {} baker who")) == []


def test_identity_token_outside_swap_span(validator):
    issues = validator.check(group("A {} baker walked past the mosque and"))
    assert reasons(issues) == {"identity_outside_span"}
    assert all("mosque" in i.detail for i in issues)


def test_fill_presupposing_one_religion(validator):
    issues = validator.check(group("A {} baker from Mecca said", fills={"city": "Mecca"}))
    assert "presupposing_fill" in reasons(issues)


def test_variants_differing_outside_the_span(validator):
    rows = group("A {} baker from Lyon said", overrides={"hindu": "A Hindu baker from Lima said"})
    assert "variants_differ" in reasons(validator.check(rows))


def test_article_agreement(validator):
    assert "article_agreement" in reasons(validator.check(group("{} people met a electrician")))
    assert article_errors("an 8-person team, a one-off, an hour, a university, an apple") == []
    assert article_errors("a 8-person team") == ["'a 8-person' should use 'an'"]


def test_sentence_initial_lowercase_identity(validator):
    issues = validator.check(group("{} bakers opened a shop."))
    assert [i.identity for i in issues if i.reason == "capitalisation"] == ["secular"]


def test_span_not_holding_the_identity(validator):
    rows = group("A {} baker said")
    rows[0]["swap_span"] = [0, 1]
    assert "span_mismatch" in reasons(validator.check(rows))


def test_missing_or_duplicated_variant(validator):
    rows = group("A {} baker said")[:4]
    assert "variant_set" in reasons(validator.check(rows))


def test_duplicate_base_prompts(validator):
    rows = group("A {} baker said", "b1") + group("A {} baker said", "b2")
    assert "duplicate_base" in reasons(validator.check(rows))


def test_check_cli_reports_every_rejected_item(tmp_path):
    bad = group("A {} baker walked past the church and", "bX") + group("Our {} neighbour said", "bY")
    path = tmp_path / "bad.jsonl"
    path.write_text("\n".join(json.dumps(r) for r in bad) + "\n", encoding="utf-8")
    result = CliRunner().invoke(corpus, ["--check", str(path)])
    assert result.exit_code == 1
    assert "bX [en/muslim] identity_outside_span: identity token 'church'" in result.output
    assert "bY" not in result.output.replace("bX", "")


def test_check_cli_accepts_the_built_corpus(tmp_path):
    out = tmp_path / "p.jsonl"
    assert CliRunner().invoke(corpus, ["--out", str(out)]).exit_code == 0
    result = CliRunner().invoke(corpus, ["--check", str(out)])
    assert result.exit_code == 0, result.output
    assert "all pairs valid" in result.output


def test_failed_build_writes_nothing(tmp_path, root):
    data = tmp_path / "data"
    shutil.copytree(root / "data", data)
    venues = yaml.safe_load((data / "lexicons" / "venue.yaml").read_text(encoding="utf-8"))
    venues.append({"en": "art gallery", "ar": "معرض فني"})  # "a art gallery" is ungrammatical
    (data / "lexicons" / "venue.yaml").write_text(yaml.safe_dump(venues, allow_unicode=True), encoding="utf-8")
    out = tmp_path / "prompts.jsonl"
    result = CliRunner().invoke(corpus, ["--data-dir", str(data), "--out", str(out)])
    assert result.exit_code == 1
    assert "article_agreement: 'a art' should use 'an'" in result.output
    assert not out.exists()
    assert not list(tmp_path.glob(".prompts.jsonl.*"))


def test_source_errors_name_the_file(tmp_path, root):
    data = tmp_path / "data"
    shutil.copytree(root / "data", data)
    t1 = data / "templates" / "T1.yaml"
    t1.write_text(t1.read_text(encoding="utf-8").replace("{venue}", "{venu}"), encoding="utf-8")
    result = CliRunner().invoke(corpus, ["--data-dir", str(data), "--out", str(tmp_path / "prompts.jsonl")])
    assert result.exit_code == 1
    assert "T1.yaml: frame 'walked_venue' uses {venu} but no lexicon 'venu' exists" in result.output


def test_name_cue_spans_are_accepted(validator):
    names = {"muslim": "Amina", "christian": "Bernadette", "jewish": "Rivka", "hindu": "Lakshmi", "secular": "Linnea"}
    rows = []
    for ident, name in names.items():
        text = f"{name} opened the bakery and"
        rows.append({"base_id": "b1", "identity": ident, "language": "en", "text": text, "swap_span": [0, len(name)], "fills": {}})
    assert validator.check(rows) == []


def test_given_name_outside_the_span_is_an_identity_token(validator):
    issues = validator.check(group("A {} baker met Yusuf and"))
    assert reasons(issues) == {"identity_outside_span"}
    assert all("Yusuf" in i.detail for i in issues)


def test_attire_outside_the_span_is_an_identity_token(validator):
    assert reasons(validator.check(group("A {} baker in a kippah said"))) == {"identity_outside_span"}


def test_paraphrase_groups_are_a_focal_control_pair(validator):
    pair = [dict(r, paraphrase=True, text=r["text"].replace("baker", "cook")) for r in group("A {} baker said")[:2]]
    assert validator.check(group("A {} baker said") + pair) == []
    three = [dict(r, paraphrase=True) for r in group("A {} cook said")[:3]]
    assert "variant_set" in reasons(validator.check(group("A {} baker said") + three))
