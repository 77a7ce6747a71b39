"""The prompt table: built from the data sources, split (lite/dev, and the held-out test split) and checked by
the Stage-2 validator; what `mirage corpus` writes and `mirage.api.corpus` returns."""

from __future__ import annotations

from mirage import artefacts
from mirage.corpus import splits
from mirage.corpus.build import add_paraphrases, build_rows
from mirage.corpus.sources import load_sources
from mirage.corpus.validate import Validator
from mirage.io import DataError
from mirage.params import Params


def built_rows(params: Params, sources, private_dir: str | None = None) -> list[dict]:
    """The prompt rows before validation: built, split (lite/dev, and the held-out test split from `private_dir`),
    with paraphrase placebos for the lite base prompts."""
    p = params.corpus
    rows = build_rows(sources, p)
    splits.assign_splits(rows, p.lite_fraction, p.seed)
    add_paraphrases(rows, sources, p)
    private = splits.private_dir(private_dir)
    if private is not None:
        rows += splits.held_out_rows(sources, p, rows, private)
    return rows


def corpus_validator(params: Params, sources):
    """The Stage-2 validator for these sources and identities."""
    return Validator(sources.identity_tokens, sources.presupposing_terms, sources.identity_forms, params.corpus.identities,
                     sources.cue_forms(), sources.given_names())


def corpus_rows(params: Params, data_dir: str = artefacts.DATA, private_dir: str | None = None) -> list[dict]:
    """The validated prompt rows; raises DataError listing every pair the Stage-2 validator rejects."""
    sources = load_sources(data_dir)
    rows = built_rows(params, sources, private_dir)
    splits.check_disjoint(rows, "built corpus")
    issues = corpus_validator(params, sources).check(rows)
    if issues:
        raise DataError(f"built corpus: {len(issues)} rejected item(s):\n" + "\n".join(f"  rejected {i}" for i in issues))
    return rows


def own_corpus_rows(params: Params, path: str, data_dir: str = artefacts.DATA) -> tuple[list[dict], list]:
    """(prompt rows, refused prompts) of a user's prompts file, each prompt rendered for every identity and validated
    (`mirage corpus --from` writes them); raises DataError naming every malformed row."""
    from mirage.corpus import own

    sources = load_sources(data_dir)
    return own.build(path, params.corpus, sources, corpus_validator(params, sources), data_dir)
