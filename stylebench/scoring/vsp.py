"""The one VSP totaller: per-sample verdicts -> percent valid, its bootstrap CI and its counts.

Every VSP in a report comes from :func:`total_vsp`: the acoustic cells (a sample is valid when
its measured change has the asked sign and reaches the threshold, :mod:`stylebench.scoring.cells`),
the caption probe's cells (a caption judge's verdict, :mod:`stylebench.scoring.captions`) and
the human cells of a listening test (the raters' majority, :mod:`stylebench.ratings.importer`).
What differs between them is only how a sample's verdict is reached and which samples are left
undecided; the totalling is this function, and every such cell is a :class:`VspCell` built by
:func:`vsp_cell`, so the three kinds share one shape and one set of field names (``n``,
``n_decided``, ``n_valid``, ``vsp``, ``vsp_ci``, ``errors``), each kind adding its own numbers.

The files keep the names they had before the shape was shared (a cell's JSON form is written
by its kind: the acoustic cells' ``n_ok`` and the human cells' ``n_judged`` are ``n_decided``);
:data:`STORED_AS` lists those names in one place.

VSP = 100 * valid / decided, over the decided samples; its CI is the percentile bootstrap
(:func:`~stylebench.scoring.bootstrap.bootstrap_ci`) of the per-sample 0/100 indicator.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any, TypeVar

import numpy as np

from stylebench.scoring.bootstrap import bootstrap_ci


@dataclass(frozen=True)
class VspTotal:
    """VSP over the decided samples of a cell (unrounded; percents 0-100)."""

    vsp: float | None  # None when no sample was decided
    vsp_ci: tuple[float, float] | None
    n_decided: int
    n_valid: int
    #: the per-sample 0/100 indicators, in the order given
    indicator: tuple[float, ...]


def total_vsp(valid: Iterable[bool], *, n_boot: int, seed: int, ci: float = 0.95) -> VspTotal:
    """VSP of the decided samples' verdicts ``valid`` (True: moved as asked)."""
    indicator = tuple(100.0 if v else 0.0 for v in valid)
    return VspTotal(
        vsp=float(np.mean(indicator)) if indicator else None,
        vsp_ci=bootstrap_ci(indicator, n_boot=n_boot, seed=seed, ci=ci),
        n_decided=len(indicator),
        n_valid=sum(1 for x in indicator if x),
        indicator=indicator,
    )


def round_vsp(total: VspTotal | VspCell) -> tuple[float | None, list[float] | None]:
    """VSP and its CI as every JSON form writes them: to 2 decimals, the CI as a list."""
    ci = total.vsp_ci
    return (
        None if total.vsp is None else round(total.vsp, 2),
        None if ci is None else [round(float(ci[0]), 2), round(float(ci[1]), 2)],
    )


#: what a cell is: one (dim, direction, lang, pair, group)
CellKey = tuple[str, str, str, str, str]


@dataclass(frozen=True)
class VspCell:
    """One VSP cell, whichever way its samples' verdicts were reached (percents 0-100).

    ``n`` samples fall in the cell; ``n_decided`` of them have a verdict (the VSP's
    denominator) and ``n_valid`` moved as asked; ``errors`` counts the undecided ones by reason,
    where the kind records one. A kind's own numbers are fields of its subclass, keyword-only.
    """

    dim: str
    direction: str
    lang: str
    pair: str
    group: str
    n: int
    n_decided: int
    n_valid: int
    vsp: float | None
    vsp_ci: tuple[float, float] | None
    errors: dict[str, int] = field(default_factory=dict)


C = TypeVar("C", bound=VspCell)

#: per kind, the JSON name a shared field is stored under where it is not the field's own (the
#: files predate the shared shape; renaming them would change every stored report and ratings file)
STORED_AS: Mapping[str, Mapping[str, str]] = {
    "acoustic": {"n_decided": "n_ok"},
    "human": {"n_decided": "n_judged"},
    "caption": {},
}


def vsp_cell(
    cls: type[C],
    key: CellKey,
    verdicts: Iterable[bool],
    *,
    n: int,
    n_boot: int,
    seed: int,
    ci: float = 0.95,
    errors: Mapping[str, int] | None = None,
    **extra: Any,
) -> C:
    """The ``cls`` cell labelled ``key`` over the decided samples' ``verdicts`` (True: moved as
    asked), ``n`` samples in all; ``extra`` are the kind's own fields."""
    total = total_vsp(verdicts, n_boot=n_boot, seed=seed, ci=ci)
    if total.n_decided > n:
        raise ValueError(f"cell {key}: {total.n_decided} verdicts for {n} samples")
    return cls(
        *key,
        n=n,
        n_decided=total.n_decided,
        n_valid=total.n_valid,
        vsp=total.vsp,
        vsp_ci=total.vsp_ci,
        errors=dict(sorted((errors or {}).items())),
        **extra,
    )


def key_json(cell: VspCell, *, group: bool = True) -> dict[str, str]:
    """The cell's key as its JSON form begins: dim, direction, lang, pair and (unless the kind
    has none) group."""
    out = {"dim": cell.dim, "direction": cell.direction, "lang": cell.lang, "pair": cell.pair}
    return {**out, "group": cell.group} if group else out
