"""A dependency-free progress bar for long work (bootstrap, runner, site build)."""

from __future__ import annotations

import sys
import time
from typing import TextIO


class Progress:
    """Prints ``label [#####.....] k/n  elapsed`` to stderr, at most ~10 times a second.

    The bar is drawn only on a terminal, never into a log file or a pipe (its ``\r``
    redraws would litter them). ``enabled=False`` turns it off even there (callers pass
    False for work too short to need a bar); None or True leave it to the terminal test.
    """

    def __init__(self, total: int, label: str, enabled: bool | None = None,
                 stream: TextIO | None = None) -> None:
        self.total = max(int(total), 1)
        self.label = label
        self.stream = stream or sys.stderr
        self.enabled = enabled is not False and _is_terminal(self.stream)
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


def _is_terminal(stream: TextIO) -> bool:
    isatty = getattr(stream, "isatty", None)
    return bool(isatty and isatty())
