"""The report as one JSON-ready dict: the source of truth every renderer reads.

``build_report`` makes the dict; the Markdown and CSV renderers read only that dict, so a report
loaded back from JSON renders the same way. Nothing here writes files or escapes text.
"""

from __future__ import annotations

import math
from collections.abc import Collection, Mapping, Sequence
from dataclasses import asdict, dataclass, field
from typing import Any

from stylebench.metrics.dims.base import dimension
from stylebench.records import DIMS
from stylebench.scoring.cells import (
    CELL_KEYS,
    Cell,
    Thresholds,
    TurnScore,
    cell_dict,
    cell_sort_key,
    collect_samples,
)

__all__ = ["CELL_KEYS", "ReportMeta", "build_report", "cell_dict"]

#: keys build_report and write_reports set; ``ReportMeta.extra`` may not redefine them
RESERVED_KEYS = frozenset(
    {
        "model",
        "run_id",
        "dims",
        "langs",
        "cells",
        "per_turn",
        "thresholds",
        "extractors",
        "units",
        "n_samples",
        "n_turns_total",
        "n_turns_ok",
        "notes",
        "plot",
        "timings",  # added only by ``report --timings``, never written to the files
    }
)


@dataclass(frozen=True)
class ReportMeta:
    """Run-level facts printed with every report (which model, which extractors, how many)."""

    model: str
    run_id: str
    dims: tuple[str, ...]
    langs: tuple[str, ...]
    thresholds: Thresholds
    extractors: Mapping[str, str]
    n_samples: int
    n_turns_total: int
    n_turns_ok: int
    notes: tuple[str, ...] = ()
    extra: Mapping[str, Any] = field(default_factory=dict)


def _sig(x: float | None, digits: int = 6) -> float | None:
    """Round to ``digits`` significant figures (raw scores span Hz to small RMS amplitudes)."""
    if x is None or x == 0:
        return x
    return round(float(x), digits - 1 - int(math.floor(math.log10(abs(x)))))


def _per_turn(turn_scores: Sequence[TurnScore], exclude: Collection[str]) -> list[dict[str, Any]]:
    groups: dict[tuple[str, str, str, str], dict[int, list[float | None]]] = {}
    for s in collect_samples(turn_scores, exclude=exclude):
        per = groups.setdefault((s.dim, s.direction, s.lang, s.group), {1: [], 2: [], 3: []})
        for t in (1, 2, 3):
            ts = s.turns.get(t)
            per[t].append(None if ts is None else ts.value)
    rows = []
    for dim, direction, lang, group in sorted(
        groups, key=lambda k: cell_sort_key(*k[:3], "", k[3])
    ):
        for t, vals in groups[(dim, direction, lang, group)].items():
            ok = [v for v in vals if v is not None]
            rows.append(
                {
                    "dim": dim,
                    "direction": direction,
                    "lang": lang,
                    "group": group,
                    "turn": t,
                    "mean": _sig(sum(ok) / len(ok)) if ok else None,
                    "n_ok": len(ok),
                    "n": len(vals),
                }
            )
    return rows


def build_report(
    meta: ReportMeta,
    cells: Sequence[Cell],
    turn_scores: Sequence[TurnScore],
    *,
    exclude: Collection[str] = (),
) -> dict[str, Any]:
    """Assemble the JSON-ready report.

    ``per_turn`` holds, per (dim, direction, lang, group, turn), the mean score over ok turns on the
    linear scale, with ``n_ok`` and ``n`` (samples in the group). Pass the same ``exclude`` as to
    ``score_cells`` so both count the same samples. Percents are rounded to 2 decimals, SVD and
    changes to 3, raw means to 6 significant figures; ``None`` stays ``None``.

    Raises:
        ValueError: a key of ``meta.extra`` would overwrite a standard report key.
    """
    clash = sorted(RESERVED_KEYS & set(meta.extra))
    if clash:
        raise ValueError(f"ReportMeta.extra must not redefine report keys {clash}; rename them")
    ordered = sorted(
        cells, key=lambda c: cell_sort_key(c.dim, c.direction, c.lang, c.pair, c.group)
    )
    report: dict[str, Any] = {
        "model": meta.model,
        "run_id": meta.run_id,
        "dims": list(meta.dims),
        "langs": list(meta.langs),
        "cells": [cell_dict(c) for c in ordered],
        "per_turn": _per_turn(turn_scores, exclude),
        "thresholds": asdict(meta.thresholds),
        "extractors": dict(meta.extractors),
        "units": {
            d: dict(dimension(d).words) for d in DIMS if dimension(d).paper or d in meta.dims
        },
        "n_samples": meta.n_samples,
        "n_turns_total": meta.n_turns_total,
        "n_turns_ok": meta.n_turns_ok,
        "notes": list(meta.notes),
    }
    report.update(meta.extra)
    return report
