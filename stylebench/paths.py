"""Where stylebench keeps things outside a run folder, and what identifies a checkout.

One cache root for every cache (dialogue sets, judge verdicts, offline models):
``$STYLEBENCH_CACHE`` when set, else ``~/.cache/stylebench``.
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path


def cache_root() -> Path:
    """The cache root: ``$STYLEBENCH_CACHE`` if set, else ``~/.cache/stylebench``."""
    env = os.environ.get("STYLEBENCH_CACHE")
    return Path(env).expanduser() if env else Path.home() / ".cache" / "stylebench"


def git_revision(folder: Path | str | None) -> str:
    """The git commit of the checkout holding ``folder`` (``+dirty`` when tracked files are
    modified), or ``"unknown"`` when there is none or git is missing."""
    if folder is None:
        return "unknown"

    def git(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            ["git", "-C", str(folder), *args],
            capture_output=True,
            text=True,
            timeout=5,
            check=False,
        )

    try:
        head = git("rev-parse", "HEAD")
        dirty = git("status", "--porcelain", "--untracked-files=no")
    except (OSError, subprocess.TimeoutExpired):
        return "unknown"
    rev = head.stdout.strip()
    if head.returncode != 0 or not rev:
        return "unknown"
    return rev + ("+dirty" if dirty.stdout.strip() else "")


def named_file(path: Path | str, what: str) -> Path:
    """The file a user named, checked to be one: ``what`` names it as the message should
    (``"config file"``, ``"--judge-prompt-srd"``).

    Raises:
        BadValue: the path is a folder (a folder is not "missing").
        MissingFile: nothing is there.
    """
    from stylebench.errors import BadValue, MissingFile

    p = Path(path)
    if p.is_dir():
        raise BadValue(f"{what} {p} is a folder, not a file; name the file in it")
    if not p.is_file():
        raise MissingFile(f"{what} {p} does not exist")
    return p
