"""``make setup``'s last step: the offline Whisper model and the default dialogue set.

The default set is built once and cached (``$STYLEBENCH_CACHE/dialogues``; a few minutes on 2
cores). Its build is the resumable turn loop of ``build-dialogues``
(:func:`stylebench.dialogues.builder.build_set`): every user turn synthesised and checked by
Whisper base (the intelligibility check), shown by :mod:`stylebench.pipeline.progress`:

- on a terminal (standard error is one), a bar: turns done / total, the rate and the time left;
- otherwise (a CI log, ``make setup > file``), one line when the build starts, one at most every
  ``--every`` seconds with the same figures, and one when it ends.

Every step also appends one line to the set-up log (``--log``, ``runs/setup.log`` from ``make``),
with the time: the model's folder, the build's start and end, and what it took. A set-up killed
during the build goes on where it stopped when run again.

    python scripts/setup_models.py --log runs/setup.log
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path
from typing import IO, Any


class SetupLog:
    """Lines for the set-up log, each with the time; echoed to ``echo`` when given."""

    def __init__(self, path: Path, echo: IO[str] | None = None) -> None:
        self.path, self.echo = path, echo
        path.parent.mkdir(parents=True, exist_ok=True)

    def __call__(self, text: str, *, echo: bool = True) -> None:
        with self.path.open("a", encoding="utf-8") as f:
            f.write(f"{time.strftime('%Y-%m-%d %H:%M:%S')} {text}\n")
        if echo and self.echo is not None:
            print(text, file=self.echo, flush=True)


class _LoggedBar:
    """A progress bar (:mod:`stylebench.pipeline.progress`) whose start and end also go to the
    set-up log."""

    def __init__(self, bar: Any, log: SetupLog, name: str, total: int, unit: str, done: int):
        self.bar, self.log, self.name, self.unit = bar, log, name, unit
        self.total, self.done, self.t0 = total, done, time.monotonic()
        before = f" ({done} done before)" if done else ""
        log(f"default set, {name}: {total} {unit}s to do{before}", echo=False)

    def update(self, n: int = 1) -> None:
        self.done += n
        self.bar.update(n)

    def close(self) -> None:
        self.bar.close()
        took = time.monotonic() - self.t0
        self.log(
            f"default set, {self.name}: {self.done}/{self.total} {self.unit}s in {took:.0f} s",
            echo=False,
        )


class SetupProgress:
    """What the set's build is shown through: the package's reporter (a bar on a terminal, lines
    in a log, on standard error), each stage's start and end logged."""

    def __init__(self, log: SetupLog, *, every_s: float, stream: IO[str] | None = None) -> None:
        from stylebench.pipeline.progress import reporter

        self.log, self.shown = log, reporter(stream, every_s=every_s)

    def bar(self, name: str, total: int, unit: str, done: int = 0) -> _LoggedBar:
        return _LoggedBar(
            self.shown.bar(name, total, unit, done), self.log, name, total, unit, done
        )


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
    log(f"default dialogue set ready: {path} ({time.monotonic() - t0:.0f} s)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
