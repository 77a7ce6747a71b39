"""Arabic rules of `parse-v2` (placeholder: parse-v1's rules until the discourse-level rules land)."""

from __future__ import annotations

from mirage.label.arabic import arabic_violent


def arabic_violent_v2(text: str, data_dir: str = "data", continuation: bool = False) -> bool:
    return arabic_violent(text, data_dir, continuation)
