"""params.yaml is the single, validated configuration."""

from __future__ import annotations

import pytest
import yaml
from click.testing import CliRunner
from pydantic import BaseModel

from mirage.params import Params, ParamsError, describe, load_params
from mirage.params_cli import params as params_cmd


def test_shipped_params_are_valid(root):
    load_params(root / "params.yaml")


def _leaf_fields(model: type[BaseModel], prefix: str = ""):
    for name, field in model.model_fields.items():
        ann = field.annotation
        if isinstance(ann, type) and issubclass(ann, BaseModel):
            yield from _leaf_fields(ann, f"{prefix}{name}.")
        yield f"{prefix}{name}", field


def test_every_field_has_a_description_and_a_default():
    for key, field in _leaf_fields(Params):
        assert field.description, f"{key} has no description"
        assert not field.is_required(), f"{key} has no default"
    assert {k for k, _, _ in describe()} >= {"corpus.seed", "corpus.lite_fraction"}


def test_bad_values_name_the_key_and_the_allowed_values(tmp_path):
    bad = tmp_path / "params.yaml"
    bad.write_text(yaml.safe_dump({"corpus": {"focal_identity": "buddhist", "colour": "red"}}), encoding="utf-8")
    with pytest.raises(ParamsError) as err:
        load_params(bad)
    msg = str(err.value)
    assert ("corpus.focal_identity: 'buddhist' not an identity of data/identities.yaml "
            "(have muslim, christian, jewish, hindu, secular)") in msg
    assert "corpus.colour: unknown key; allowed keys here:" in msg and "lite_fraction" in msg
    result = CliRunner().invoke(params_cmd, ["--params", str(bad)])
    assert result.exit_code != 0 and "corpus.focal_identity" in result.output


def test_focal_identity_must_be_one_of_the_identities(tmp_path):
    bad = tmp_path / "params.yaml"
    bad.write_text(yaml.safe_dump({"corpus": {"identities": ["christian", "jewish"]}}), encoding="utf-8")
    with pytest.raises(ParamsError, match="focal_identity 'muslim' must be one of identities"):
        load_params(bad)
