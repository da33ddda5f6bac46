"""Run a model wrapper in its own Python environment, behind the same ``SpeechModel`` interface.

Speech LMs pin conflicting dependencies, so a model may live in a separate virtualenv. The runner
then builds a :class:`WorkerModel` (``stylebench run --worker-python /env/bin/python``), which
starts ``python -m stylebench.model_wrappers.worker.main`` in that environment and speaks the
JSON-lines protocol of :mod:`.protocol` with it. Only real wrappers run there: the embedded
calibration models (:class:`~stylebench.model_wrappers.base.ScriptedModel`) run in process only,
and the protocol has no field for the dialogue's answer key. The worker environment needs stylebench
itself (``pip install -e /path/to/stylebench --no-deps``) plus the model's own packages.

Failure handling, all turned into exceptions the respond stage records as error records:

- the model raises: the worker reports it and stays up;
- the worker dies (crash, OOM kill) or does not answer within ``turn_timeout_s``: it is killed
  (with its process group) and a fresh worker with the same init starts on the next call;
- the worker fails to start ``max_failed_starts`` times in a row: every later call fails at once.

The worker's stderr (and anything its libraries print) goes to ``log_path``; the last lines of it
are quoted in every error message. Starting, talking to and stopping one worker process is
:mod:`.process`; this module decides when to start one and what its failures mean.
"""

from __future__ import annotations

import os
import subprocess
import threading
import weakref
from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

import stylebench.model_wrappers.worker.protocol as wp
from stylebench.errors import BadValue, MissingFile
from stylebench.model_wrappers.base import SpeechModel
from stylebench.model_wrappers.worker.process import (
    INSTALL_HINT,
    TAIL_LINES,
    WORKER_MODULE,
    CannotSpawn,
    WorkerError,
    WorkerProcess,
    WorkerStartError,
    kill,
)
from stylebench.records import DecodeConfig, Turn
from stylebench.registry import MissingExtraError

#: the stylebench.errors user errors a model class may raise while it loads (by name, as the
#: worker reports them)
USER_ERROR_TYPES = ("BadValue", "UnknownName", "MissingFile", "FileClash")


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
        check_python(python)
        self.name = model
        self.init = wp.Init(model, dict(model_args or {}))
        self.python = python
        self.turn_timeout_s = float(turn_timeout_s)
        self.start_timeout_s = float(start_timeout_s)
        if log_path is None:
            from stylebench.model_wrappers.common import scratch_wav

            log_path = scratch_wav("worker").with_suffix(".log")
        self.log_path = Path(log_path)
        self.max_failed_starts = max_failed_starts
        self.starts = 0
        self.failed_starts = 0
        self.ready: wp.Ready | None = None
        self._worker = WorkerProcess(python, self.log_path)
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
            proc = self._worker.proc
            if proc is None or proc.poll() is not None:
                if proc is not None:
                    self._worker.stop(f"worker pid {proc.pid} had exited")
                if self.failed_starts >= self.max_failed_starts:
                    raise WorkerError(
                        f"worker failed to start {self.failed_starts} times in a row; giving up "
                        f"(see {self.log_path})"
                    )
                self._start(first=False)
            request = wp.Respond(tuple(_absolute(t) for t in history), _absolute(user_turn), decode)
            msg = self._worker.exchange(request, self.turn_timeout_s, "answering a turn")
            if isinstance(msg, wp.Reply):
                return msg.turn
            if isinstance(msg, wp.Error):
                raise WorkerError(f"{msg.type}: {msg.message}{_tb_tail(msg.traceback)}")
            self._worker.stop("protocol error")
            raise WorkerError(f"worker sent {type(msg).__name__} instead of a reply")

    def decode_settings(self, decode: DecodeConfig) -> dict[str, Any] | None:
        """The worker model's answer; None when the worker cannot give one."""
        with self._lock:
            proc = self._worker.proc
            if proc is None or proc.poll() is not None:
                return None
            msg = self._worker.exchange(wp.Settings(decode), 60.0, "reporting decode settings")
        return msg.settings if isinstance(msg, wp.Settled) else None

    def close(self) -> None:
        """Ask the worker to exit; kill it if it does not within 10 s."""
        with self._lock:
            self._worker.close()

    # -- starting ----------------------------------------------------------------------------
    def _start(self, *, first: bool) -> None:
        self.starts += 1
        note = f"start #{self.starts}: {self.python} -m {WORKER_MODULE} ({self.init.model})"
        try:
            proc = self._worker.spawn(note)
        except CannotSpawn as exc:
            self.failed_starts += 1
            raise (WorkerStartError if first else WorkerError)(
                f"cannot start {self.python}: {exc}"
            ) from None
        weakref.finalize(self, kill, proc)
        try:
            msg = self._worker.exchange(self.init, self.start_timeout_s, "loading the model")
        except WorkerError as exc:
            self.failed_starts += 1
            if first:
                raise WorkerStartError(str(exc)) from None
            raise
        if isinstance(msg, wp.Ready) and msg.protocol == wp.PROTOCOL_VERSION:
            self.ready = msg
            self.failed_starts = 0
            self._worker.note(f"start #{self.starts}: ready, pid {msg.pid}")
            return
        self.failed_starts += 1
        self._worker.stop("failed to load the model")
        if isinstance(msg, wp.Error):
            text = f"{msg.message} [in worker {self.python}]"
            if first and msg.type in ("MissingExtraError", "ModuleNotFoundError", "ImportError"):
                raise MissingExtraError(text.splitlines()[0])
            user = ("ValueError", "TypeError", "KeyError", "FileNotFoundError", *USER_ERROR_TYPES)
            if first and msg.type in user:
                raise BadValue(f"worker could not load {self.init.model}: {text}")
            error = WorkerStartError if first else WorkerError
            raise error(
                f"loading {self.init.model} failed: {msg.type}: {text}{_tb_tail(msg.traceback)}"
            )
        raise WorkerStartError(f"worker answered init with {type(msg).__name__}")


def check_python(python: str) -> None:
    """``--worker-python`` must be an executable file (else a one-line user error)."""
    if not Path(python).is_file():
        raise MissingFile(f"--worker-python {python} does not exist (give the env's bin/python)")
    if not os.access(python, os.X_OK):
        raise BadValue(f"--worker-python {python} is not executable (give the env's bin/python)")


def _tb_tail(tb: str, n: int = 6) -> str:
    lines = [ln for ln in tb.splitlines() if ln.strip()]
    return ("\nworker traceback (last lines):\n  " + "\n  ".join(lines[-n:])) if lines else ""


def worker_statuses(python: str, timeout_s: float = 300.0) -> dict[str, tuple[str, str]]:
    """``{model: (status, detail)}`` for every registered model, as seen from ``python``'s env."""
    import json

    check_python(python)
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
