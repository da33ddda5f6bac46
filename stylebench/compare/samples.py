"""Per-sample outcomes of one run, the unit every paired comparison is made on.

A :class:`PairOutcome` is one sample's change over one turn pair, with the definitions of
:mod:`stylebench.scoring.cells` (valid = instructed sign and at least the dim's threshold). The
*signed* change is the perceptual change with the instructed sign made positive (attenuate
flips it), so for every cell "larger = followed the instruction more".
"""

from __future__ import annotations

from collections.abc import Collection, Iterable
from dataclasses import dataclass

from stylebench.records import PAIRS
from stylebench.scoring.cells import (
    Thresholds,
    TurnScore,
    collect_samples,
    has_asked_sign,
    is_valid,
    pair_values,
    perceptual_change,
    relative_change,
)

#: (dim, direction, lang, pair, group), the key of a report cell
CellKey = tuple[str, str, str, str, str]


@dataclass(frozen=True)
class PairOutcome:
    """One sample over one turn pair; ``ok`` is False when a turn has no score."""

    sample_id: str
    key: CellKey
    ok: bool
    valid: bool = False
    change: float | None = None  # perceptual units (st, dB, %, rating points)
    signed: float | None = None  # change with the instructed sign positive
    relative: float | None = None  # signed relative change on the linear scale, percent
    moved: bool = False  # the change has the instructed sign, any size (vsp_direction)


def pair_label(pair: tuple[int, int]) -> str:
    return f"{pair[0]}-{pair[1]}"


def outcomes(
    scores: Iterable[TurnScore], thresholds: Thresholds, *, exclude: Collection[str] = ()
) -> dict[CellKey, dict[str, PairOutcome]]:
    """Every sample's outcome per cell key and pair: ``{key: {sample_id: outcome}}``.

    Ids in ``exclude`` (left out by the run's relevance gate) are counted nowhere, as in the run's
    own report.
    """
    out: dict[CellKey, dict[str, PairOutcome]] = {}
    for s in collect_samples(scores, exclude=exclude):
        for pair in PAIRS:
            key = (s.dim, s.direction, s.lang, pair_label(pair), s.group)
            got = pair_values(s.turns.get(pair[0]), s.turns.get(pair[1]))
            if isinstance(got, str):
                row = PairOutcome(s.sample_id, key, ok=False)
            else:
                a, b = got
                change = perceptual_change(s.dim, a, b)
                row = PairOutcome(
                    s.sample_id,
                    key,
                    ok=True,
                    valid=is_valid(s.dim, s.direction, a, b, thresholds),
                    change=change,
                    signed=change if s.direction == "intensify" else -change,
                    relative=relative_change(s.dim, a, b),
                    moved=has_asked_sign(s.dim, s.direction, a, b),
                )
            out.setdefault(key, {})[s.sample_id] = row
    return out
