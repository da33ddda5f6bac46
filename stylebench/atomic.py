"""Whole-file writes that a crash, Ctrl-C or kill -9 cannot leave half done.

Every file stylebench replaces (a manifest, a report, a reply's audio, a comparison) is written
to a temporary file beside its destination, flushed to disk, then renamed over it: a reader sees
the old file or the new one, never a mix. Append-only stage records are not written here
(``stylebench.store`` appends and fsyncs line by line).
"""

from __future__ import annotations

import os
import tempfile
from collections.abc import Callable
from pathlib import Path


def _fsync_dir(folder: Path) -> None:
    """Make a rename in ``folder`` durable (POSIX); a no-op where folders cannot be opened."""
    try:
        fd = os.open(folder, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


def replace_with(path: str | Path, write: Callable[[Path], object]) -> Path:
    """Make ``path`` by calling ``write(tmp)`` on a temporary file in the same folder, flushing
    it to disk and renaming it over ``path``.

    ``write`` may raise to refuse the result (a checksum that does not match): the temporary
    file is then removed and ``path`` is left as it was. Each call has its own temporary file,
    so two processes or threads writing the same file never write into each other's; the last
    rename wins.

    Returns:
        ``path`` as a :class:`~pathlib.Path`.
    """
    dest = Path(path)
    dest.parent.mkdir(parents=True, exist_ok=True)
    fd, name = tempfile.mkstemp(dir=dest.parent, prefix=f".{dest.name}.", suffix=".part")
    os.close(fd)
    tmp = Path(name)
    try:
        write(tmp)
        with open(tmp, "rb") as fh:
            os.fsync(fh.fileno())
        os.replace(tmp, dest)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
    _fsync_dir(dest.parent)
    return dest


def write_text(path: str | Path, text: str) -> Path:
    """Replace ``path`` with ``text`` (UTF-8), atomically (:func:`replace_with`)."""
    return replace_with(path, lambda tmp: tmp.write_text(text, encoding="utf-8"))


def write_bytes(path: str | Path, data: bytes) -> Path:
    """Replace ``path`` with ``data``, atomically (:func:`replace_with`)."""
    return replace_with(path, lambda tmp: tmp.write_bytes(data))
