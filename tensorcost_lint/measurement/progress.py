"""A progress bar on stderr, so stdout stays clean for the table or JSON a command prints.

On a terminal the bar is redrawn in place; elsewhere (CI logs, pipes, tests) each step is one
plain line, because carriage returns turn a log into one unreadable line.
"""

from __future__ import annotations

import sys
import time

WIDTH = 24


class ProgressBar:
    def __init__(self, title: str, total: int, *, stream=None, enabled: bool = True) -> None:
        self.title = title
        self.total = max(total, 1)
        self.done = 0
        self.stream = stream or sys.stderr
        self.enabled = enabled
        self.interactive = enabled and hasattr(self.stream, "isatty") and self.stream.isatty()
        self.started = time.perf_counter()

    def step(self, label: str) -> None:
        """Announce the step about to run (the bar shows what is being measured now)."""
        if not self.enabled:
            return
        filled = int(WIDTH * self.done / self.total)
        bar = "#" * filled + "-" * (WIDTH - filled)
        elapsed = time.perf_counter() - self.started
        text = f"{self.title} [{bar}] {self.done}/{self.total} {elapsed:5.1f}s  {label}"
        if self.interactive:
            self.stream.write("\r\033[K" + text)
        else:
            self.stream.write(text + "\n")
        self.stream.flush()
        self.done = min(self.done + 1, self.total)

    def close(self, summary: str = "") -> None:
        if not self.enabled:
            return
        elapsed = time.perf_counter() - self.started
        text = f"{self.title} [{'#' * WIDTH}] done in {elapsed:.1f}s" + (f"  {summary}" if summary else "")
        self.stream.write(("\r\033[K" if self.interactive else "") + text + "\n")
        self.stream.flush()
