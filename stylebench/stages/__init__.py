"""Pipeline stages. Each reads earlier stages' records and appends its own, keyed by
(sample_id, turn); each can be re-run alone and skips what is already done."""

from __future__ import annotations

import hashlib
import json
from typing import Any


def fingerprint(*parts: Any) -> str:
    """A short stable hash of JSON-serialisable parts; names who computed a record and how."""
    blob = json.dumps(parts, sort_keys=True, default=str, ensure_ascii=False)
    return hashlib.sha256(blob.encode("utf-8")).hexdigest()[:20]
