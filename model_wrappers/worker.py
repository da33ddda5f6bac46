"""Run a model wrapper in its own Python environment, behind the same ``SpeechModel`` interface.

Speech LMs pin conflicting dependencies, so a model may live in a separate virtualenv. The runner
then builds a :class:`WorkerModel` (``stylebench run --worker-python /env/bin/python``), which
starts ``python -m stylebench.model_wrappers.worker_main`` in that environment and speaks the
JSON-lines protocol of :mod:`worker_protocol` with it. The worker environment needs stylebench
itself (``pip install -e /path/to/stylebench --no-deps``) plus the model's own packages.

Failure handling, all turned into exceptions the respond stage records as error records:

- the model raises: the worker reports it and stays up;
- the worker dies (crash, OOM kill) or does not answer within ``turn_timeout_s``: it is killed
  (with its process group) and a fresh worker with the same init starts on the next call;
- the worker fails to start ``max_failed_starts`` times in a row: every later call fails at once.

The worker's stderr (and anything its libraries print) goes to ``log_path``; the last lines of it
are quoted in every error message.
"""

from __future__ import annotations

import datetime as dt
import logging
import os
import select
import signal
import subprocess
import threading
import time
import weakref
from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

from stylebench.model_wrappers import worker_protocol as wp
from stylebench.model_wrappers.base import SpeechModel
from stylebench.records import DecodeConfig, Turn
from stylebench.registry import MissingExtraError

log = logging.getLogger(__name__)
WORKER_MODULE = "stylebench.model_wrappers.worker_main"
INSTALL_HINT = "pip install -e /path/to/stylebench --no-deps (see docs/models.md#worker)"
TAIL_LINES = 12


class WorkerError(RuntimeError):
    """The worker failed: the model raised, the process died, or it timed out."""


class WorkerTimeout(WorkerError):
    """The worker did not answer in time and was killed."""


class WorkerStartError(WorkerError):
    """The worker could not load the model when the run began (the run cannot go on)."""


def _kill(proc: subprocess.Popen) -> None:
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


def _absolute(turn: Turn) -> Turn:
    return replace(turn, audio=os.path.abspath(turn.audio)) if turn.audio else turn


class WorkerModel(SpeechModel):
    """A model served by a worker process in another Python environment."""

    def __init__(
        self,
        model: str,
        model_args: dict[str, str] | None = None,
        *,
        python: str,
        turn_timeout_s: float = 600.0,
        start_timeout_s: float = 1800.0,
        log_path: Path | str | None = None,
        max_failed_starts: int = 3,
    ) -> None:
        """Start the worker and load the model (errors surface here, before any turn).

        Args:
            model: registry name, or ``module:Class`` importable in the worker environment.
            model_args: keyword arguments for the wrapper, as on the command line.
            python: the worker environment's interpreter.
            turn_timeout_s: seconds one ``respond`` may take before the worker is killed.
            start_timeout_s: seconds loading the model may take.
            log_path: file that receives the worker's stderr (appended); default a scratch file.
            max_failed_starts: consecutive failed starts after which calls fail without retrying.
        """
        if not Path(python).is_file():
            raise FileNotFoundError(f"--worker-python {python} does not exist")
        self.name = model
        self.init = wp.Init(model, dict(model_args or {}))
        self.python = python
        self.turn_timeout_s = float(turn_timeout_s)
        self.start_timeout_s = float(start_timeout_s)
        if log_path is None:
            from stylebench.model_wrappers._common import scratch_wav

            log_path = scratch_wav("worker").with_suffix(".log")
        self.log_path = Path(log_path)
        self.max_failed_starts = max_failed_starts
        self.starts = 0
        self.failed_starts = 0
        self.ready: wp.Ready | None = None
        self._proc: subprocess.Popen | None = None
        self._buf = b""
        self._log_offset = 0
        self._lock = threading.Lock()
        self._start(first=True)

    # -- SpeechModel -----------------------------------------------------------------------
    def describe(self) -> dict[str, Any]:
        """The worker model's own description plus where it ran (``worker``)."""
        assert self.ready is not None
        worker = {
            "python": self.python,
            "python_version": self.ready.python_version,
            "stylebench": self.ready.stylebench,
        }
        return {**self.ready.describe, "worker": worker}

    def respond(self, history: Sequence[Turn], user_turn: Turn, decode: DecodeConfig) -> Turn:
        with self._lock:
            if self._proc is None or self._proc.poll() is not None:
                if self._proc is not None:
                    self._stop(f"worker pid {self._proc.pid} had exited")
                if self.failed_starts >= self.max_failed_starts:
                    raise WorkerError(
                        f"worker failed to start {self.failed_starts} times in a row; giving up "
                        f"(see {self.log_path})"
                    )
                self._start(first=False)
            request = wp.Respond(tuple(_absolute(t) for t in history), _absolute(user_turn), decode)
            msg = self._exchange(request, self.turn_timeout_s, "answering a turn")
            if isinstance(msg, wp.Reply):
                return msg.turn
            if isinstance(msg, wp.Error):
                raise WorkerError(f"{msg.type}: {msg.message}{_tb_tail(msg.traceback)}")
            self._stop("protocol error")
            raise WorkerError(f"worker sent {type(msg).__name__} instead of a reply")

    def close(self) -> None:
        """Ask the worker to exit; kill it if it does not within 10 s."""
        with self._lock:
            proc, self._proc = self._proc, None
            if proc is None:
                return
            try:
                proc.stdin.write(wp.encode(wp.Shutdown()))
                proc.stdin.close()
                proc.wait(timeout=10)
            except (OSError, ValueError, subprocess.TimeoutExpired):
                _kill(proc)
            self._note(f"worker pid {proc.pid} closed (exit code {proc.returncode})")

    # -- process management -----------------------------------------------------------------
    def _start(self, *, first: bool) -> None:
        self.starts += 1
        self.log_path.parent.mkdir(parents=True, exist_ok=True)
        self._note(f"start #{self.starts}: {self.python} -m {WORKER_MODULE} ({self.init.model})")
        self._log_offset = self.log_path.stat().st_size
        with open(self.log_path, "ab") as err:
            try:
                self._proc = subprocess.Popen(
                    [self.python, "-u", "-m", WORKER_MODULE],
                    stdin=subprocess.PIPE,
                    stdout=subprocess.PIPE,
                    stderr=err,
                    start_new_session=True,  # one process group: a kill takes its children too
                    close_fds=True,
                )
            except OSError as exc:
                self.failed_starts += 1
                raise (WorkerStartError if first else WorkerError)(
                    f"cannot start {self.python}: {exc}"
                ) from None
        self._buf = b""
        weakref.finalize(self, _kill, self._proc)
        try:
            msg = self._exchange(self.init, self.start_timeout_s, "loading the model")
        except WorkerError as exc:
            self.failed_starts += 1
            if first:
                raise WorkerStartError(str(exc)) from None
            raise
        if isinstance(msg, wp.Ready) and msg.protocol == wp.PROTOCOL_VERSION:
            self.ready = msg
            self.failed_starts = 0
            self._note(f"start #{self.starts}: ready, pid {msg.pid}")
            return
        self.failed_starts += 1
        self._stop("failed to load the model")
        if isinstance(msg, wp.Error):
            text = f"{msg.message} [in worker {self.python}]"
            if first and msg.type in ("MissingExtraError", "ModuleNotFoundError", "ImportError"):
                raise MissingExtraError(text.splitlines()[0])
            if first and msg.type in ("ValueError", "TypeError", "KeyError", "FileNotFoundError"):
                raise ValueError(f"worker could not load {self.init.model}: {text}")
            error = WorkerStartError if first else WorkerError
            raise error(
                f"loading {self.init.model} failed: {msg.type}: {text}{_tb_tail(msg.traceback)}"
            )
        raise WorkerStartError(f"worker answered init with {type(msg).__name__}")

    def _stop(self, why: str) -> None:
        proc, self._proc = self._proc, None
        if proc is not None:
            _kill(proc)
            self._note(f"worker pid {proc.pid} stopped ({why}; exit code {proc.returncode})")

    def _exchange(self, msg: Any, timeout_s: float, doing: str) -> Any:
        """Send ``msg`` and wait for one answer line; death and timeouts raise WorkerError."""
        proc = self._proc
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
                self._stop(f"no answer within {timeout_s:g} s while {doing}")
                raise WorkerTimeout(
                    f"worker pid {pid} gave no answer within {timeout_s:g} s while {doing}; "
                    f"killed, a fresh worker starts on the next call{self._tail()}"
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
                self._stop(f"closed its output while {doing}")
                tail = self._tail()
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
            self._stop("protocol error")
            raise WorkerError(f"{exc}{self._tail()}") from None

    # -- the log -----------------------------------------------------------------------------
    def _note(self, text: str) -> None:
        stamp = dt.datetime.now().isoformat(timespec="seconds")
        with open(self.log_path, "a", encoding="utf-8") as fh:
            fh.write(f"=== [stylebench {stamp}] {text}\n")

    def _tail(self) -> str:
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


def _tb_tail(tb: str, n: int = 6) -> str:
    lines = [ln for ln in tb.splitlines() if ln.strip()]
    return ("\nworker traceback (last lines):\n  " + "\n  ".join(lines[-n:])) if lines else ""


def worker_statuses(python: str, timeout_s: float = 300.0) -> dict[str, tuple[str, str]]:
    """``{model: (status, detail)}`` for every registered model, as seen from ``python``'s env."""
    import json

    if not Path(python).is_file():
        raise FileNotFoundError(f"--worker-python {python} does not exist")
    r = subprocess.run(
        [python, "-m", WORKER_MODULE, "--status"], capture_output=True, timeout=timeout_s
    )
    err = r.stderr.decode("utf-8", "replace")
    if "No module named 'stylebench'" in err:
        raise MissingExtraError(f"stylebench is not installed in {python}: {INSTALL_HINT}")
    lines = r.stdout.decode("utf-8", "replace").strip().splitlines()
    if r.returncode != 0 or not lines:
        tail = "\n  ".join(err.strip().splitlines()[-TAIL_LINES:])
        raise WorkerStartError(f"{python} -m {WORKER_MODULE} --status failed:\n  {tail}")
    return {name: (v[0], v[1]) for name, v in json.loads(lines[-1]).items()}
