"""The errors a user can act on: the CLI prints their message (no traceback) and exits 2."""

from __future__ import annotations


def missing_tools() -> tuple[type[BaseException], ...]:
    """A missing extra, package or system tool: the message names what to install."""
    from stylebench.registry import MissingExtraError
    from stylebench.synth.ffmpeg import ToolMissingError

    return (MissingExtraError, ToolMissingError, ImportError)


def user_errors() -> tuple[type[BaseException], ...]:
    """Exception types whose message is the whole story for a user (imported on demand)."""
    from stylebench.metrics.judges.base import JudgeError
    from stylebench.model_wrappers.worker import WorkerStartError
    from stylebench.store import RunFolderBusy

    return (
        FileNotFoundError,
        FileExistsError,
        ValueError,
        KeyError,
        WorkerStartError,
        JudgeError,
        RunFolderBusy,
    )
