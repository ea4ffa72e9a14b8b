"""A progress bar on stderr, so stdout stays clean for the table or JSON a command prints.

On a terminal the bar is redrawn in place (by tqdm when the `measure` extra installed it);
elsewhere (CI logs, pipes, tests) each step is one plain line, because carriage returns turn a log
into one unreadable line.

The ETA weighs steps by their predicted seconds when the caller has them: sites differ by orders
of magnitude, and a count-based ETA ("4/26 after 0.0 s") says nothing while one slow site runs.
The prediction is rescaled by how the finished steps compared with theirs.
"""

from __future__ import annotations

import sys
import time

WIDTH = 24


def duration_text(seconds: float) -> str:
    if seconds >= 3600:
        return f"{seconds / 3600:.1f}h"
    if seconds >= 60:
        return f"{seconds / 60:.1f}min"
    if seconds < 0.1:
        return f"{seconds * 1000:.0f}ms"
    return f"{seconds:.1f}s"


class ProgressBar:
    def __init__(self, title: str, total: int, *, stream=None, enabled: bool = True,
                 weights: list[float] | None = None) -> None:
        self.title = title
        self.total = max(total, 1)
        self.predicted = weights is not None  # weights are predicted seconds, not just counts
        self.weights = list(weights) if weights is not None else [1.0] * total
        self.done = 0
        self.stream = stream or sys.stderr
        self.enabled = enabled
        self.interactive = enabled and hasattr(self.stream, "isatty") and self.stream.isatty()
        self.started = time.perf_counter()
        self._tqdm = self._make_tqdm() if self.interactive else None

    def _make_tqdm(self):
        try:
            from tqdm import tqdm
        except ImportError:
            return None
        # progress in predicted seconds, so tqdm's own rate and ETA are the weighted ones
        return tqdm(total=sum(self.weights) or 1.0, file=self.stream, desc=self.title, leave=True,
                    bar_format="{desc} {percentage:3.0f}%|{bar:24}| [{elapsed}<{remaining}]{postfix}")

    def eta_seconds(self) -> float | None:
        """Seconds left: the predicted remainder, scaled by elapsed/predicted of the finished steps."""
        done = sum(self.weights[: self.done])
        left = sum(self.weights[self.done:])
        if done <= 0:
            return left if self.predicted else None
        return (time.perf_counter() - self.started) * left / done

    def step(self, label: str) -> None:
        """Announce the step about to run (the bar shows what is being measured now)."""
        if not self.enabled:
            return
        if self._tqdm is not None:
            self._tqdm.n = sum(self.weights[: self.done])
            self._tqdm.set_postfix_str(f"{self.done}/{self.total}  {label}")
        else:
            filled = int(WIDTH * self.done / self.total)
            bar = "#" * filled + "-" * (WIDTH - filled)
            elapsed = time.perf_counter() - self.started
            eta = self.eta_seconds()
            eta_text = "" if eta is None else f" ETA {duration_text(eta)}"
            text = f"{self.title} [{bar}] {self.done}/{self.total} {duration_text(elapsed)}{eta_text}  {label}"
            if self.interactive:
                self.stream.write("\r\033[K" + text)
            else:
                self.stream.write(text + "\n")
            self.stream.flush()
        self.done = min(self.done + 1, self.total)

    def close(self, summary: str = "") -> None:
        if not self.enabled:
            return
        if self._tqdm is not None:
            self._tqdm.n = sum(self.weights[: self.done])
            self._tqdm.set_postfix_str(summary or "done")
            self._tqdm.close()
            return
        elapsed = time.perf_counter() - self.started
        text = f"{self.title} [{'#' * WIDTH}] done in {elapsed:.1f}s" + (f"  {summary}" if summary else "")
        self.stream.write(("\r\033[K" if self.interactive else "") + text + "\n")
        self.stream.flush()
