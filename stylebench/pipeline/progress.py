"""How far a long loop has got: units done of the total, and the time left.

The stage loop (:func:`stylebench.pipeline.stage.run_stage`) opens one bar per stage through
:func:`open_bar`; whoever calls it decides how progress is shown by what it passes:

- ``True``: a tqdm bar on standard error (what ``stylebench run`` always showed);
- ``False`` / ``None``: nothing;
- a :class:`Progress` object, e.g. :func:`reporter`: a tqdm bar on a terminal, and in a log (standard
  error not a terminal: ``make setup`` piped to a file, a batch job) plain lines instead of a
  redrawn bar: one when the stage starts, one at most every ``every_s`` seconds, one when it ends.

The time left is estimated from the units computed by this process only: units found done (a
resumed build or run) count towards the total but not towards the rate.
"""

from __future__ import annotations

import sys
import time
from typing import IO, Any, Protocol


class Bar(Protocol):
    """One stage's progress (a tqdm bar satisfies it)."""

    def update(self, n: int = 1) -> None: ...

    def close(self) -> None: ...


class Progress(Protocol):
    """Makes the bar of each stage."""

    def bar(self, name: str, total: int, unit: str, done: int = 0) -> Bar:
        """A bar of ``total`` units named ``name``, ``done`` of them found done already."""
        ...


class _NoBar:
    def update(self, n: int = 1) -> None:
        pass

    def close(self) -> None:
        pass


def duration(seconds: float) -> str:
    """``3h05m``, ``4m10s``, ``12s``: a time left or taken, to the precision that matters."""
    s = int(round(seconds))
    if s >= 3600:
        return f"{s // 3600}h{s % 3600 // 60:02d}m"
    if s >= 60:
        return f"{s // 60}m{s % 60:02d}s"
    return f"{s}s"


class LogBar:
    """Progress as plain lines: ``turns: 1200/43200 turns (2.8%), 0.91 turns/s, 12h49m left``."""

    def __init__(
        self,
        name: str,
        total: int,
        unit: str,
        done: int,
        *,
        stream: IO[str],
        every_s: float,
        clock: Any = time.monotonic,
    ) -> None:
        self.name, self.total, self.unit, self.stream = name, total, unit, stream
        self.every_s, self.clock = every_s, clock
        self.start_done = self.done = done
        self.t0 = self.last = clock()
        resumed = f" ({done} done before)" if done else ""
        self._line(f"{name}: {done}/{total} {unit}s{resumed}")

    def _line(self, text: str) -> None:
        self.stream.write(text + "\n")
        self.stream.flush()

    def status(self) -> str:
        """Done / total, share, rate and time left (the rate of this process's units only)."""
        pct = 100.0 * self.done / self.total if self.total else 100.0
        out = f"{self.name}: {self.done}/{self.total} {self.unit}s ({pct:.1f}%)"
        computed, took = self.done - self.start_done, self.clock() - self.t0
        if computed > 0 and took > 0:
            rate = computed / took
            out += f", {rate:.3g} {self.unit}s/s"
            if self.done < self.total:
                out += f", {duration((self.total - self.done) / rate)} left"
        return out

    def update(self, n: int = 1) -> None:
        self.done += n
        now = self.clock()
        if now - self.last >= self.every_s and self.done < self.total:
            self.last = now
            self._line(self.status())

    def close(self) -> None:
        computed = self.done - self.start_done
        self._line(
            f"{self.name}: {self.done}/{self.total} {self.unit}s, {computed} computed in "
            f"{duration(self.clock() - self.t0)}"
        )


class Reporter:
    """A :class:`Progress` that draws a tqdm bar on a terminal and writes :class:`LogBar` lines
    elsewhere (``every_s``: the most seconds between two lines)."""

    def __init__(self, stream: IO[str] | None = None, *, every_s: float = 60.0) -> None:
        self.stream = stream or sys.stderr
        self.every_s = every_s

    def bar(self, name: str, total: int, unit: str, done: int = 0) -> Bar:
        isatty = getattr(self.stream, "isatty", None)
        if isatty is not None and isatty():
            return _tqdm(name, total, unit, done, self.stream)
        return LogBar(name, total, unit, done, stream=self.stream, every_s=self.every_s)


def reporter(stream: IO[str] | None = None, *, every_s: float = 60.0) -> Progress:
    """Progress on ``stream`` (default standard error): a bar on a terminal, lines in a log."""
    return Reporter(stream, every_s=every_s)


def _tqdm(name: str, total: int, unit: str, done: int, stream: IO[str] | None = None) -> Bar:
    from tqdm import tqdm

    # initial=: units found done are shown as done but do not make the rate (and so the time
    # left) look faster than the units computed here
    return tqdm(total=total, initial=done, desc=name, unit=unit, file=stream)


def open_bar(
    progress: bool | Progress | None, name: str, total: int, unit: str, done: int = 0
) -> Bar:
    """The bar ``progress`` asks for (see the module docstring)."""
    if progress is None or progress is False:
        return _NoBar()
    if progress is True:
        return _tqdm(name, total, unit, done)
    return progress.bar(name, total, unit, done)
