"""Change between turns: validity, VSP and SVD per cell, bootstrap CIs and paired tests.

Definitions (see ``docs/`` and DESIGN.md, "Change between turns, VSP and SVD"):

- A *cell* is one (dim, direction, lang, pair, group); ``pair`` is ``"1-2"`` or ``"2-3"``.
- A sample is *ok* (decided: ``Cell.n_decided``, stored as ``n_ok``) for a pair when both of its
  turns have a score; otherwise it is *failed*, its reason is counted in ``Cell.errors`` and it
  counts as not valid in ``vsp_all``.
- The *perceptual change* from score ``a`` to ``b`` is ``12*log2(b/a)`` semitones (pitch),
  ``20*log10(b/a)`` dB (volume), ``100*(b/a-1)`` percent (speed) and ``b-a`` (emotion, whose scores
  are ratings or probabilities taken as given).
- A sample is *valid* when its change has the instructed sign (intensify: > 0, attenuate: < 0) and
  ``|change| >= threshold`` for the dim.
- VSP = 100 * valid / ok; SVD = mean over valid samples of the relative change ``100*|b-a|/a``
  on the linear scale (for emotion the absolute change ``|b-a|``, since a probability may be 0).
- ``vsp_direction`` = 100 * (ok samples whose change has the instructed sign, of any size) / ok:
  the direction-only rate (a change of exactly 0 has no sign: not moved). A model whose changes
  are noise of either sign sits near 50% on it and near 0% on VSP (docs/metrics.md).
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Collection, Iterable, Sequence
from dataclasses import dataclass, field
from numbers import Real
from typing import TYPE_CHECKING, Any, ClassVar

import numpy as np

from stylebench.metrics.dims.base import all_dims, dimension, in_order
from stylebench.records import DIMS, DIRECTIONS, PAIRS, TURNS
from stylebench.scoring.bootstrap import bootstrap_ci, check_boot
from stylebench.scoring.vsp import CellKey, VspCell, key_json, round_vsp, total_vsp, vsp_cell

if TYPE_CHECKING:
    from stylebench.config import ScoreConfig

# Relative tolerance so that a change of exactly one threshold (e.g. b/a = 2**(1/12)) is not lost to
# floating-point rounding in log2/log10.
_BOUNDARY_EPS = 1e-9
MISSING_TURN = "missing turn record"
NO_REASON = "no value (no reason recorded)"


# The cell's columns, named once. Each output orders the same groups its own way:
# report.json (:data:`CELL_KEYS`), report.csv (:data:`CSV_COLUMNS`), ``stylebench.api``
# (:data:`FRAME_COLUMNS`) and the compare tables (:data:`COMPARE_COLUMNS`).
#: what a cell is: one (dim, direction, lang, pair, group)
CELL_ID = ("dim", "direction", "lang", "pair", "group")
#: its style numbers; a ``*_ci`` is a (low, high) pair, split by :func:`split_ci` for flat tables
CELL_STYLE = (
    "vsp",
    "vsp_ci",
    "vsp_all",
    "vsp_direction",
    "vsp_direction_ci",
    "svd",
    "svd_ci",
    "svd_signed",
    "change_mean",
)
#: its sample counts (``n_ok`` is the stored name of :attr:`Cell.n_decided`: ``vsp.STORED_AS``)
CELL_COUNTS = ("n", "n_ok", "n_valid")
#: what was set aside: flagged samples, and the unscored ones by reason
CELL_SET_ASIDE = ("n_flagged", "errors")
#: the keys of a cell's JSON form (:func:`cell_dict`)
CELL_KEYS = (*CELL_ID, *CELL_STYLE, *CELL_COUNTS, *CELL_SET_ASIDE)


def split_ci(columns: Iterable[str]) -> tuple[str, ...]:
    """``columns`` with each ``*_ci`` column split into ``*_ci_low`` and ``*_ci_high``."""
    return tuple(
        part for c in columns for part in ((f"{c}_low", f"{c}_high") if c.endswith("_ci") else (c,))
    )


#: one row per cell in ``stylebench.api`` frames: the JSON keys, CIs split
FRAME_COLUMNS = split_ci(CELL_KEYS)
#: report.csv: the run's model and id, then counts before the style numbers
CSV_COLUMNS = (
    "model",
    "run_id",
    *CELL_ID,
    *CELL_COUNTS,
    *split_ci(CELL_STYLE),
    *CELL_SET_ASIDE,
    "eligible",
)
#: a cell in compare's tables: VSP and SVD with their CIs, and how many samples they rest on
COMPARE_COLUMNS = (
    *CELL_ID,
    "vsp",
    "vsp_ci",
    "vsp_direction",
    "vsp_direction_ci",
    "svd",
    "svd_ci",
    "n_ok",
    "n",
)


@dataclass(frozen=True)
class TurnScore:
    """One reply's style score.

    ``value`` is on the dim's linear scale: Hz (pitch), RMS amplitude (volume), syllables per minute
    (speed), rating or probability (emotion). ``None`` means the turn failed and ``error`` says why.
    """

    sample_id: str
    dim: str
    direction: str
    lang: str
    turn: int
    value: float | None
    error: str | None = None
    flags: tuple[str, ...] = ()
    group: str = ""
    #: the turns of its sample measured together with this one because they say the same words
    #: (its own included; :class:`stylebench.metrics.dims.base.Shared`); empty when it was
    #: measured alone
    same_words: tuple[int, ...] = ()
    #: when set, a change from this score to a turn outside :attr:`same_words` has no score, and
    #: this is why (their shared measurement cancels only between them)
    cross_error: str | None = None

    def __post_init__(self) -> None:
        where = f"TurnScore(sample_id={self.sample_id!r}, turn={self.turn!r})"
        for name, allowed in (("dim", DIMS), ("direction", DIRECTIONS), ("turn", TURNS)):
            if getattr(self, name) not in allowed:
                raise ValueError(f"{where}: {name} {getattr(self, name)!r} is not one of {allowed}")
        if self.value is not None:
            v = float(self.value)
            if not math.isfinite(v) or (dimension(self.dim).positive and v <= 0):
                raise ValueError(
                    f"{where}: {self.dim} value must be finite (and > 0 unless emotion), got "
                    f"{self.value!r}; record a failed measurement as value=None with an error"
                )
            object.__setattr__(self, "value", v)
        object.__setattr__(self, "flags", tuple(self.flags))
        object.__setattr__(self, "same_words", tuple(self.same_words))


def pair_values(ta: TurnScore | None, tb: TurnScore | None) -> tuple[float, float] | str:
    """The two scores a change from turn ``ta`` to turn ``tb`` of one sample is taken from, or
    why that change has no score: a missing turn, a turn without a score, or a score that may be
    compared only with the turns it shares its measurement with (:attr:`TurnScore.cross_error`).
    Every reader of a change between turns asks here (cells, per-sample outcomes, plots,
    captions), so they agree on which changes exist."""
    if ta is None:
        return MISSING_TURN
    if ta.value is None:
        return ta.error or NO_REASON
    if tb is None:
        return MISSING_TURN
    if tb.value is None:
        return tb.error or NO_REASON
    for t, other in ((ta, tb), (tb, ta)):
        if t.cross_error is not None and other.turn not in t.same_words:
            return t.cross_error
    return ta.value, tb.value


def _thresholds_post_init(self: Any) -> None:
    for d in all_dims():
        v = getattr(self, d.threshold_field)
        if not (isinstance(v, Real) and math.isfinite(float(v)) and float(v) >= 0):
            raise ValueError(
                f"Thresholds.{d.threshold_field} must be a finite number >= 0, got {v!r}"
            )


def _for_dim(self: Any, dim: str) -> float:
    """Threshold for ``dim`` in that dim's perceptual unit."""
    return getattr(self, dimension(dim).threshold_field)


if TYPE_CHECKING:

    class Thresholds:
        """What a type checker reads for the class built below: the paper dimensions' fields
        (tests/test_typing.py checks them against the registry), frozen, and ``for_dim``; an
        extension dimension's field (named only in its own module) reads as a float."""

        __dataclass_fields__: ClassVar[dict[str, Any]]

        def __getattr__(self, name: str) -> float: ...

        @property
        def speed_pct(self) -> float: ...
        @property
        def volume_db(self) -> float: ...
        @property
        def pitch_st(self) -> float: ...
        @property
        def emotion_delta(self) -> float: ...

        def __init__(
            self,
            *,
            speed_pct: float = ...,
            volume_db: float = ...,
            pitch_st: float = ...,
            emotion_delta: float = ...,
            **extensions: float,
        ) -> None: ...

        def for_dim(self, dim: str) -> float: ...

else:
    #: Just-noticeable change per dim, in its perceptual unit: one field per registered dimension
    #: (its ``threshold_field``, default its ``default_threshold``), the same names as
    #: ScoreConfig's. Built from the registry, so an extension dimension adds its own field.
    Thresholds = dataclasses.make_dataclass(
        "Thresholds",
        [
            (d.threshold_field, float, field(default_factory=lambda d=d: d.default_threshold))
            for d in in_order()
        ],
        namespace={
            "__post_init__": _thresholds_post_init,
            "for_dim": _for_dim,
            "__doc__": "Just-noticeable change per dim, in perceptual units (one field per dim).",
            "__module__": __name__,
        },
        frozen=True,
    )


def thresholds_from(score_cfg: ScoreConfig) -> Thresholds:
    """The :class:`Thresholds` of a run's ``score`` config section."""
    return Thresholds(
        **{d.threshold_field: getattr(score_cfg, d.threshold_field) for d in all_dims()}
    )


@dataclass(frozen=True, kw_only=True)
class Cell(VspCell):
    """The acoustic cell of one (dim, direction, lang, pair, group): the shared VSP fields
    (:class:`~stylebench.scoring.vsp.VspCell`; ``n_decided`` = samples with both turns scored,
    stored as ``n_ok``), the direction-only rate over the same samples, then SVD and the
    measured changes; percents are 0-100."""

    vsp_all: float | None
    #: percent of the decided samples whose change has the asked sign, any size
    #: (:func:`has_asked_sign`), with its bootstrap CI (:func:`direction_rate`)
    vsp_direction: float | None
    vsp_direction_ci: tuple[float, float] | None
    svd: float | None
    svd_ci: tuple[float, float] | None
    svd_signed: float | None
    change_mean: float | None
    n_flagged: int


def _round(x: float | None, nd: int) -> float | None:
    return None if x is None else round(float(x), nd)


def _ci(ci: tuple[float, float] | None, nd: int) -> list[float] | None:
    return None if ci is None else [round(float(ci[0]), nd), round(float(ci[1]), nd)]


def cell_dict(c: Cell) -> dict[str, Any]:
    """The JSON form of a cell (keys :data:`CELL_KEYS`): percents to 2 decimals, SVD to 3."""
    vsp, vsp_ci = round_vsp(c)
    return {
        **key_json(c),
        "vsp": vsp,
        "vsp_ci": vsp_ci,
        "vsp_all": _round(c.vsp_all, 2),
        "vsp_direction": _round(c.vsp_direction, 2),
        "vsp_direction_ci": _ci(c.vsp_direction_ci, 2),
        "svd": _round(c.svd, 3),
        "svd_ci": _ci(c.svd_ci, 3),
        "svd_signed": _round(c.svd_signed, 3),
        "change_mean": _round(c.change_mean, 3),
        "n": c.n,
        "n_ok": c.n_decided,
        "n_valid": c.n_valid,
        "n_flagged": c.n_flagged,
        "errors": dict(c.errors),
    }


@dataclass(frozen=True)
class SampleTurns:
    """All turn scores of one sample, checked for consistency."""

    sample_id: str
    dim: str
    direction: str
    lang: str
    group: str
    turns: dict[int, TurnScore]


def perceptual_change(dim: str, a: float, b: float) -> float:
    """Change from score ``a`` to ``b`` on the dim's perceptual scale (:mod:`stylebench.metrics.dims`).

    Raises:
        ValueError: unknown dim, NaN/inf values, or a non-positive value for an acoustic dim.
    """
    d = dimension(dim)
    if not (math.isfinite(a) and math.isfinite(b)):
        raise ValueError(f"{dim} scores must be finite, got a={a!r}, b={b!r}")
    if d.positive and (a <= 0 or b <= 0):
        raise ValueError(f"{dim} scores must be > 0 on their linear scale, got a={a!r}, b={b!r}")
    return d.change(a, b)


def _signed_change(dim: str, direction: str, a: float, b: float) -> float:
    """The perceptual change ``a -> b`` with the instructed sign positive."""
    if direction not in DIRECTIONS:
        raise ValueError(f"unknown direction {direction!r}; expected one of {DIRECTIONS}")
    change = perceptual_change(dim, a, b)
    return change if direction == "intensify" else -change


def has_asked_sign(dim: str, direction: str, a: float, b: float) -> bool:
    """True when the change ``a -> b`` has the instructed sign, of any size (intensify: > 0,
    attenuate: < 0; no change has no sign): a sample counted by ``vsp_direction``."""
    return _signed_change(dim, direction, a, b) > 0


def direction_rate(
    moved: Sequence[bool], boot: dict[str, Any]
) -> tuple[float | None, tuple[float, float] | None]:
    """``vsp_direction`` and its CI over the decided samples' ``moved`` (True: the change has
    the asked sign), totalled as VSP is (:func:`~stylebench.scoring.vsp.total_vsp`)."""
    total = total_vsp(moved, **boot)
    return total.vsp, total.vsp_ci


def is_valid(dim: str, direction: str, a: float, b: float, thresholds: Thresholds) -> bool:
    """True when the change ``a -> b`` has the instructed sign and reaches the dim's threshold.

    Intensify needs a change > 0 and attenuate < 0 (zero is never valid); ``|change| >= threshold``
    is tested with a 1e-9 relative tolerance so an exact-threshold change counts as valid.
    """
    signed = _signed_change(dim, direction, a, b)
    thr = thresholds.for_dim(dim)
    return signed > 0 and signed >= thr * (1.0 - _BOUNDARY_EPS)


def relative_change(dim: str, a: float, b: float) -> float:
    """Signed relative change ``100*(b-a)/a`` on the linear scale; ``b-a`` for emotion."""
    return dimension(dim).relative(a, b)


def collect_samples(
    scores: Iterable[TurnScore], *, exclude: Collection[str] = ()
) -> list[SampleTurns]:
    """Group turn scores by sample id (sorted), dropping ids in ``exclude``.

    Raises:
        ValueError: a duplicate (sample_id, turn), or a sample whose dim, direction, lang or group
            differ between its turns.
    """
    excluded = set(exclude)
    by_id: dict[str, SampleTurns] = {}
    for s in scores:
        if s.sample_id in excluded:
            continue
        cur = by_id.get(s.sample_id)
        if cur is None:
            by_id[s.sample_id] = SampleTurns(s.sample_id, s.dim, s.direction, s.lang, s.group, {})
            cur = by_id[s.sample_id]
        if s.turn in cur.turns:
            raise ValueError(
                f"duplicate record for sample {s.sample_id!r} turn {s.turn}; "
                "deduplicate the score records (keep the latest per (sample_id, turn))"
            )
        mine = (s.dim, s.direction, s.lang, s.group)
        theirs = (cur.dim, cur.direction, cur.lang, cur.group)
        if mine != theirs:
            raise ValueError(
                f"sample {s.sample_id!r}: turn {s.turn} has (dim, direction, lang, group)={mine} "
                f"but an earlier turn has {theirs}; one sample must keep one cell key"
            )
        cur.turns[s.turn] = s
    return [by_id[k] for k in sorted(by_id)]


def _mean(values: Sequence[float]) -> float | None:
    return float(np.mean(values)) if len(values) else None


def aggregate_cell(
    key: CellKey,
    members: Sequence[SampleTurns],
    pair: tuple[int, int],
    thresholds: Thresholds,
    boot: dict[str, Any],
) -> Cell:
    """The :class:`Cell` labelled ``key`` over ``members``' change from turn ``pair[0]`` to
    ``pair[1]`` (``boot``: :func:`bootstrap_ci`'s ``n_boot``, ``seed``, ``ci``).

    Each sample is judged by its own dim and direction, so a caller may pool samples under a
    label of its own (``stylebench pairs`` pools both directions of a dim as ``"all"``); one
    cell should still hold one dim, whose scale its changes are on.
    """
    valid, verdicts, signed, changes = [], [], [], []  # |rel| if valid; bool; rel; perceptual
    moved: list[bool] = []  # the asked sign, any size: the direction-only rate
    errors: dict[str, int] = {}
    n_flagged = 0
    for sample in members:
        ta, tb = sample.turns.get(pair[0]), sample.turns.get(pair[1])
        got = pair_values(ta, tb)
        if isinstance(got, str):
            errors[got] = errors.get(got, 0) + 1
            continue
        a, b = got
        dim = sample.dim
        ok_valid = is_valid(dim, sample.direction, a, b, thresholds)
        verdicts.append(ok_valid)
        moved.append(has_asked_sign(dim, sample.direction, a, b))
        signed.append(relative_change(dim, a, b))
        changes.append(perceptual_change(dim, a, b))
        if ok_valid:
            valid.append(abs(relative_change(dim, a, b)))
        n_flagged += bool((ta is not None and ta.flags) or (tb is not None and tb.flags))
    n = len(members)
    vsp_direction, vsp_direction_ci = direction_rate(moved, boot)
    return vsp_cell(
        Cell,
        key,
        verdicts,
        n=n,
        **boot,
        errors=errors,
        vsp_all=100.0 * len(valid) / n if n else None,
        vsp_direction=vsp_direction,
        vsp_direction_ci=vsp_direction_ci,
        svd=_mean(valid),
        svd_ci=bootstrap_ci(valid, **boot),
        svd_signed=_mean(signed),
        change_mean=_mean(changes),
        n_flagged=n_flagged,
    )


def cell_sort_key(dim: str, direction: str, lang: str, pair: str, group: str) -> tuple:
    """Deterministic order: DIMS order, DIRECTIONS order, then lang, pair, group."""
    return (DIMS.index(dim), DIRECTIONS.index(direction), lang, pair, group)


def score_cells(
    scores: Iterable[TurnScore],
    *,
    thresholds: Thresholds = Thresholds(),  # noqa: B008 - frozen, immutable default
    n_boot: int = 2000,
    seed: int = 0,
    ci: float = 0.95,
    exclude: Collection[str] = (),
) -> list[Cell]:
    """Score every (dim, direction, lang, pair, group) cell.

    Every sample is counted in both pairs of its cell key. VSP's CI bootstraps the per-sample valid
    indicator (0/100) over ok samples; SVD's CI bootstraps the per-sample relative change over
    valid samples; both use ``seed`` so results are deterministic. Ids in ``exclude`` (e.g. failed
    by a relevance gate) are counted nowhere.

    Raises:
        ValueError: duplicate (sample_id, turn), inconsistent cell keys within a sample, or bad
            ``n_boot``/``ci``.
    """
    check_boot(n_boot, ci)
    boot = {"n_boot": n_boot, "seed": seed, "ci": ci}
    groups: dict[tuple[str, str, str, str], list[SampleTurns]] = {}
    for sample in collect_samples(scores, exclude=exclude):
        key = (sample.dim, sample.direction, sample.lang, sample.group)
        groups.setdefault(key, []).append(sample)
    cells = []
    for (dim, direction, lang, group), members in groups.items():
        for pair in PAIRS:
            cell_key = (dim, direction, lang, f"{pair[0]}-{pair[1]}", group)
            cells.append(aggregate_cell(cell_key, members, pair, thresholds, boot))
    return sorted(cells, key=lambda c: cell_sort_key(c.dim, c.direction, c.lang, c.pair, c.group))
