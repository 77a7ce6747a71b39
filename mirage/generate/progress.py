"""Live console progress for a generation run: calls done/total, tokens/s, errors, ETA and API cost so far,
refreshed every few seconds (also while a local batch is still decoding), with the log path printed first."""

from __future__ import annotations

import sys
import time
from pathlib import Path

from tqdm import tqdm

from mirage.config.generate import ModelSpec
from mirage.generate.providers.base import Result, Sample
from mirage.secrets import redact


class ConsoleProgress:
    """A tqdm bar on stderr over the calls of one run; `tokens` is fed per decoding step by local providers."""

    def __init__(self, desc: str, total: int, done: int, spec: ModelSpec, refresh_s: float = 2.0) -> None:
        self.spec = spec
        self.bar = tqdm(total=total, initial=done, desc=desc, unit="call", file=sys.stderr, dynamic_ncols=True,
                        mininterval=refresh_s, smoothing=0.1)
        self.t0 = time.perf_counter()
        self.tokens_in = self.tokens_out = self.live_tokens = self.errors = 0
        self.refresh_s, self._last = refresh_s, 0.0

    def cost(self) -> float | None:
        s = self.spec
        if s.price_in_per_mtok is None or s.price_out_per_mtok is None:
            return None
        return self.tokens_in / 1e6 * s.price_in_per_mtok + self.tokens_out / 1e6 * s.price_out_per_mtok

    def _postfix(self) -> None:
        decoded = self.live_tokens or self.tokens_out  # per-step counts where the provider reports them
        rate = decoded / max(time.perf_counter() - self.t0, 1e-9)
        post = {"tok/s": f"{rate:.0f}", "errors": self.errors}
        cost = self.cost()
        if cost is not None:
            post["cost"] = f"${cost:.2f}"
        self.bar.set_postfix(post, refresh=False)

    def __call__(self, _sample: Sample, result: Result) -> None:
        self.tokens_in += result.tokens_in
        self.tokens_out += result.tokens_out
        self.errors += result.error is not None
        self._postfix()
        self.bar.update(result.error is None)

    def tokens(self, n: int) -> None:
        """Tokens decoded in one step of a local batch: keeps tokens/s moving between finished calls."""
        self.live_tokens += n
        now = time.perf_counter()
        if now - self._last >= self.refresh_s:
            self._last = now
            self._postfix()
            self.bar.refresh()

    def close(self) -> None:
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
