"""Per-reply style scores from the current records: one :class:`TurnScore` per (sample, turn).

What a dimension's score is comes from its module (:mod:`stylebench.metrics.dims`); this module
only walks the records and turns any upstream failure into that turn's error. It reads nothing
from disk: the pipeline hands it the current records.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from stylebench.metrics.dims.base import ScoreContext, Shared, TurnValues, dimension
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
        values, extra = dim.gated_turn_values(s, ok, ctx)
        for k in TURNS:
            rep, feat = replies.get((s.id, k)), features.get((s.id, k))
            if rep is None:
                error = "respond: no record (run not finished)"
            elif rep.status != "ok":
                error = "respond: " + _first_line(rep.error)
            elif feat is None:
                error = "features: not computed yet (run `stylebench score`)"
            else:
                out.append(turn_score(s, k, feat, values, extra, s.emotion))
                continue
            out.append(TurnScore(s.id, s.dim, s.direction, s.lang, k, None, error, (), s.emotion))
    return out


def turn_score(
    sample: Any,
    turn: int,
    feat: FeatureRecord,
    values: TurnValues,
    extra: tuple[str, ...],
    group: str,
) -> TurnScore:
    """One turn's score from its feature record and its dimension's ``turn_values`` result.

    ``sample`` needs ``id``, ``dim``, ``direction`` and ``lang``: a
    :class:`~stylebench.records.Sample`, or a pair of files scored by ``stylebench pairs``;
    ``group`` is the cell's group (a run's: the sample's emotion).
    A feature error, a reason, or a turn the dimension left out is the turn's error; otherwise
    its score carries the dimension's informational flags and the sample's ``extra`` ones.
    """
    dim = dimension(sample.dim)
    value: float | None = None
    error: str | None = None
    flags: tuple[str, ...] = ()
    entry = values.get(turn)
    shared: Shared | None = None
    got: float | str | None
    if isinstance(entry, Shared):
        shared, got = entry, entry.value
    else:
        got = entry
    if feat.status != "ok":
        error = "features: " + _first_line(feat.error)
    elif isinstance(got, str):
        error = got
    elif got is None:
        error = f"{sample.dim}: no score (not measured)"
    else:
        value = got
        flags = tuple(f for f in feat.flags if f in dim.flags) + tuple(extra)
    return TurnScore(
        sample.id,
        sample.dim,
        sample.direction,
        sample.lang,
        turn,
        value,
        error,
        flags,
        group,
        shared.turns if shared is not None and value is not None else (),
        shared.cross_error if shared is not None and value is not None else None,
    )
