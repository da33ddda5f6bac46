"""The scoring settings a run's config gives: the one place they are taken from it."""

from __future__ import annotations

from stylebench.config import RunConfig
from stylebench.metrics.dims.base import ScoreContext, setting_defaults
from stylebench.scoring.cells import Thresholds, thresholds_from


def score_context(cfg: RunConfig) -> ScoreContext:
    """The settings a per-reply score depends on (the one place they are taken from config)."""
    wanted = setting_defaults()  # each dimension's settings, named as the MeasureConfig fields
    return ScoreContext.of(
        cfg.score.min_quality, **{name: getattr(cfg.measure, name) for name in wanted}
    )


def thresholds_of(cfg: RunConfig) -> Thresholds:
    """The run's just-noticeable change per dimension."""
    return thresholds_from(cfg.score)
