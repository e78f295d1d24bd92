"""A dependency-free progress bar for long work (bootstrap, runner, site build)."""

from __future__ import annotations

import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from typing import TextIO

_silenced = 0
"""How many :func:`silenced` blocks are open: while any is, no bar is drawn."""


@contextmanager
def silenced() -> Iterator[None]:
    """No progress bar is drawn inside this block, whoever draws it (``--quiet``: the
    tournament's bar and the Elo bootstrap's under it)."""
    global _silenced
    _silenced += 1
    try:
        yield
    finally:
        _silenced -= 1


class Progress:
    """Prints ``label [#####.....] k/n  elapsed`` to stderr, at most ~10 times a second;
    with ``eta=True`` also the estimated time left, and after it the ``status`` text last
    given to :meth:`update` (the tournament's table and model running).

    The bar is drawn only on a terminal, never into a log file or a pipe (its ``\r``
    redraws would litter them). ``enabled=False`` turns it off even there (callers pass
    False for work too short to need a bar); None or True leave it to the terminal test.
    """

    def __init__(self, total: int, label: str, enabled: bool | None = None,
                 stream: TextIO | None = None, eta: bool = False) -> None:
        self.total = max(int(total), 1)
        self.eta = eta
        self.status = ""
        self._width = 0
        self.label = label
        self.stream = stream or sys.stderr
        self.enabled = enabled is not False and not _silenced and _is_terminal(self.stream)
        self.done = 0
        self._start = time.perf_counter()
        self._last = 0.0

    def update(self, n: int = 1, status: str | None = None) -> None:
        self.done = min(self.done + n, self.total)
        if status is not None:
            self.status = status
        now = time.perf_counter()
        if self.enabled and (now - self._last > 0.1 or self.done == self.total):
            self._last = now
            width = 30
            filled = int(width * self.done / self.total)
            bar = "#" * filled + "." * (width - filled)
            elapsed = now - self._start
            text = f"\r{self.label} [{bar}] {self.done}/{self.total} {elapsed:6.1f}s"
            if self.eta:
                text += f"  ETA {eta_text(elapsed, self.done, self.total)}"
            if self.status and self.done < self.total:
                text += f"  {self.status}"
            self.stream.write(text.ljust(self._width))
            self._width = len(text)
            if self.done == self.total:
                self.stream.write("\n")
            self.stream.flush()

    def __enter__(self) -> Progress:
        return self

    def __exit__(self, *exc: object) -> None:
        if self.enabled and self.done < self.total:
            self.stream.write("\n")
            self.stream.flush()


def eta_text(elapsed: float, done: int, total: int) -> str:
    """The time left at the pace so far, as ``m:ss`` (``h:mm:ss`` from an hour; ``?``
    before the first item is done)."""
    if done <= 0:
        return "?"
    left = int(round(elapsed / done * (total - done)))
    hours, rest = divmod(left, 3600)
    return (f"{hours}:{rest // 60:02d}:{rest % 60:02d}" if hours
            else f"{rest // 60}:{rest % 60:02d}")


def _is_terminal(stream: TextIO) -> bool:
    isatty = getattr(stream, "isatty", None)
    return bool(isatty and isatty())
