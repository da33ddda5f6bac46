"""Files a cache keeps in the cache root: a size bound read from the environment, the least
recently used files removed first, each file written whole.

The renderings of the synthesisers (``synth/renderings.py``) and the scores a comparison keeps
(``compare/kept.py``) are both caches of this kind: a file there is only ever a copy of something
that can be computed again, so a disk that cannot take one costs only the reuse, and a file
that is not whole is computed again rather than trusted.
"""

from __future__ import annotations

import contextlib
import os
import platform
import threading
from collections.abc import Callable, Iterable
from functools import lru_cache
from pathlib import Path
from typing import BinaryIO


def megabytes_from_env(var: str, default_mb: int, what: str) -> int:
    """The bound in bytes that ``var`` sets (megabytes; ``default_mb`` when unset, 0: off).

    Raises:
        BadValue: not a number, or negative; ``what`` names what 0 turns off.
    """
    from stylebench.errors import BadValue

    raw = os.environ.get(var, "").strip()
    if not raw:
        return default_mb * 1024 * 1024
    try:
        mb = float(raw)
    except ValueError:
        raise BadValue(
            f"{var} must be a number of megabytes (0 turns {what} off), got {raw!r}"
        ) from None
    if mb < 0:
        raise BadValue(f"{var} must be 0 or more, got {raw!r}")
    return int(mb * 1024 * 1024)


def write_whole(path: Path, write: Callable[[BinaryIO], object]) -> bool:
    """Write ``path`` through a temporary file beside it, renamed into place: a reader sees no
    file or a whole one. Not flushed to disk (a cache file lost to a power cut is computed again).
    False when the disk would not take it; an error of ``write`` itself is raised. Either way no
    temporary file is left behind."""
    tmp = path.with_name(f".{path.name}.{os.getpid()}.{threading.get_ident()}.tmp")
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        with open(tmp, "wb") as fh:
            write(fh)
        os.replace(tmp, path)
    except OSError:
        with contextlib.suppress(OSError):
            tmp.unlink()
        return False
    except BaseException:  # ``write`` refused (or Ctrl-C): no partial file is left
        with contextlib.suppress(OSError):
            tmp.unlink()
        raise
    return True


def touch(path: Path) -> None:
    """Mark ``path`` as used now (pruned last)."""
    with contextlib.suppress(OSError):
        os.utime(path)


def prune_least_recent(paths: Iterable[str], limit_bytes: int) -> None:
    """Remove the least recently used (modified or :func:`touch`-ed) of ``paths`` while their
    sizes add up to more than ``limit_bytes``."""
    files: list[tuple[float, int, str]] = []
    total = 0
    for p in paths:
        try:
            st = os.stat(p)
        except OSError:
            continue
        files.append((st.st_mtime, st.st_size, p))
        total += st.st_size
    for _, size, p in sorted(files):
        if total <= limit_bytes:
            break
        with contextlib.suppress(OSError):
            os.unlink(p)
            total -= size


@lru_cache(maxsize=1)
def machine_identity() -> str:
    """The CPU a cache file's numbers may depend on: architecture, system and the instruction-set
    flags (numerical runtimes pick their kernels by them), so a cache root shared between
    machines (a home folder on a cluster's network disk) never hands one machine's numbers to
    another."""
    parts = [platform.machine(), platform.system()]
    with contextlib.suppress(OSError):
        for line in (
            Path("/proc/cpuinfo").read_text(encoding="utf-8", errors="replace").splitlines()
        ):
            if line.startswith(("flags", "Features", "isa")):  # x86, arm, risc-v
                parts.append(line.split(":", 1)[-1].strip())
                break
    return "\0".join(parts)
