"""The run folder: a manifest plus one append-only JSONL file per stage.

Layout of ``runs/<run_id>/``::

    manifest.json      resolved config, versions, git revision, dialogue-set checksum
    respond.jsonl      one record per (sample_id, turn) attempt, appended
    transcribe.jsonl
    features.jsonl
    audio/             reply wavs, written atomically before their record is appended

A crash (even ``kill -9``) can tear at most the line being written. Reading drops a torn last
line; the next append starts on a fresh line so the file stays parseable. Files are never
rewritten or truncated: later records for the same key supersede earlier ones on read.
"""

from __future__ import annotations

import fcntl
import json
import logging
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from stylebench.records import from_json_dict, to_json_dict

log = logging.getLogger(__name__)
Key = tuple[str, int]


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
            raise FileNotFoundError(
                f"{self.root} is not a stylebench run folder (no manifest.json); "
                "start one with `stylebench run`"
            )
        return json.loads(self.manifest_path.read_text(encoding="utf-8"))

    def write_manifest(self, manifest: dict[str, Any]) -> None:
        """Write the manifest atomically (the only file that is replaced, never appended)."""
        self.root.mkdir(parents=True, exist_ok=True)
        tmp = self.manifest_path.with_suffix(".json.tmp")
        tmp.write_text(
            json.dumps(manifest, indent=2, sort_keys=True, default=str), encoding="utf-8"
        )
        os.replace(tmp, self.manifest_path)

    # -- records --------------------------------------------------------------------------
    def stage_path(self, stage: str) -> Path:
        return self.root / f"{stage}.jsonl"

    def audio_path(self, sample_id: str, turn: int, tag: str = "") -> Path:
        safe = "".join(c if c.isalnum() or c in "-_." else "_" for c in sample_id)
        return self.root / "audio" / f"{safe}_t{turn}{tag}.wav"

    def append(self, stage: str, record: Any) -> None:
        """Append one record as one line, flushed and fsynced before returning."""
        path = self.stage_path(stage)
        path.parent.mkdir(parents=True, exist_ok=True)
        line = json.dumps(to_json_dict(record), ensure_ascii=False, sort_keys=True)
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

    def iter_raw(self, stage: str) -> Iterator[dict[str, Any]]:
        """Yield the parseable records of a stage in file order; torn or corrupt lines are skipped."""
        path = self.stage_path(stage)
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
            if isinstance(d, dict) and "sample_id" in d and "turn" in d:
                yield d

    def load(self, stage: str, fp: dict[Key, str] | str | None = None) -> dict[Key, Any]:
        """Latest record per key, keeping only records whose fingerprint matches ``fp``.

        Args:
            stage: stage name (``respond``, ``transcribe``, ``features``).
            fp: ``None`` keeps every record; a string keeps records with that fingerprint; a
                dict gives the expected fingerprint per key (keys absent from it are dropped).
        """
        out: dict[Key, Any] = {}
        for d in self.iter_raw(stage):
            key = (str(d["sample_id"]), int(d["turn"]))
            if fp is not None:
                want = fp if isinstance(fp, str) else fp.get(key)
                if d.get("fp") != want:
                    continue
            rec = from_json_dict(stage, d)
            prev = out.get(key)
            # an ok record is never superseded by a later error for the same fingerprint
            if prev is not None and prev.status == "ok" and rec.status != "ok":
                continue
            out[key] = rec
        return out

    def count_lines(self, stage: str) -> int:
        return sum(1 for _ in self.iter_raw(stage))
