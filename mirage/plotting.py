"""Byte-reproducible figure files: the same figure renders to the same PNG and SVG bytes in every process.

Matplotlib otherwise writes its version and a date into the metadata and salts SVG element ids at random.
"""

from __future__ import annotations

import io

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
from matplotlib.figure import Figure  # noqa: E402

SVG_HASHSALT = "mirage"
METADATA = {"png": {"Software": None}, "svg": {"Date": None, "Creator": "mirage"}}


def figure_bytes(fig: Figure, fmt: str, dpi: float | None = None) -> bytes:
    """`fig` rendered as `fmt` (png or svg) with fixed metadata and SVG id salt."""
    buf = io.BytesIO()
    with plt.rc_context({"svg.hashsalt": SVG_HASHSALT}):
        fig.savefig(buf, format=fmt, dpi=dpi or fig.dpi, metadata=METADATA[fmt])
    return buf.getvalue()
