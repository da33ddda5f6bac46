"""The one VSP totaller: per-sample verdicts -> percent valid, its bootstrap CI and its counts.

Every VSP in a report comes from :func:`total_vsp`: the acoustic cells (a sample is valid when
its measured change has the asked sign and reaches the threshold, :mod:`stylebench.scoring.cells`),
the caption probe's cells (a caption judge's verdict, :mod:`stylebench.scoring.captions`) and
the human cells of a listening test (the raters' majority, :mod:`stylebench.ratings.importer`).
What differs between them is only how a sample's verdict is reached and which samples are left
undecided; the totalling is this function.

VSP = 100 * valid / decided, over the decided samples; its CI is the percentile bootstrap
(:func:`~stylebench.scoring.bootstrap.bootstrap_ci`) of the per-sample 0/100 indicator.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

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


def round_vsp(total: VspTotal) -> tuple[float | None, list[float] | None]:
    """VSP and its CI as every JSON form writes them: to 2 decimals, the CI as a list."""
    ci = total.vsp_ci
    return (
        None if total.vsp is None else round(total.vsp, 2),
        None if ci is None else [round(float(ci[0]), 2), round(float(ci[1]), 2)],
    )
