"""Numbers print one way (issue 35): nothing reads `-0.0`, whatever rounds to zero."""

from __future__ import annotations

import re

import pytest

from mirage.report.data import number
from mirage.report.tables import cell

NEGATIVE_ZERO = re.compile(r"(?<![\d.])[-−]0\.0+(?![0-9]*[1-9])")


@pytest.mark.parametrize("value,digits,sign,text", [(-0.04, 1, False, "0.0"), (-0.04, 1, True, "0.0"), (0.0, 1, True, "0.0"),
                                                    (-0.0, 2, False, "0.00"), (-0.06, 1, True, "-0.1"), (0.06, 1, True, "+0.1"),
                                                    (-25.0, 1, False, "-25.0"), (3.14159, 2, True, "+3.14")])
def test_number_never_prints_a_negative_zero(value, digits, sign, text):
    assert number(value, digits, sign) == text


def test_an_interval_that_ends_just_below_zero_reads_zero():
    assert cell(-12.0, -25.0, -0.04, 1, 40) == "-12.0 [-25.0, 0.0], n=40"


def test_no_negative_zero_on_the_page_or_in_the_tables(built):
    root, _ = built
    texts = [(root / "report" / "demo" / "index.html").read_text(encoding="utf-8"),
             *(p.read_text(encoding="utf-8") for p in (root / "tables" / "demo").glob("*.md"))]
    assert not [m.group(0) for t in texts for m in NEGATIVE_ZERO.finditer(re.sub(r"base64,[^\"]+", "", t))]
