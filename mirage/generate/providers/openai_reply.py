"""An OpenAI chat or text completion body -> Result, every field checked (mirage.generate.providers.reply): the
one reader of the OpenAI reply format, shared by the direct (openai.py) and the Batch API (openai_batch.py) paths."""

from __future__ import annotations

from typing import Any

from mirage.generate.providers import reply as check
from mirage.generate.providers.base import Result, normalise_finish


def parse_response(data: dict[str, Any], latency_s: float = 0.0, request_id: str | None = None,
                   max_tokens: int | None = None) -> Result:
    """Chat or text completion JSON -> Result, every field checked (mirage.generate.providers.reply); a reply
    that breaks the protocol is a failed call, a refusal is `refusal`."""
    try:
        choices = check.array(data.get("choices"), "choices")
        if not choices:
            raise check.Malformed("choices is empty")
        choice = check.obj(choices[0], "choices[0]")
        usage = check.obj(data.get("usage"), "usage", optional=True)
        tokens_in, tokens_out = check.count(usage, "prompt_tokens", "usage"), check.count(usage, "completion_tokens", "usage")
        if "message" in choice:
            msg = check.obj(choice["message"], "choices[0].message")
            where = "choices[0].message"
            text = check.string(msg, "content", where) or ""
            reasoning = check.string(msg, "reasoning_content", where) or check.string(msg, "reasoning", where)
            refusal = check.string(msg, "refusal", where)
        elif "text" in choice:
            text, reasoning, refusal = check.string(choice, "text", "choices[0]") or "", None, None
        else:
            raise check.Malformed("choices[0] has neither message nor text")
        finish_reason = check.string(choice, "finish_reason", "choices[0]")
        response_id = check.string(data, "id", "reply")
        fingerprint = check.string(data, "system_fingerprint", "reply")
        served = check.string(data, "model", "reply")
        details = check.obj(usage.get("completion_tokens_details"), "usage.completion_tokens_details", optional=True)
        thought = check.count(details, "reasoning_tokens", "usage.completion_tokens_details")
        check.within_budget(max_tokens, text, reasoning, refusal)
        finish = "refusal" if refusal else normalise_finish(finish_reason)
        check.answered(text or (refusal or ""), finish, max_tokens, thought)
    except check.Unanswered as exc:
        return Result.failure(f"no answer: {exc}", latency_s, request_id)
    except check.Malformed as exc:
        return Result.failure(f"malformed response: {exc}", latency_s, request_id)
    return Result(text=text or (refusal or ""), reasoning=reasoning, finish_reason=finish, tokens_in=tokens_in,
                  tokens_out=tokens_out, latency_s=latency_s, provider_request_id=request_id or response_id,
                  system_fingerprint=fingerprint, served_model=served, note=thinking_note(thought, max_tokens),
                  extra={"response_id": response_id})


def thinking_note(reasoning_tokens: int, max_tokens: int | None) -> str | None:
    """The record's note where thinking spent part of the output budget (the answer had the rest)."""
    if not reasoning_tokens:
        return None
    return f"thinking spent {reasoning_tokens} of the {max_tokens}-token output budget"
