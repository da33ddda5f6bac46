"""The scoring settings a run's config gives: the one place they are taken from it."""

from __future__ import annotations

from stylebench.config import RunConfig
from stylebench.metrics.dims.base import ScoreContext
from stylebench.scoring.cells import Thresholds, thresholds_from


def score_context(cfg: RunConfig) -> ScoreContext:
    """The settings a per-reply score depends on (the one place they are taken from config)."""
    m = cfg.measure
    return ScoreContext(m.pitch_stat, m.speed_source, m.transcript_max_error, cfg.score.min_quality)


def thresholds_of(cfg: RunConfig) -> Thresholds:
    """The run's just-noticeable change per dimension."""
    return thresholds_from(cfg.score)
