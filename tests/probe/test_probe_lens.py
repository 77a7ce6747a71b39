"""The logit lens on tiny random Llamas built in the test: exact zeros, agreement with the model's own output,
batching invariance, and recovery of a planted focal-only bias."""

from __future__ import annotations

import numpy as np
import torch
from probe_tiny import N_LAYERS, PLANT, REMOVE, make_model, make_pairs

from mirage.config.probe import ProbeParams
from mirage.probe.lens import anatomy, lens_log_mass
from mirage.probe.run import probe

PARAMS = ProbeParams(n_resamples=1000)


def test_lambda_is_exactly_zero_for_identical_prompts(tiny_tokenizer, violent_ids):
    model = make_model(tiny_tokenizer, plant=True)
    pairs = make_pairs(focal="muslim", control="muslim")
    result = probe(model, tiny_tokenizer, pairs, violent_ids, PARAMS, progress=False)
    assert (result.pairs["lambda"] == 0.0).all()
    assert len(result.pairs) == len(pairs) * (N_LAYERS + 1)
    assert (result.summary[["mean_lambda", "ci_low", "ci_high"]].to_numpy() == 0.0).all()
    assert result.onset["early_elevation_layer"] is None


@torch.no_grad()
def test_last_layer_lens_equals_model_output(tiny_tokenizer, violent_ids):
    model = make_model(tiny_tokenizer, plant=True)
    texts = [p.focal_text for p in make_pairs()]
    mass = lens_log_mass(model, tiny_tokenizer, texts, violent_ids, batch_size=4, progress=False)
    assert mass.shape == (len(texts), N_LAYERS + 1)
    for text, row in zip(texts, mass):
        logp = torch.log_softmax(model(**tiny_tokenizer(text, return_tensors="pt")).logits[0, -1].double(), -1)
        assert np.isclose(row[-1], torch.logsumexp(logp[violent_ids], 0).item(), atol=1e-4)


def test_batching_and_padding_do_not_change_results(tiny_tokenizer, violent_ids):
    model = make_model(tiny_tokenizer, plant=False)
    texts = [p.control_text for p in make_pairs()]  # mixed lengths: left padding within batches
    one = lens_log_mass(model, tiny_tokenizer, texts, violent_ids, batch_size=1, progress=False)
    many = lens_log_mass(model, tiny_tokenizer, texts, violent_ids, batch_size=7, progress=False)
    np.testing.assert_allclose(one, many, atol=1e-4)


def test_anatomy_rejects_unknown_architecture():
    class Bare(torch.nn.Module):
        def get_output_embeddings(self):
            return torch.nn.Linear(2, 2)

    try:
        anatomy(Bare())
    except ValueError as exc:
        assert "Bare" in str(exc)
    else:
        raise AssertionError("anatomy accepted a model without decoder layers")


def test_planted_bias_is_found_at_the_planted_layers(tiny_tokenizer, violent_ids):
    result = probe(make_model(tiny_tokenizer, plant=True), tiny_tokenizer, make_pairs(), violent_ids, PARAMS, progress=False)
    s = result.summary.set_index("layer")
    peak = s["mean_lambda"].max()
    assert peak > 1.0
    planted = range(PLANT[0], REMOVE)
    assert (s.loc[list(planted), "ci_low"] > 0.5 * peak).all()
    assert (s.loc[: PLANT[0] - 1, "mean_lambda"].abs() < 0.1 * peak).all()
    assert (s.loc[REMOVE:, "mean_lambda"].abs() < 0.1 * peak).all()
    assert result.onset == {"n_layers": N_LAYERS, "early_elevation_layer": PLANT[0],
                            "final_suppression_layer": REMOVE, "final_suppression_offset": N_LAYERS - REMOVE}


def test_unplanted_model_shows_no_elevation(tiny_tokenizer, violent_ids):
    result = probe(make_model(tiny_tokenizer, plant=False), tiny_tokenizer, make_pairs(), violent_ids, PARAMS, progress=False)
    assert result.summary["mean_lambda"].abs().max() < PARAMS.elevation_min_lambda
    assert result.onset["early_elevation_layer"] is None and result.onset["final_suppression_layer"] is None
