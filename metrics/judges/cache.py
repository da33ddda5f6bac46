"""A persistent verdict cache (stdlib ``sqlite3``), shared by runs on one machine.

The key is a sha256 of the judge's ``describe()`` (backend, model, revision, prompt-file hashes,
decode settings, endpoint) and the request's inputs (kind, language, user texts, transcripts), so
a verdict is reused only when the same judge is asked the same question the same way. Only
``relevant``/``irrelevant`` verdicts are stored: failures (:class:`JudgeError`) and
``unparseable`` verdicts never are, nor those of empty replies (given without asking, see
:func:`judge_all`). One connection is shared by the threads of a process behind a lock; several
processes may share the file (sqlite's own locking, WAL journal).
"""

from __future__ import annotations

import hashlib
import json
import sqlite3
import threading
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from stylebench.metrics.judges.base import (
    Judge,
    JudgeError,
    JudgeRequest,
    Verdict,
    empty_reply_verdict,
)
from stylebench.paths import cache_root

CACHE_VERSION = "1"


def cache_key(describe: dict[str, Any], req: JudgeRequest) -> str:
    """sha256 over the judge's identity and the request's inputs."""
    blob = json.dumps(
        [CACHE_VERSION, describe, req.fields()], sort_keys=True, ensure_ascii=False, default=str
    )
    return hashlib.sha256(blob.encode("utf-8")).hexdigest()


def default_cache_path() -> Path:
    """``judge_cache.sqlite`` under the cache root (:func:`stylebench.paths.cache_root`)."""
    return cache_root() / "judge_cache.sqlite"


class JudgeCache:
    """``get``/``put`` of verdicts by :func:`cache_key`; safe for concurrent threads."""

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._lock = threading.Lock()
        self._db = sqlite3.connect(str(self.path), timeout=30.0, check_same_thread=False)
        with self._lock, self._db:
            self._db.execute("PRAGMA journal_mode=WAL")
            self._db.execute(
                "CREATE TABLE IF NOT EXISTS verdicts (key TEXT PRIMARY KEY, label TEXT NOT NULL, "
                "score REAL, reason TEXT NOT NULL, raw TEXT NOT NULL)"
            )
            self._db.execute(
                "CREATE TABLE IF NOT EXISTS answers (key TEXT PRIMARY KEY, answer TEXT NOT NULL)"
            )

    def get(self, key: str) -> Verdict | None:
        with self._lock:
            row = self._db.execute(
                "SELECT label, score, reason, raw FROM verdicts WHERE key = ?", (key,)
            ).fetchone()
        return None if row is None else Verdict(row[0], row[1], row[2], row[3])

    def put(self, key: str, verdict: Verdict) -> bool:
        """Store a verdict; returns False (and stores nothing) for one that must not be cached."""
        if verdict.label not in ("relevant", "irrelevant"):
            return False
        with self._lock, self._db:
            self._db.execute(
                "INSERT OR REPLACE INTO verdicts VALUES (?, ?, ?, ?, ?)",
                (key, verdict.label, verdict.score, verdict.reason, verdict.raw),
            )
        return True

    def get_answer(self, key: str) -> dict[str, Any] | None:
        """An answer of another judge (the caption judge) stored by :meth:`put_answer`."""
        with self._lock:
            row = self._db.execute("SELECT answer FROM answers WHERE key = ?", (key,)).fetchone()
        return None if row is None else json.loads(row[0])

    def put_answer(self, key: str, answer: dict[str, Any]) -> None:
        """Store a JSON answer; the caller decides what may be cached (never a failure)."""
        with self._lock, self._db:
            self._db.execute(
                "INSERT OR REPLACE INTO answers VALUES (?, ?)",
                (key, json.dumps(answer, ensure_ascii=False)),
            )

    def __len__(self) -> int:
        with self._lock:
            return int(self._db.execute("SELECT COUNT(*) FROM verdicts").fetchone()[0])

    def close(self) -> None:
        with self._lock:
            self._db.close()


def judge_all(
    judge: Judge, reqs: Sequence[JudgeRequest], cache: JudgeCache | None = None
) -> tuple[list[Verdict | JudgeError], set[int]]:
    """Verdicts for ``reqs`` (aligned), asking the judge only for what is not known yet.

    A request with an empty reply gets :func:`empty_reply_verdict` (``irrelevant``) without a
    backend call, the same for every backend. The rest are looked up in ``cache``; misses go to
    the judge's ``judge_many`` when it has one (LLM backends batch or run concurrently), else to
    ``judge`` per request; a ``JudgeError`` or ``ValueError`` from one request becomes that
    request's result. Returns the results and the indices answered from the cache.
    """
    desc = judge.describe() if cache is not None else {}
    keys = [cache_key(desc, r) for r in reqs] if cache is not None else []
    out: list[Verdict | JudgeError | None] = [empty_reply_verdict(r) for r in reqs]
    known = {i for i, v in enumerate(out) if v is not None}
    if cache is not None:
        for i, k in enumerate(keys):
            if i not in known:
                out[i] = cache.get(k)
    todo = [i for i, v in enumerate(out) if v is None]
    many = getattr(judge, "judge_many", None)
    if callable(many) and todo:
        fresh = list(many([reqs[i] for i in todo]))
    else:
        fresh = []
        for i in todo:
            try:
                fresh.append(judge.judge(reqs[i]))
            except (JudgeError, ValueError) as exc:
                fresh.append(exc if isinstance(exc, JudgeError) else JudgeError(str(exc)))
    for i, v in zip(todo, fresh, strict=True):
        out[i] = v
        if cache is not None and isinstance(v, Verdict):
            cache.put(keys[i], v)
    hits = set(range(len(reqs))) - set(todo) - known
    return [v for v in out if v is not None], hits
