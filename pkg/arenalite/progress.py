"""A dependency-free progress bar for long work (bootstrap, runner, site build)."""

from __future__ import annotations

import sys
import time
from typing import TextIO


class Progress:
    """Prints ``label [#####.....] k/n  elapsed`` to stderr, at most ~10 times a second.

    ``enabled=None`` shows the bar only when the stream is a terminal; pass True/False
    to force it (callers pass False for work too short to need a bar).
    """

    def __init__(self, total: int, label: str, enabled: bool | None = None,
                 stream: TextIO | None = None) -> None:
        self.total = max(int(total), 1)
        self.label = label
        self.stream = stream or sys.stderr
        self.enabled = self.stream.isatty() if enabled is None else enabled
        self.done = 0
        self._start = time.perf_counter()
        self._last = 0.0

    def update(self, n: int = 1) -> None:
        self.done = min(self.done + n, self.total)
        now = time.perf_counter()
        if self.enabled and (now - self._last > 0.1 or self.done == self.total):
            self._last = now
            width = 30
            filled = int(width * self.done / self.total)
            bar = "#" * filled + "." * (width - filled)
            self.stream.write(f"\r{self.label} [{bar}] {self.done}/{self.total} "
                              f"{now - self._start:6.1f}s")
            if self.done == self.total:
                self.stream.write("\n")
            self.stream.flush()

    def __enter__(self) -> Progress:
        return self

    def __exit__(self, *exc: object) -> None:
        if self.enabled and self.done < self.total:
            self.stream.write("\n")
            self.stream.flush()
