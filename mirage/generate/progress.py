"""Live console progress for a generation run, in tokens: the bar fills with the token budget (calls x max_tokens)
as tokens are decoded (per step, where the provider reports steps) and as calls finish (a call that stops early
counts its unused budget then), so it moves during a local batch instead of jumping at its end. The rate is decoded
tokens per second since the first token, and the ETA is the remaining budget at that rate (scaled by the share of
its budget an average finished call used); calls done/total, errors and API cost so far ride along. The log path is
printed first."""

from __future__ import annotations

import sys
import time
from pathlib import Path

from tqdm import tqdm

from mirage.config.generate import ModelSpec
from mirage.generate.providers.base import Result, Sample
from mirage.secrets import redact


def duration(seconds: float) -> str:
    """`45s`, `12m05s`, `3h20m`, `2d04h`: an ETA readable at a glance."""
    s = max(0, round(seconds))
    if s < 60:
        return f"{s}s"
    if s < 3600:
        return f"{s // 60}m{s % 60:02d}s"
    if s < 86_400:
        return f"{s // 3600}h{s % 3600 // 60:02d}m"
    return f"{s // 86_400}d{s % 86_400 // 3600:02d}h"


class ConsoleProgress:
    """A tqdm bar on stderr over the token budget of one run's calls (`max_tokens` each); `tokens` is fed per
    decoding step by local providers, results by the runner."""

    BAR = "{desc}: {percentage:3.0f}%|{bar}| {n_fmt}/{total_fmt} tok budget [{elapsed}{postfix}]"

    def __init__(self, desc: str, total: int, done: int, spec: ModelSpec, max_tokens: int, refresh_s: float = 2.0) -> None:
        self.spec, self.max_tokens = spec, max_tokens
        self.calls, self.calls_done = total, done
        self.bar = tqdm(total=total * max_tokens, initial=done * max_tokens, desc=desc, unit="tok", unit_scale=True,
                        file=sys.stderr, dynamic_ncols=True, mininterval=refresh_s, bar_format=self.BAR)
        self.created, self.t0, self.before_t0 = time.perf_counter(), None, 0
        self.tokens_in = self.tokens_out = self.live_tokens = self.errors = 0
        self.finished = self.finished_tokens = 0  # calls finished in this run, and the tokens they decoded
        self.refresh_s, self._last = refresh_s, 0.0
        self._postfix()

    def cost(self) -> float | None:
        s = self.spec
        if s.price_in_per_mtok is None or s.price_out_per_mtok is None:
            return None
        return self.tokens_in / 1e6 * s.price_in_per_mtok + self.tokens_out / 1e6 * s.price_out_per_mtok

    def rate(self) -> float | None:
        """Decoded tokens per second: from the first decoding step on where steps are reported (model loading and
        the first prefill left out), else from the start of the run (None before any token)."""
        now = time.perf_counter()
        if self.live_tokens:
            decoded, since = self.live_tokens - self.before_t0, self.t0
        else:
            decoded, since = self.tokens_out, self.created
        return decoded / max(now - since, 1e-9) if decoded > 0 and now > since else None

    def eta_s(self) -> float | None:
        """Seconds left: the tokens the unfinished calls will still decode, at the current rate."""
        rate = self.rate()
        if rate is None:
            return None
        share = self.finished_tokens / (self.finished * self.max_tokens) if self.finished else 1.0
        in_flight = self.live_tokens - self.finished_tokens if self.live_tokens else 0  # decoded by unfinished calls
        left = (self.calls - self.calls_done) * self.max_tokens * share - in_flight
        return max(left, 0.0) / rate

    def _postfix(self) -> None:
        rate, eta = self.rate(), self.eta_s()
        post = {"calls": f"{self.calls_done}/{self.calls}", "tok/s": "-" if rate is None else f"{rate:.0f}",
                "ETA": "-" if eta is None else duration(eta), "errors": self.errors}
        cost = self.cost()
        if cost is not None:
            post["cost"] = f"${cost:.2f}"
        self.bar.set_postfix(post, refresh=False)

    def __call__(self, _sample: Sample, result: Result) -> None:
        self.tokens_in += result.tokens_in
        self.tokens_out += result.tokens_out
        self.errors += result.error is not None
        if result.error is None:
            self.calls_done += 1
            self.finished += 1
            self.finished_tokens += result.tokens_out
            stepped = result.tokens_out if self.live_tokens else 0  # already on the bar, step by step
            self.bar.update(max(self.max_tokens - stepped, 0))
        self._postfix()
        self.bar.refresh()

    def tokens(self, n: int) -> None:
        """Tokens decoded in one step of a local batch: the bar and the rate move between finished calls."""
        if self.t0 is None:  # the first step carries the first prefill: the clock starts once it is done
            self.t0, self.before_t0 = time.perf_counter(), n
        self.live_tokens += n
        self.bar.update(n)
        now = time.perf_counter()
        if now - self._last >= self.refresh_s:
            self._last = now
            self._postfix()
            self.bar.refresh()

    def close(self) -> None:
        self._postfix()
        self.bar.close()


class Log:
    """Messages to the console (stderr) and, when given, appended to a log file."""

    def __init__(self, path: str | None) -> None:
        self.path = Path(path) if path else None
        if self.path:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            self.path.write_text("", encoding="utf-8")

    def __call__(self, message: str, console: bool = True) -> None:
        """Print `message` (redacted) and append it to the log file; `console=False`: the file only (for an error
        the command itself prints as its one line)."""
        message = redact(message)
        if console:
            print(message, file=sys.stderr, flush=True)
        if self.path:
            with open(self.path, "a", encoding="utf-8") as fh:
                fh.write(message + "\n")
