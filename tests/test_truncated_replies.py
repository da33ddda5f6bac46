"""A reply the model says it cut off at its token budget (Kimi-Audio's
``raw.truncated_at_token_budget``) is measured, flagged and unscored on every dimension, with
its reason, instead of being scored as if it were the whole reply."""

from __future__ import annotations

from pathlib import Path

from signals import speechlike_wav

from stylebench.metrics.dims.base import ScoreContext, all_dims
from stylebench.pipeline.blobs import Blob
from stylebench.records import FeatureRecord
from stylebench.stages.features import FeaturesJob
from stylebench.stages.measure import FeatureConfig


def test_a_truncated_reply_is_unscored_on_every_dimension(tmp_path: Path) -> None:
    audio = {}
    for k, f0 in ((1, 150.0), (2, 170.0)):
        p = tmp_path / f"t{k}.wav"
        p.write_bytes(speechlike_wav(16000, 2.5, f0))
        audio[k] = Blob.of(p)
    job = FeaturesJob(
        "s",
        "en",
        audio,
        {1: "", 2: ""},
        {},
        {1: "a", 2: "b"},
        (1, 2),
        FeatureConfig("energy"),
        truncated=(2,),
    )
    recs = {r.turn: r for r in job.run()}
    assert recs[1].status == recs[2].status == "ok"
    assert "reply_truncated" in recs[2].flags and "reply_truncated" not in recs[1].flags
    feats = {
        k: FeatureRecord("s", k, "ok", "x", values=r.values, flags=r.flags) for k, r in recs.items()
    }
    for dim in all_dims():
        if dim.name == "emotion":  # scored against turn 1 by the prosodic index
            continue
        values, _ = dim.turn_values(None, feats, ScoreContext())
        assert isinstance(values[2], str) and "token budget" in values[2], (dim.name, values)
