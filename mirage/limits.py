"""`limits:` section of params.yaml: how much of a file that a stranger hands us (a submission bundle, a gold
file, a validation import) is read before it is refused (mirage/untrusted.py, docs/leaderboard.md)."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field

MB = 1 << 20


class LimitsParams(BaseModel):
    model_config = ConfigDict(extra="forbid", allow_inf_nan=False)

    bundle_mb: int = Field(256, ge=1, le=1 << 20, description="Largest submission bundle: the sum of its files (as the "
                           "manifest declares them, and as read); also the most a .tar.gz may decompress to. A verification "
                           "uses at most twice the declared size on disk (extraction + the board's packed copy).")
    manifest_kb: int = Field(1024, ge=1, le=1 << 20, description="Largest manifest.json of a bundle.")
    archive_members: int = Field(16, ge=1, le=100_000, description="Most members (files and folders) a bundle archive may hold.")
    file_mb: int = Field(64, ge=1, le=1 << 20, description="Largest gold file, validation import or other single input "
                         "file handed to a command (bundles: bundle_mb).")
    line_kb: int = Field(1024, ge=1, le=1 << 20, description="Longest line of a JSONL or CSV input (one row).")
    json_depth: int = Field(32, ge=2, le=1000, description="Deepest nesting of JSON arrays and objects in an input.")
    json_number_chars: int = Field(64, ge=8, le=4000, description="Longest JSON number literal (digits, sign, exponent): "
                                   "bigger numbers are refused before Python converts them.")
    chars_per_token: int = Field(64, ge=1, le=10_000, description="A bundle's completion text may hold at most "
                                 "max_tokens x this many characters (no tokenizer emits longer tokens), which bounds "
                                 "the judge's work per row.")
