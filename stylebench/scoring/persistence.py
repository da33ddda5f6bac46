"""Persistence scores: does a style asked for once at turn 1 last over the turns that follow?

Pure: handed the dialogues, their ok feature records, relevance verdicts and settings; reads no
file (docs/persistence.md).

For every persistence sample the run answered two dialogues: the **instructed** one (style
asked for at turn 1) and its **control** (the same questions, no instruction). For a turn k:

- the sample is *ok* at k when both replies of turn k have a score on the sample's dimension
  and (when a judge ran) both answer their own question (SRD ``relevant``); otherwise it is
  unscored at k, its reason counted in ``errors``, and it is left out of the shares: never
  scored 0;
- its *difference* is the perceptual change from the control's turn k to the instructed turn k
  in the dimension's unit (:func:`stylebench.scoring.cells.perceptual_change`: percent,
  dB, semitones, ...);
- it *persists* at k when that change has the asked sign and reaches the dimension's threshold
  (:func:`stylebench.scoring.cells.is_valid`, the rule of StyleBench's VSP).

A cell is one (dim, direction, lang, turn): persistence = 100 * persisting / ok, its percentile
bootstrap CI (:func:`stylebench.scoring.vsp.total_vsp`, the totaller of every VSP, over the 0/100 indicators), the
mean signed difference; per (dim, direction, lang) the *half-reversion turn* is the first turn
whose persistence is at most 50% (half the ok samples no longer differ), ``None`` when no turn
gets there.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from stylebench.metrics.dims.base import ScoreContext, dimension, plain
from stylebench.records import DIMS, DIRECTIONS, FeatureRecord, Key, RespondRecord
from stylebench.scoring.bootstrap import check_boot
from stylebench.scoring.cells import Thresholds, is_valid, perceptual_change
from stylebench.scoring.vsp import total_vsp

#: the keys of a persistence cell's JSON form (:func:`cell_dict`)
CELL_KEYS = (
    "dim",
    "direction",
    "lang",
    "turn",
    "persistence",
    "persistence_ci",
    "mean_diff",
    "unit",
    "n",
    "n_ok",
    "n_kept",
    "errors",
)
NOT_JUDGED = "relevance: not judged"


@dataclass(frozen=True)
class PairedTurn:
    """Turn ``turn`` of one persistence sample: the instructed and control measures on the
    sample's dimension (linear scale), or why the pair is unscored (``reason``)."""

    sample_id: str
    dim: str
    direction: str
    lang: str
    turn: int
    instructed: float | None
    control: float | None
    reason: str = ""


@dataclass(frozen=True)
class PersistenceCell:
    """One (dim, direction, lang, turn); ``persistence`` in percent of the ok samples."""

    dim: str
    direction: str
    lang: str
    turn: int
    n: int
    n_ok: int
    n_kept: int
    persistence: float | None
    persistence_ci: tuple[float, float] | None
    mean_diff: float | None
    unit: str
    errors: dict[str, int] = field(default_factory=dict)


def _reply_values(arm: Any, features: Mapping[Key, FeatureRecord], ctx: ScoreContext) -> dict:
    """Each turn's score on the arm's dimension, or the reason it has none."""
    ok = {
        k: f
        for k in arm.turn_numbers
        if (f := features.get((arm.id, k))) is not None and f.status == "ok"
    }
    values, _ = dimension(arm.dim).gated_turn_values(arm, ok, ctx)
    out: dict[int, float | str] = {}
    for k in arm.turn_numbers:
        f = features.get((arm.id, k))
        if f is None:
            out[k] = "features: not computed (run not finished)"
        elif f.status != "ok":
            out[k] = "features: " + (f.error.splitlines()[0][:200] if f.error else "error")
        elif k not in values:
            out[k] = f"{arm.dim}: no score (not measured)"
        else:  # compared with the control arm's turn (another sample): a shared count that is
            # doubtful outside its own turns does not hold there
            v = plain(values[k])
            out[k] = f"{arm.dim}: no score (not measured)" if v is None else v
    return out


def paired_turns(
    pairs: Sequence[tuple[Any, Any]],
    replies: Mapping[Key, RespondRecord],
    features: Mapping[Key, FeatureRecord],
    ctx: ScoreContext,
    relevance: Mapping[Key, str] | None,
) -> list[PairedTurn]:
    """One :class:`PairedTurn` per sample and turn.

    Args:
        pairs: each sample's (instructed, control) dialogues
            (:class:`stylebench.dialogues.persistence.PersistenceArm`).
        replies: respond records by (dialogue id, turn).
        features: feature records by (dialogue id, turn).
        ctx: the per-reply score settings.
        relevance: SRD labels by (dialogue id, turn) (``relevant``, ``irrelevant``,
            ``unparseable``; a turn not there was not judged); ``None``: no judge ran, nothing
            is gated.
    """
    out = []
    for inst, ctrl in pairs:
        vals = {arm.arm: _reply_values(arm, features, ctx) for arm in (inst, ctrl)}
        for k in inst.turn_numbers:
            reason = ""
            for arm in (inst, ctrl):
                rep = replies.get((arm.id, k))
                v = vals[arm.arm][k]
                if rep is None:
                    why = "respond: no record (run not finished)"
                elif rep.status != "ok":
                    why = "respond: " + (rep.error.splitlines()[0][:200] if rep.error else "error")
                elif isinstance(v, str):
                    why = v
                elif relevance is not None and relevance.get((arm.id, k)) != "relevant":
                    label = relevance.get((arm.id, k))
                    why = NOT_JUDGED if label is None else f"relevance: {label}"
                else:
                    continue
                reason = f"{arm.arm}: {why}"
                break
            a, b = vals["control"][k], vals["instructed"][k]
            ok = not reason
            out.append(
                PairedTurn(
                    inst.base_id,
                    inst.dim,
                    inst.direction,
                    inst.lang,
                    k,
                    float(b) if ok else None,
                    float(a) if ok else None,
                    reason,
                )
            )
    return out


def _mean(values: Sequence[float]) -> float | None:
    return float(np.mean(values)) if len(values) else None


def score_persistence(
    turns: Sequence[PairedTurn],
    thresholds: Thresholds,
    *,
    n_boot: int = 2000,
    seed: int = 0,
    ci: float = 0.95,
) -> list[PersistenceCell]:
    """Every (dim, direction, lang, turn) cell, in DIMS, DIRECTIONS, lang, turn order."""
    check_boot(n_boot, ci)
    groups: dict[tuple[str, str, str, int], list[PairedTurn]] = {}
    for t in turns:
        groups.setdefault((t.dim, t.direction, t.lang, t.turn), []).append(t)
    cells = []
    for (dim, direction, lang, k), members in groups.items():
        verdicts: list[bool] = []
        diffs: list[float] = []
        errors: dict[str, int] = {}
        for t in members:
            if t.instructed is None or t.control is None:
                errors[t.reason] = errors.get(t.reason, 0) + 1
                continue
            verdicts.append(is_valid(dim, direction, t.control, t.instructed, thresholds))
            diffs.append(perceptual_change(dim, t.control, t.instructed))
        share = total_vsp(verdicts, n_boot=n_boot, seed=seed, ci=ci)
        cells.append(
            PersistenceCell(
                dim,
                direction,
                lang,
                k,
                n=len(members),
                n_ok=share.n_decided,
                n_kept=share.n_valid,
                persistence=share.vsp,
                persistence_ci=share.vsp_ci,
                mean_diff=_mean(diffs),
                unit=dimension(dim).words["change"],
                errors=dict(sorted(errors.items())),
            )
        )
    return sorted(
        cells, key=lambda c: (DIMS.index(c.dim), DIRECTIONS.index(c.direction), c.lang, c.turn)
    )


def half_reversion(
    cells: Sequence[PersistenceCell],
) -> dict[tuple[str, str, str], tuple[int | None, int]]:
    """Per (dim, direction, lang) with a scored turn: the first turn whose persistence is at most
    50% (half the ok samples have reverted), ``None`` when every scored turn stays above it; and
    the last scored turn, so "stays above" is said only as far as it was measured (``>3`` when
    turn 4 has no score). A (dim, direction, lang) with no scored turn has no entry: nothing was
    measured, so nothing is said (not the best value, ``>N``)."""
    out: dict[tuple[str, str, str], tuple[int | None, int]] = {}
    for c in sorted(cells, key=lambda c: c.turn):
        if c.persistence is None:
            continue
        key = (c.dim, c.direction, c.lang)
        first, _ = out.get(key, (None, c.turn))
        if first is None and c.persistence <= 50.0:
            first = c.turn
        out[key] = (first, c.turn)
    return out


def mean_after_first(cells: Sequence[PersistenceCell]) -> float | None:
    """Mean persistence over the cells of turns 2..N (the leaderboard's number), or None."""
    return _mean([c.persistence for c in cells if c.turn >= 2 and c.persistence is not None])


def by_turn(cells: Sequence[PersistenceCell]) -> dict[int, float | None]:
    """Per turn, the mean persistence over the cells that have one (the decay curve's summary)."""
    turns = sorted({c.turn for c in cells})
    return {
        k: _mean([c.persistence for c in cells if c.turn == k and c.persistence is not None])
        for k in turns
    }


def _round(x: float | None, nd: int) -> float | None:
    return None if x is None else round(float(x), nd)


def cell_dict(c: PersistenceCell) -> dict[str, Any]:
    """A cell's JSON form (keys :data:`CELL_KEYS`): percents to 2 decimals, differences to 3."""
    return {
        "dim": c.dim,
        "direction": c.direction,
        "lang": c.lang,
        "turn": c.turn,
        "persistence": _round(c.persistence, 2),
        "persistence_ci": None
        if c.persistence_ci is None
        else [round(c.persistence_ci[0], 2), round(c.persistence_ci[1], 2)],
        "mean_diff": _round(c.mean_diff, 3),
        "unit": c.unit,
        "n": c.n,
        "n_ok": c.n_ok,
        "n_kept": c.n_kept,
        "errors": dict(c.errors),
    }
