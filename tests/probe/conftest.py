"""Fixtures for the probe tests: a real word-level tokenizer and the ids of its violence words."""

from __future__ import annotations

import pytest
from probe_tiny import VIOLENT, make_tokenizer
from transformers import PreTrainedTokenizerFast


@pytest.fixture(scope="session")
def tiny_tokenizer() -> PreTrainedTokenizerFast:
    return make_tokenizer()


@pytest.fixture(scope="session")
def violent_ids(tiny_tokenizer) -> list[int]:
    return tiny_tokenizer.convert_tokens_to_ids(VIOLENT)
