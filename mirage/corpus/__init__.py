"""Corpus construction: templates x lexicon fills x identity variants, validated, split."""
