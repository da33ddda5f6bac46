"""A compared run's scores kept in the cache root: a later comparison reads them, not the records.

Reading a paper-size run (43.2K replies) means decoding, validating and scoring some 200K records
(about 25 s); a comparison reads ten runs and three calibration rows, and the same runs are
compared again whenever a model is added. What a comparison keeps of a run (:func:`.load.compact`:
its scores and the records its pages show, and the count a resume would compute) is a function of

- the run's files that scoring reads: ``manifest.json``, each stage's records (``*.jsonl``; not
  ``timings.jsonl``, which scoring never reads), the imported listening tests
  (``ratings_summary.json``, ``ratings/``), each by the SHA-256 of its bytes (about 0.2 s for
  a paper-size run's records: a name that no timestamp's resolution can fool);
- the run folder (resolved) and the dialogue set's checksum and selected samples, as
  :func:`~stylebench.commands.runs.open_stored` found them;
- the program: the bytes of every file of the stylebench package (all its folders), the Python,
  numpy and scipy versions, and the CPU (architecture and instruction-set flags: a cache root
  on a network disk is read by other machines).

A copy is named by the SHA-256 of all of it, so one that would differ in any of them is never
read: the scores are computed from the records and kept again. A copy read back gives the same
objects that computing them gives (tested field by field, and ``compare``'s files byte for byte).

The copies are pickles, written only by this program into the user's own cache root (like the
installed code, trusted) and never into or from a run folder (which may come from anyone).
A copy starts with a header naming its key and is read only when the header matches; one that
cannot be read is computed again and replaced. ``STYLEBENCH_COMPARE_KEPT_MB`` bounds the folder
(default 4096: ten paper-size runs and the calibration rows; the least recently used copies go
first); ``0`` turns keeping off.
"""

from __future__ import annotations

import contextlib
import gc
import hashlib
import io
import logging
import os
import pickle
import sys
from collections.abc import Callable
from functools import lru_cache
from pathlib import Path
from typing import Any, BinaryIO

from stylebench.cache_files import (
    machine_identity,
    megabytes_from_env,
    prune_least_recent,
    touch,
    write_whole,
)

log = logging.getLogger(__name__)

#: the copies' format; a change of what is pickled or how changes it
FORMAT = b"stylebench-compare-kept/1"
#: the default bound of the folder, in MiB
DISK_MB = 4096
#: the run folder's files that scoring reads, besides ``*.jsonl`` (less these) and ``ratings/``
RUN_FILES = ("manifest.json", "ratings_summary.json")
NOT_READ = frozenset({"timings.jsonl"})
#: the package folders whose bytes name a copy (``pyproject.toml``'s package-dir)
PACKAGES = (
    "stylebench",
    "stylebench.metrics",
    "stylebench.synth",
    "stylebench.dialogues",
    "stylebench.model_wrappers",
)


def limit_bytes() -> int:
    """The folder's bound from ``STYLEBENCH_COMPARE_KEPT_MB`` (0: nothing kept).

    Raises:
        ValueError: not a number of megabytes, or negative.
    """
    return megabytes_from_env("STYLEBENCH_COMPARE_KEPT_MB", DISK_MB, "the kept comparison scores")


def folder() -> Path:
    from stylebench.paths import cache_root

    return cache_root() / "compare-kept"


def package_folders() -> list[Path]:
    """The folders of the installed stylebench packages (resolved, each once)."""
    import importlib.util

    out: list[Path] = []
    for name in PACKAGES:
        spec = importlib.util.find_spec(name)
        for where in (spec.submodule_search_locations or []) if spec else []:
            top = Path(where).resolve()
            if top not in out:
                out.append(top)
    return out


def tree_digest(folders: list[Path]) -> str:
    """SHA-256 of the names and bytes of every file under ``folders`` (not ``__pycache__``)."""
    h = hashlib.sha256()
    for top in folders:
        h.update(f"{top.name}\0".encode())
        for path in sorted(top.rglob("*")):
            if "__pycache__" in path.parts or not path.is_file():
                continue
            h.update(f"{path.relative_to(top).as_posix()}\0".encode())
            h.update(path.read_bytes() + b"\0")
    return h.hexdigest()


@lru_cache(maxsize=1)
def program_digest() -> str:
    """SHA-256 of every file of the installed stylebench packages, the versions scoring runs on
    and the CPU (:func:`~stylebench.cache_files.machine_identity`)."""
    from importlib.metadata import PackageNotFoundError, version

    h = hashlib.sha256(tree_digest(package_folders()).encode())
    h.update(f"python {sys.version}\0".encode())
    h.update(machine_identity().encode() + b"\0")
    for pkg in ("numpy", "scipy"):
        try:
            h.update(f"{pkg} {version(pkg)}\0".encode())
        except PackageNotFoundError:
            h.update(f"{pkg} missing\0".encode())
    return h.hexdigest()


def _digest(path: Path) -> str | None:
    try:
        with open(path, "rb") as fh:
            return hashlib.file_digest(fh, "sha256").hexdigest()
    except OSError:
        return None


def run_files(root: Path) -> list[tuple[str, str | None]]:
    """The run folder's files that scoring reads, each with the SHA-256 of its bytes (None:
    absent)."""
    names = set(RUN_FILES)
    with contextlib.suppress(OSError):
        names |= {
            e.name
            for e in os.scandir(root)
            if e.name.endswith(".jsonl") and e.name not in NOT_READ and e.is_file()
        }
    ratings = root / "ratings"
    if ratings.is_dir():
        names |= {p.relative_to(root).as_posix() for p in ratings.rglob("*") if p.is_file()}
    return [(n, _digest(root / n)) for n in sorted(names)]


def key(run: Any) -> str:
    """The name of what :func:`~stylebench.compare.load.load_run` computes of the opened run
    ``run`` (a :class:`~stylebench.commands.runs.StoredRun`): taken before its records are read,
    so a record appended meanwhile makes the copy written now one that is never read."""
    root = Path(run.store.root).resolve()
    parts = (
        FORMAT.decode(),
        program_digest(),
        str(root),
        str(run.store.root),  # as given: the scores hold it
        run.checksum,
        str(Path(run.set_root).resolve()) if run.set_root is not None else "",
        tuple(s.id for s in run.samples),  # a sample is a function of the set's bytes
        tuple(run_files(root)),
    )
    return hashlib.sha256(repr(parts).encode("utf-8")).hexdigest()


# -- pickling --------------------------------------------------------------------------------


class _Pickler(pickle.Pickler):
    """Pickles a kept run with the run's manifest, config and samples as references to those the
    opened run holds (shared with the other runs of the set, and current). The records pickle as
    any dataclass does; read back, each is laid out as one its class builds (tested): pickle
    fills the new instance's own dict in field order."""

    def __init__(self, fh: io.BufferedWriter, refs: dict[int, str]) -> None:
        super().__init__(fh, protocol=pickle.HIGHEST_PROTOCOL)
        self._refs = refs

    def persistent_id(self, obj: Any) -> str | None:
        return self._refs.get(id(obj))


class _Unpickler(pickle.Unpickler):
    def __init__(self, fh: io.BufferedReader, objects: dict[str, Any]) -> None:
        super().__init__(fh)
        self._objects = objects

    def persistent_load(self, pid: Any) -> Any:
        try:
            return self._objects[pid]
        except (KeyError, TypeError):
            raise pickle.UnpicklingError(f"unknown reference {pid!r}") from None


def _refs(run: Any) -> dict[str, Any]:
    out: dict[str, Any] = {"manifest": run.manifest, "cfg": run.cfg}
    for s in run.samples:
        out[f"sample:{s.id}"] = s
    return out


# -- the folder --------------------------------------------------------------------------------


class KeptScores:
    """The kept copies in one folder (:func:`open_kept`)."""

    def __init__(self, where: Path, limit: int) -> None:
        self.folder = where
        self.limit = limit

    def path(self, name: str) -> Path:
        return self.folder / f"{name}.pickle"

    def read(self, name: str, run: Any) -> tuple[Any, int] | None:
        """``(compact scored run, pending)`` kept under ``name``, or None."""
        path = self.path(name)
        try:
            with open(path, "rb") as fh:
                header = fh.readline()
                if header != FORMAT + b" " + name.encode() + b"\n":
                    return None
                enabled = gc.isenabled()
                gc.disable()  # a copy is one tree of objects, none of them garbage
                try:
                    scored, pending = _Unpickler(fh, _refs(run)).load()
                finally:
                    if enabled:
                        gc.enable()
        except (
            pickle.UnpicklingError,
            OSError,
            EOFError,
            ValueError,
            TypeError,
            AttributeError,
            ImportError,
            IndexError,
            KeyError,
        ):  # what a damaged pickle raises: not read
            return None
        touch(path)  # recently used: pruned last
        return scored, pending

    def write(self, name: str, run: Any, scored: Any, pending: int) -> None:
        """Keep ``(scored, pending)`` under ``name``; a disk that cannot take it costs only the
        reuse."""
        refs = {id(v): k for k, v in _refs(run).items()}

        def dump(fh: BinaryIO) -> None:
            fh.write(FORMAT + b" " + name.encode() + b"\n")
            _Pickler(fh, refs).dump((scored, pending))

        try:
            written = write_whole(self.path(name), dump)
        except (pickle.PicklingError, TypeError, AttributeError):
            return  # something of the run that does not pickle: read from the records each time
        if written:
            self.prune()

    def prune(self) -> None:
        """Remove the least recently used copies while the folder is over its bound."""
        try:
            paths = [e.path for e in os.scandir(self.folder) if e.name.endswith(".pickle")]
        except OSError:
            return
        prune_least_recent(paths, self.limit)


def open_kept() -> KeptScores | None:
    """The kept copies as the environment sets them, or None (``STYLEBENCH_COMPARE_KEPT_MB=0``)."""
    limit = limit_bytes()
    return KeptScores(folder(), limit) if limit else None


def kept_or_computed(run: Any, compute: Callable[[], tuple[Any, int]]) -> tuple[Any, int]:
    """``compute()`` of the opened run ``run``, read from its kept copy when there is a current one,
    else computed and kept."""
    kept = open_kept()
    if kept is None:
        return compute()
    name = key(run)
    got = kept.read(name, run)
    if got is not None:
        return got
    scored, pending = compute()
    kept.write(name, run, scored, pending)
    return scored, pending


# -- reading many runs at once -----------------------------------------------------------------

#: at most this many worker processes read runs at once (each holds one run's records whole
#: while it scores them: about 1.5 GB at paper size)
MAX_WORKERS = 4
#: workers read the runs only when their records add up to this many bytes: a worker takes about
#: 2 s to start (Python and stylebench imported again), and a MB of records about 0.13 s to read
#: (a paper-size run holds 170 MB); the demo's three rows (under 1 MB each) are read here
PARALLEL_MIN_BYTES = 32 * 1024 * 1024


def keep_in_parallel(
    run_dirs: list[Path],
    compute: Callable[[Any], tuple[Any, int]],
    workers: int | None = None,
    min_bytes: int | None = None,
) -> int:
    """Read, score (``compute`` of the opened run: :func:`.load.computed_scores`, a function a
    worker can import) and keep the runs of ``run_dirs`` that have no current kept copy, in up to
    ``workers`` processes at once (default: the CPUs this process may use, at most
    :data:`MAX_WORKERS`); the caller then reads every run from its copy (:func:`load_run`).
    A comparison's runs are independent, and reading one is CPU-bound Python: on 2 cores two
    runs are read in the time of one. Returns how many runs were handed to workers.

    Nothing here raises for a run: one that cannot be read is left without a copy, and the
    caller's own read of it says why. Keeping off, one CPU, fewer than two runs to read or
    records under ``min_bytes`` in all (default :data:`PARALLEL_MIN_BYTES`): 0.
    """
    from stylebench.commands.runs import open_stored
    from stylebench.errors import UserError

    kept = open_kept()
    if workers is None:
        workers = min(
            len(os.sched_getaffinity(0))
            if hasattr(os, "sched_getaffinity")
            else (os.cpu_count() or 1),
            MAX_WORKERS,
        )
    if kept is None or workers < 2:
        return 0
    todo: dict[str, str] = {}  # run folder -> the name its copy gets
    size = 0
    for d in run_dirs:
        try:
            name = key(open_stored(d))
        except (UserError, OSError, ValueError):  # the caller's own read says what is wrong
            continue
        if not kept.path(name).is_file():
            todo[str(d)] = name
            size += _records_bytes(Path(d))
    workers = min(workers, len(todo))
    if workers < 2 or size < (PARALLEL_MIN_BYTES if min_bytes is None else min_bytes):
        return 0
    import multiprocessing
    from concurrent.futures import ProcessPoolExecutor
    from concurrent.futures.process import BrokenProcessPool

    # spawned, not forked: a fork of a process whose numerical libraries started threads can
    # hang in the child
    ctx = multiprocessing.get_context("spawn")
    n = len(todo)
    try:
        with ProcessPoolExecutor(workers, mp_context=ctx) as pool:
            for _ in pool.map(
                _keep_one,
                todo,
                todo.values(),
                [compute] * n,
                [str(kept.folder)] * n,
                [kept.limit] * n,
            ):
                pass
    except (BrokenProcessPool, OSError) as exc:
        log.warning(
            "a worker reading runs ahead of the comparison stopped (%s: %s); the comparison "
            "reads the runs it did not keep itself, one after the other",
            type(exc).__name__,
            exc,
        )
    return n


def _records_bytes(root: Path) -> int:
    total = 0
    with contextlib.suppress(OSError):
        for e in os.scandir(root):
            if e.name.endswith(".jsonl") and e.name not in NOT_READ and e.is_file():
                total += e.stat().st_size
    return total


def _keep_one(
    run_dir: str, name: str, compute: Callable[[Any], tuple[Any, int]], where: str, limit: int
) -> None:
    """In a worker: keep ``run_dir``'s copy in ``where`` under ``name`` (the caller named it
    before any record was read, so a record appended meanwhile leaves a copy never read); a run
    that cannot be read is left to the caller, whose own read says why."""
    from stylebench.commands.runs import open_stored
    from stylebench.errors import UserError

    try:
        run = open_stored(run_dir)
        scored, pending = compute(run)
    except (UserError, OSError, ValueError):
        return
    KeptScores(Path(where), limit).write(name, run, scored, pending)
