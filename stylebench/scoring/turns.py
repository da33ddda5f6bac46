"""Per-reply style scores from the current records: one :class:`TurnScore` per (sample, turn).

What a dimension's score is comes from its module (:mod:`stylebench.metrics.dims`); this module
only walks the records and turns any upstream failure into that turn's error. It reads nothing
from disk: the pipeline hands it the current records.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from stylebench.metrics.dims.base import ScoreContext, dimension
from stylebench.records import TURNS, FeatureRecord, Key, RespondRecord, Sample
from stylebench.scoring.cells import TurnScore


def _first_line(text: str) -> str:
    return text.splitlines()[0][:300] if text else ""


def collect_turn_scores(
    samples: Sequence[Sample],
    replies: Mapping[Key, RespondRecord],
    features: Mapping[Key, FeatureRecord],
    ctx: ScoreContext,
) -> list[TurnScore]:
    """One score per (sample, turn); a failure anywhere upstream becomes its error."""
    out: list[TurnScore] = []
    for s in samples:
        dim = dimension(s.dim)
        ok = {
            k: f for k in TURNS if (f := features.get((s.id, k))) is not None and f.status == "ok"
        }
        values, extra = dim.turn_values(s, ok, ctx)
        for k in TURNS:
            value, error, flags = None, None, ()
            rep, feat = replies.get((s.id, k)), features.get((s.id, k))
            if rep is None:
                error = "respond: no record (run not finished)"
            elif rep.status != "ok":
                error = "respond: " + _first_line(rep.error)
            elif feat is None:
                error = "features: not computed yet (run `stylebench score`)"
            elif feat.status != "ok":
                error = "features: " + _first_line(feat.error)
            elif isinstance(values.get(k), str):
                error = values[k]
            elif k not in values:
                error = f"{s.dim}: no score (not measured)"
            else:
                value = values[k]
                flags = tuple(f for f in feat.flags if f in dim.flags) + extra
            out.append(
                TurnScore(s.id, s.dim, s.direction, s.lang, k, value, error, flags, s.emotion)
            )
    return out
