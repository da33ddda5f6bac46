"""One model-worker process: start it, exchange protocol lines with it, stop it; and its log.

:class:`~stylebench.model_wrappers.worker.model.WorkerModel` decides when a worker starts (again) and
what a failure means for the run; this module holds the mechanics it uses. A worker leads its
own process group, so killing it takes whatever it started too. Its stderr is appended to the log
file, between the runner's ``=== [stylebench ...]`` notes; the lines it wrote since it started
are quoted in error messages.
"""

from __future__ import annotations

import datetime as dt
import logging
import os
import select
import signal
import subprocess
import time
from pathlib import Path
from typing import Any

import stylebench.model_wrappers.worker.protocol as wp
from stylebench.errors import UserError
from stylebench.registry import MissingExtraError

log = logging.getLogger("stylebench.model_wrappers.worker")
WORKER_MODULE = "stylebench.model_wrappers.worker.main"
INSTALL_HINT = "pip install -e /path/to/stylebench --no-deps (see docs/models.md#worker)"
TAIL_LINES = 12


class WorkerError(RuntimeError):
    """The worker failed: the model raised, the process died, or it timed out."""


class WorkerTimeout(WorkerError):
    """The worker did not answer in time and was killed."""


class WorkerStartError(UserError, WorkerError):
    """The worker could not load the model when the run began (the run cannot go on)."""


class CannotSpawn(Exception):
    """The interpreter could not be started at all (its message is the OSError's)."""


def kill(proc: subprocess.Popen) -> None:
    """Kill the worker and everything it started (it leads its own process group)."""
    if proc.poll() is None:
        try:
            os.killpg(proc.pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            proc.kill()
    try:
        proc.wait(timeout=10)
    except subprocess.TimeoutExpired:
        log.warning("worker pid %s did not exit after SIGKILL", proc.pid)


class WorkerProcess:
    """The current worker process of ``python`` (``proc``, None when there is none) and its log."""

    def __init__(self, python: str, log_path: Path) -> None:
        self.python = python
        self.log_path = log_path
        self.proc: subprocess.Popen | None = None
        self._buf = b""
        self._log_offset = 0

    def spawn(self, note: str) -> subprocess.Popen:
        """Write ``note`` to the log, then start ``python -m WORKER_MODULE``.

        Raises:
            CannotSpawn: the interpreter could not be executed.
        """
        self.log_path.parent.mkdir(parents=True, exist_ok=True)
        self.note(note)
        self._log_offset = self.log_path.stat().st_size
        with open(self.log_path, "ab") as err:
            try:
                self.proc = subprocess.Popen(
                    [self.python, "-u", "-m", WORKER_MODULE],
                    stdin=subprocess.PIPE,
                    stdout=subprocess.PIPE,
                    stderr=err,
                    start_new_session=True,  # one process group: a kill takes its children too
                    close_fds=True,
                )
            except OSError as exc:
                raise CannotSpawn(str(exc)) from None
        self._buf = b""
        return self.proc

    def stop(self, why: str) -> None:
        """Kill the current worker, if any, and note why."""
        proc, self.proc = self.proc, None
        if proc is not None:
            kill(proc)
            self.note(f"worker pid {proc.pid} stopped ({why}; exit code {proc.returncode})")

    def close(self) -> None:
        """Ask the worker to exit; kill it if it does not within 10 s."""
        proc, self.proc = self.proc, None
        if proc is None:
            return
        try:
            proc.stdin.write(wp.encode(wp.Shutdown()))
            proc.stdin.close()
            proc.wait(timeout=10)
        except (OSError, ValueError, subprocess.TimeoutExpired):
            kill(proc)
        self.note(f"worker pid {proc.pid} closed (exit code {proc.returncode})")

    def exchange(self, msg: Any, timeout_s: float, doing: str) -> Any:
        """Send ``msg`` and wait for one answer line; death and timeouts raise WorkerError."""
        proc = self.proc
        assert proc is not None and proc.stdin is not None and proc.stdout is not None
        try:
            proc.stdin.write(wp.encode(msg))
            proc.stdin.flush()
        except (BrokenPipeError, OSError):
            pass  # it died; reading below reports how
        fd = proc.stdout.fileno()
        deadline = time.monotonic() + timeout_s
        while b"\n" not in self._buf:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                pid = proc.pid
                self.stop(f"no answer within {timeout_s:g} s while {doing}")
                raise WorkerTimeout(
                    f"worker pid {pid} gave no answer within {timeout_s:g} s while {doing}; "
                    f"killed, a fresh worker starts on the next call{self.tail()}"
                )
            ready, _, _ = select.select([fd], [], [], remaining)
            if not ready:
                continue
            chunk = os.read(fd, 1 << 16)
            if not chunk:
                try:
                    code = proc.wait(timeout=5)
                except subprocess.TimeoutExpired:
                    code = None
                pid = proc.pid
                self.stop(f"closed its output while {doing}")
                tail = self.tail()
                if "No module named 'stylebench'" in tail:
                    raise MissingExtraError(
                        f"stylebench is not installed in the worker env {self.python}: "
                        + INSTALL_HINT
                    )
                raise WorkerError(
                    f"worker pid {pid} exited (code {code}) while {doing}; "
                    f"a fresh worker starts on the next call{tail}"
                )
            self._buf += chunk
        line, self._buf = self._buf.split(b"\n", 1)
        try:
            return wp.decode(line)
        except ValueError as exc:
            self.stop("protocol error")
            raise WorkerError(f"{exc}{self.tail()}") from None

    # -- the log -----------------------------------------------------------------------------
    def note(self, text: str) -> None:
        stamp = dt.datetime.now().isoformat(timespec="seconds")
        with open(self.log_path, "a", encoding="utf-8") as fh:
            fh.write(f"=== [stylebench {stamp}] {text}\n")

    def tail(self) -> str:
        """The last stderr lines of the current worker, as a suffix for error messages."""
        try:
            with open(self.log_path, "rb") as fh:
                fh.seek(self._log_offset)
                text = fh.read().decode("utf-8", "replace")
        except OSError:
            return ""
        lines = [ln for ln in text.splitlines() if ln.strip() and not ln.startswith("=== [")]
        if not lines:
            return f" (worker stderr empty; log {self.log_path})"
        quoted = "\n  ".join(lines[-TAIL_LINES:])
        return f"\nlast worker stderr lines ({self.log_path}):\n  {quoted}"
