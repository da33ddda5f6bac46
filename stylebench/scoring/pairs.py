"""VSP and SVD over pairs of files (``stylebench pairs``): a run's cell statistics, pooled by group.

A pair is a two-turn sample (turn 1 = file ``a``, turn 2 = file ``b``), so its change, whether it
moved as asked and every statistic over pairs are the run's (:mod:`stylebench.scoring.cells`,
:func:`~stylebench.scoring.cells.aggregate_cell`): VSP is the share of scored pairs that moved as
asked, SVD the mean relative change of those that did, each with its percentile bootstrap CI.
Pairs are pooled twice: per (dim, direction, group) and per dim over every group and direction.
Beside the run's statistics, each pool has the mean change *toward the instruction* (the
perceptual change with an attenuate pair's sign flipped, so larger = moved more as asked) with
its bootstrap CI: pooled over both directions, the plain mean change would cancel out.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from stylebench.metrics.dims.base import dimension
from stylebench.records import DIRECTIONS
from stylebench.scoring.bootstrap import bootstrap_ci, check_boot
from stylebench.scoring.cells import (
    Cell,
    SampleTurns,
    Thresholds,
    TurnScore,
    aggregate_cell,
    collect_samples,
    perceptual_change,
)

#: the turn pair a file pair is: ``a`` -> ``b``
PAIR = (1, 2)
PAIR_LABEL = "1-2"
#: the label of a pool over several groups, directions or languages
ALL = "all"
SCOPES = ("group", "dim")


@dataclass(frozen=True)
class PairCell:
    """One pool of pairs: ``scope`` ``"group"`` (one dim, direction and group) or ``"dim"``
    (every pair of one dim), its :class:`Cell`, and the mean change toward the instruction
    with its CI (perceptual units; ``None`` without a scored pair)."""

    scope: str
    cell: Cell
    toward_mean: float | None
    toward_ci: tuple[float, float] | None


def toward(dim: str, direction: str, a: float, b: float) -> float:
    """The perceptual change ``a -> b`` with the instructed sign positive."""
    change = perceptual_change(dim, a, b)
    return change if direction == "intensify" else -change


def _label(values: Iterable[str]) -> str:
    distinct = sorted(set(values))
    return distinct[0] if len(distinct) == 1 else ALL


def _pool(
    scope: str,
    dim: str,
    group: str,
    members: Sequence[SampleTurns],
    thresholds: Thresholds,
    boot: dict[str, Any],
) -> PairCell:
    key = (
        dim,
        _label(m.direction for m in members),
        _label(m.lang for m in members),
        PAIR_LABEL,
        group,
    )
    cell = aggregate_cell(key, members, PAIR, thresholds, boot)
    moved = []
    for m in members:
        ta, tb = m.turns.get(PAIR[0]), m.turns.get(PAIR[1])
        if ta is not None and tb is not None and ta.value is not None and tb.value is not None:
            moved.append(toward(m.dim, m.direction, ta.value, tb.value))
    mean = sum(moved) / len(moved) if moved else None
    return PairCell(scope, cell, mean, bootstrap_ci(moved, **boot))


def pair_cells(
    scores: Iterable[TurnScore],
    thresholds: Thresholds,
    *,
    n_boot: int = 2000,
    seed: int = 0,
    ci: float = 0.95,
) -> list[PairCell]:
    """The pools of pairs whose turn scores are ``scores`` (turns 1 and 2 of each pair, its
    group in ``TurnScore.group``): per dim in report order, its (direction, group) pools, then
    the dim's pool over all of them (group ``"all"``; direction and language ``"all"`` when
    they vary).

    Raises:
        ValueError: a duplicate (pair, turn), or bad ``n_boot``/``ci``.
    """
    check_boot(n_boot, ci)
    boot: dict[str, Any] = {"n_boot": n_boot, "seed": seed, "ci": ci}
    by_dim: dict[str, list[SampleTurns]] = {}
    for s in collect_samples(scores):
        by_dim.setdefault(s.dim, []).append(s)
    out: list[PairCell] = []
    for dim in sorted(by_dim, key=lambda d: dimension(d).order):
        members = by_dim[dim]
        groups: dict[tuple[str, str], list[SampleTurns]] = {}
        for s in members:
            groups.setdefault((s.direction, s.group), []).append(s)
        for direction, group in sorted(groups, key=lambda k: (DIRECTIONS.index(k[0]), k[1])):
            out.append(_pool("group", dim, group, groups[(direction, group)], thresholds, boot))
        out.append(_pool("dim", dim, ALL, members, thresholds, boot))
    return out
