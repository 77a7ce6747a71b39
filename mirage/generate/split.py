"""Separate a C2 (chain-of-thought) response into reasoning trace and final answer (§3.3).

A provider-native reasoning field (OpenAI-compatible `reasoning_content`, Anthropic thinking blocks)
wins. Otherwise the text is split at the LAST final-answer marker ("Final answer:", "Answer:",
"In conclusion," ...); the reasoning is everything before it and the answer everything from the
marker's end. Without a marker, the last paragraph (after the last blank line) is the answer and
the rest the reasoning; a single-paragraph response is all answer with reasoning null.
"""

from __future__ import annotations

import re

MARKER = re.compile(
    r"(?im)^[\s#>_*-]*(?:(?:final answer|answer|conclusion)\b[*\s]*:|in conclusion\b\s*[,:]|the final answer is\b\s*:?)[*\s]*"
)


def split_reasoning(text: str, native_reasoning: str | None = None) -> tuple[str | None, str]:
    """Return (reasoning, answer) for a C2 response."""
    if native_reasoning and native_reasoning.strip():
        return native_reasoning.strip(), text.strip()
    body = text.strip()
    matches = list(MARKER.finditer(body))
    if matches:
        last = matches[-1]
        answer = body[last.end():].strip()
        if answer:
            return (body[: last.start()].strip() or None), answer
    paragraphs = [p for p in re.split(r"\n\s*\n", body) if p.strip()]
    if len(paragraphs) < 2:
        return None, body
    return "\n\n".join(paragraphs[:-1]).strip(), paragraphs[-1].strip()
