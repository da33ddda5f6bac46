"""The run folder: a manifest plus one append-only JSONL file per stage.

Layout of ``runs/<run_id>/``::

    manifest.json      resolved config, versions, git revision, dialogue-set checksum
    respond.jsonl      one record per (sample_id, turn) attempt, appended
    transcribe.jsonl   (and features, judge, probe: one file per stage)
    timings.jsonl      where each invocation's time went, per stage (never read by scoring)
    audio/             reply wavs, written atomically before their record is appended
    .lock              held (flock) by the one process working on the folder

A crash (even ``kill -9``) can tear at most the line being written. Reading drops a torn last
line; the next append starts on a fresh line so the file stays parseable. Files are never
rewritten or truncated: later records for the same key supersede earlier ones on read. Every
read names the fingerprints it expects, so records of another configuration are never mixed in.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import logging
import os
import socket
import time
from collections.abc import Collection, Iterator, Mapping
from pathlib import Path
from typing import Any, TypeVar, overload

from stylebench.atomic import write_text
from stylebench.errors import BadValue, MissingFile, UserError
from stylebench.records import (
    Key,
    RecordError,
    RecordKind,
    error_record,
    from_json_dict,
    kind_of,
    timing_from_json,
    to_json_dict,
)

log = logging.getLogger(__name__)
R = TypeVar("R")
LOCK_NAME = ".lock"
TIMINGS_NAME = "timings.jsonl"


class RunFolderBusy(UserError, RuntimeError):
    """Another process holds the run folder's lock."""


class RunStore:
    """Reads and appends the records of one run folder."""

    def __init__(self, root: Path | str) -> None:
        self.root = Path(root)

    # -- manifest -------------------------------------------------------------------------
    @property
    def manifest_path(self) -> Path:
        return self.root / "manifest.json"

    def exists(self) -> bool:
        return self.manifest_path.is_file()

    def read_manifest(self) -> dict[str, Any]:
        if not self.exists():
            raise MissingFile(
                f"{self.root} is not a stylebench run folder (no manifest.json); "
                "start one with `stylebench run`"
            )
        path = self.manifest_path
        try:
            data = json.loads(path.read_bytes().decode("utf-8"))
        except UnicodeDecodeError as exc:
            raise BadValue(
                f"{path}: not UTF-8 text ({exc.reason} at byte {exc.start}); the manifest is damaged"
            ) from None
        except json.JSONDecodeError as exc:
            raise BadValue(
                f"{path}: not valid JSON ({exc}); the manifest was cut off or edited"
            ) from None
        if not isinstance(data, dict):
            raise BadValue(
                f"{path}: a run manifest is a JSON object, this one is a {type(data).__name__}"
            )
        return data

    def make_folder(self) -> None:
        """Create the run folder.

        Raises:
            ValueError: the folder or a folder above it is a file (``--out`` names a file).
        """
        try:
            self.root.mkdir(parents=True, exist_ok=True)
        except (FileExistsError, NotADirectoryError):
            file = next(
                (p for p in (self.root, *self.root.parents) if p.exists() and not p.is_dir()),
                self.root,
            )
            raise BadValue(
                f"cannot make the run folder {self.root}: {file} is a file; pass a folder as "
                "--out (or another --run-id)"
            ) from None

    def write_manifest(self, manifest: dict[str, Any]) -> None:
        """Write the manifest atomically (the only file that is replaced, never appended)."""
        self.make_folder()
        write_text(self.manifest_path, json.dumps(manifest, indent=2, sort_keys=True, default=str))

    # -- records --------------------------------------------------------------------------
    def stage_path(self, stage: str) -> Path:
        return self.root / f"{stage}.jsonl"

    def audio_path(self, sample_id: str, turn: int, tag: str = "") -> Path:
        safe = "".join(c if c.isalnum() or c in "-_." else "_" for c in sample_id)
        return self.root / "audio" / f"{safe}_t{turn}{tag}.wav"

    def append(self, stage: str, record: Any) -> None:
        """Append one record as one line, flushed and fsynced before returning.

        Raises:
            RecordError: the record does not match its schema; nothing is written.
        """
        self._append_line(self.stage_path(stage), to_json_dict(record))

    def _append_line(self, path: Path, data: dict[str, Any]) -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        line = json.dumps(data, ensure_ascii=False, sort_keys=True, allow_nan=False)
        with open(path, "a+b") as fh:
            fcntl.flock(fh, fcntl.LOCK_EX)
            try:
                fh.seek(0, os.SEEK_END)
                if fh.tell() > 0:
                    fh.seek(-1, os.SEEK_END)
                    if fh.read(1) != b"\n":  # a torn line from a killed writer: start afresh
                        fh.write(b"\n")
                fh.write(line.encode("utf-8") + b"\n")
                fh.flush()
                os.fsync(fh.fileno())
            finally:
                fcntl.flock(fh, fcntl.LOCK_UN)

    def _iter_lines(self, path: Path) -> Iterator[dict[str, Any]]:
        """The JSON objects of a JSONL file in order; torn or corrupt lines are skipped."""
        if not path.exists():
            return
        with open(path, encoding="utf-8", errors="replace") as fh:
            lines = fh.read().split("\n")
        for i, line in enumerate(lines):
            if not line.strip():
                continue
            try:
                d = json.loads(line)
            except json.JSONDecodeError:
                where = "torn last line" if i >= len(lines) - 2 else f"corrupt line {i + 1}"
                log.warning("%s: dropped %s", path.name, where)
                continue
            if isinstance(d, dict):
                yield d

    def iter_raw(self, stage: str) -> Iterator[dict[str, Any]]:
        """Yield the parseable records of a stage in file order; torn or corrupt lines are skipped."""
        for d in self._iter_lines(self.stage_path(stage)):
            if "sample_id" in d and "turn" in d:
                yield d

    # -- timings (where the time went; never read by scoring or the report's cells) --------
    @property
    def timings_path(self) -> Path:
        return self.root / TIMINGS_NAME

    def append_timing(self, line: Any) -> None:
        """Append one line of ``timings.jsonl`` (a ``records.StageTiming`` or
        ``InvocationTiming``), like a record: one fsynced line, so a kill keeps the stages done."""
        self._append_line(self.timings_path, to_json_dict(line))

    def read_timings(self) -> list[Any]:
        """Every readable line of ``timings.jsonl`` in order (none for a run made before timings
        were recorded); a line that does not make a timing is skipped with a warning."""
        out = []
        for d in self._iter_lines(self.timings_path):
            try:
                out.append(timing_from_json(d))
            except RecordError as exc:
                log.warning("%s: skipped a line: %s", TIMINGS_NAME, exc)
        return out

    def index(
        self, stage: RecordKind[Any] | str, keys: Collection[Key]
    ) -> dict[tuple[Key, str], Any]:
        """Every record of ``keys`` by ``(key, fingerprint)``, the latest per pair.

        ``stage`` is the stage's :class:`~stylebench.records.RecordKind` (its file and record
        type), or the name of a built-in one.

        For stages whose expected fingerprints are learned one turn at a time (respond: a turn's
        key covers the hashes of the replies before it). An ok record is never superseded by a
        later error of the same fingerprint. A line that parses as JSON but does not make a valid
        record (a hostile reply stored by an older version, a hand edit) becomes an error record
        with the reason, so that key is retried instead of crashing every later run of the folder.
        """
        kind = kind_of(stage)
        wanted = set(keys)
        out: dict[tuple[Key, str], Any] = {}
        for d in self.iter_raw(kind.name):
            key = (str(d["sample_id"]), _as_turn(d["turn"]))
            fp = d.get("fp")
            if key not in wanted or not isinstance(fp, str):
                continue
            try:
                rec = from_json_dict(kind, d)
            except RecordError as exc:
                log.warning("%s: unreadable record for %s: %s", kind.name, key, exc)
                rec = error_record(kind, key, fp, f"stored record unreadable: {exc}")
            prev = out.get((key, fp))
            if prev is not None and prev.status == "ok" and rec.status != "ok":
                continue
            out[(key, fp)] = rec
        return out

    @overload
    def load(self, stage: RecordKind[R], expected: Mapping[Key, str]) -> dict[Key, R]: ...
    @overload
    def load(self, stage: str, expected: Mapping[Key, str]) -> dict[Key, Any]: ...
    def load(self, stage: RecordKind[Any] | str, expected: Mapping[Key, str]) -> dict[Key, Any]:
        """The latest record per key among those carrying the fingerprint the caller expects.

        There is no unfiltered read: a run folder may hold records of earlier configurations
        (another ASR, judge, decode setting), and only the caller knows which are current.
        """
        idx = self.index(stage, expected.keys())
        return {k: idx[(k, fp)] for k, fp in expected.items() if (k, fp) in idx}

    # -- one process per run folder -------------------------------------------------------
    @contextlib.contextmanager
    def lock(self, command: str) -> Iterator[None]:
        """Hold the run folder for this process; a second process is refused, naming the holder.

        The lock is an ``flock`` on ``.lock`` in the folder: the kernel drops it when the holder
        exits, even on ``kill -9``, so a stale lock file never blocks a later run.

        Raises:
            RunFolderBusy: another live process holds the folder.
        """
        self.make_folder()
        path = self.root / LOCK_NAME
        fh = open(path, "a+", encoding="utf-8")  # noqa: SIM115 - held for the with-block
        try:
            try:
                fcntl.flock(fh, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                fh.seek(0)
                holder = fh.read().strip() or "another process"
                raise RunFolderBusy(
                    f"{self.root} is in use by {holder}; wait for it to finish, or pass another "
                    "--run-id/--out"
                ) from None
            fh.seek(0)
            fh.truncate()
            fh.write(
                f"pid {os.getpid()} on {socket.gethostname()} ({command}, since "
                f"{time.strftime('%Y-%m-%d %H:%M:%S')})"
            )
            fh.flush()
            yield
        finally:
            fh.close()  # closing releases the flock


def _as_turn(turn: Any) -> int:
    try:
        return int(turn)
    except (TypeError, ValueError):
        return -1  # a malformed key matches no expected key
