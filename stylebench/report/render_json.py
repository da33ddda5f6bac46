"""The JSON renderer: the report dict as pretty UTF-8 JSON (escaping is :mod:`json`'s)."""

from __future__ import annotations

import json
from typing import Any


def to_json(report: dict[str, Any]) -> str:
    """Pretty JSON (UTF-8 text kept as is); NaN or infinity raise ``ValueError``."""
    return json.dumps(report, indent=2, ensure_ascii=False, allow_nan=False) + "\n"
