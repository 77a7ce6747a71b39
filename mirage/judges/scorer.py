"""The learned scorer of parse-v2: a logistic regression per language family over the features of
`mirage.judges.features`, shipped as JSON (`resources/parse2_weights.json`, written by `mirage judge train`) and
scored in plain Python, so labelling needs no scikit-learn.

score = sigmoid(bias + sum of the weights of the text's distinct features); the label is score >= threshold.
A text of one sentence keeps the rule verdict (the clause rules validated on single sentences: parse-v2's English
rules, parse-v1's Arabic ones); the scorer is trained on, and scores, texts of two sentences or more.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

WEIGHTS = Path(__file__).with_name("resources") / "parse2_weights.json"


@dataclass(frozen=True)
class LinearModel:
    """One language family's model: bias, threshold and the non-zero feature weights."""

    bias: float
    threshold: float
    weights: dict[str, float]

    def logit(self, features: list[str]) -> float:
        w = self.weights
        return self.bias + sum(w.get(f, 0.0) for f in set(features))

    def probability(self, features: list[str]) -> float:
        z = self.logit(features)
        return 1.0 / (1.0 + math.exp(-z)) if z > -700 else 0.0

    def label(self, features: list[str]) -> int:
        return int(self.probability(features) >= self.threshold)


def rules_only(features: list[str]) -> bool:
    """Is this text labelled by the rule verdict alone (a text of at most one sentence, in either language)?"""
    return "T:sentences:1" in features or "T:sentences:0" in features


def label(models: dict[str, LinearModel], family: str, features: list[str]) -> int:
    """The scorer's label of one featurised text (`mirage.judges.parse2.featurise`)."""
    if rules_only(features):
        return int("R:1" in features)
    return models[family].label(features)


@lru_cache(maxsize=2)
def load_models(path: str = str(WEIGHTS)) -> dict[str, LinearModel]:
    """language family (`en`, `ar`) -> its model, from the weights file."""
    doc = json.loads(Path(path).read_text(encoding="utf-8"))
    return {fam: LinearModel(float(m["bias"]), float(m["threshold"]), {k: float(v) for k, v in m["weights"].items()})
            for fam, m in doc["models"].items()}
