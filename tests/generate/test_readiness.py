"""The registry check run before any job: unpinned, retired and keyless models are refused (issue 16 item 7)."""

from __future__ import annotations

import datetime as dt
import re

import pytest

from mirage.config.generate import HUB_REVISIONS, UNPINNED, default_models
from mirage.generate.readiness import check_ready, model_problems
from mirage.params import ParamsError, load_params

TODAY = dt.date(2026, 11, 23)
KEYS = {"OPENAI_API_KEY": "sk-x" * 4, "ANTHROPIC_API_KEY": "sk-y" * 4, "GEMINI_API_KEY": "g" * 16}


def test_open_models_are_pinned_to_full_commit_shas():
    models = default_models()
    for name, spec in models.items():
        if spec.provider == "vllm":
            assert re.fullmatch(r"[0-9a-f]{40}", spec.revision), name
            assert spec.revision == HUB_REVISIONS[spec.model_id]
    assert load_params("params.yaml").models == models, "params.yaml and default_models() agree"


def test_retired_snapshots_are_refused_from_their_date():
    models = default_models()
    opus = models["claude-opus-4"]
    assert opus.retires == dt.date(2026, 6, 15)
    assert model_problems("claude-opus-4", opus, dt.date(2026, 6, 14), KEYS) == []
    [problem] = model_problems("claude-opus-4", opus, dt.date(2026, 6, 15), KEYS)
    assert "models.claude-opus-4.retires" in problem and "2026-06-15" in problem
    assert model_problems("gpt-4o", models["gpt-4o"], TODAY, KEYS) == []  # no shutdown date announced


def test_unpinned_and_keyless_models_are_refused():
    models = default_models()
    unpinned = models["llama-3.3-70b"].model_copy(update={"revision": UNPINNED})
    assert "not pinned" in model_problems("llama", unpinned, TODAY, {})[0]
    assert model_problems("llama", unpinned.model_copy(update={"allow_unpinned": True}), TODAY, {}) == []
    assert "OPENAI_API_KEY" in model_problems("gpt-4o", models["gpt-4o"], TODAY, {})[0]
    assert model_problems("gpt-4o", models["gpt-4o"], TODAY, {"OPENAI_API_KEY": "  "}), "a blank key is no key"
    official = models["gpt-4o"].model_copy(update={"api_key_env": None})
    assert "api_key_env" in model_problems("gpt-4o", official, TODAY, KEYS)[0], "the official endpoint needs a key"
    local_server = official.model_copy(update={"base_url": "http://127.0.0.1:8000/v1"})
    assert model_problems("srv", local_server, TODAY, {}) == [], "a local OpenAI-compatible server needs none"
    assert model_problems("smollm2-135m", models["smollm2-135m"], TODAY, {}) == []


def test_check_ready_lists_every_problem_of_the_shipped_lite_slice():
    params = load_params("params.yaml")
    with pytest.raises(ParamsError) as err:
        check_ready(params.models, [*params.slices.lite.models, "nosuch"], today=TODAY, environ={"OPENAI_API_KEY": "k" * 20})
    msg = str(err.value)
    assert msg.startswith("params.yaml: 5 model problem(s); nothing was started")
    for part in ("claude-opus-4.retires", "claude-opus-4.api_key_env", "gemini-1.5-pro.retires", "gemini-1.5-pro.api_key_env",
                 "models.nosuch: not in the registry"):
        assert part in msg
    flagged = {re.match(r"  - models\.(.+?)(\.retires|\.api_key_env|\.revision)?:", line).group(1) for line in msg.splitlines()[1:]}
    assert flagged == {"claude-opus-4", "gemini-1.5-pro", "nosuch"}
    check_ready(params.models, params.slices.demo.models, today=TODAY, environ={})
