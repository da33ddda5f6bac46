"""probe: automatic emotion-recogniser probabilities for every ok reply of an emotion sample.

Records are keyed (sample_id, turn) and fingerprinted by the probe, its model and the reply's
sha256, so a re-run with the same probe skips what is done, a different model writes new records
beside the old ones, and failed turns are retried. Acoustic samples are never probed.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from typing import Any, ClassVar

from stylebench.pipeline.keys import fingerprint
from stylebench.pipeline.stage import Unit
from stylebench.records import PROBE_SCORES, RESPONSES, Key, ProbeRecord, RecordKind, RespondRecord
from stylebench.stages.outputs import ScoredPart, ScoreInputs
from stylebench.store import RunStore

PROBE_VERSION = "1"


def probe_fp(probe: str, model: str) -> str:
    return fingerprint("probe", probe, model, PROBE_VERSION)


class ProbeStage:
    """One unit per ok reply of an emotion sample; the probe model is built once, on first use."""

    records: ClassVar[RecordKind[ProbeRecord]] = PROBE_SCORES
    name: ClassVar[str] = PROBE_SCORES.name
    errors: ClassVar[tuple[type[BaseException], ...]] = (ValueError, RuntimeError, OSError)
    unit: ClassVar[str] = "reply"

    def __init__(
        self,
        store: RunStore,
        replies: Mapping[Key, RespondRecord],
        emotion_ids: set[str],
        probe: tuple[str, str],
        get_probe: Callable[[], Any],
    ) -> None:
        self.store, self.replies, self.emotion_ids = store, replies, emotion_ids
        self.probe, self.get_probe = probe, get_probe

    def plan(self) -> list[Unit]:
        pfp = probe_fp(*self.probe)
        return [
            Unit(f"{k[0]}/{k[1]}", {k: fingerprint(pfp, r.sha256)}, payload=r)
            for k, r in self.replies.items()
            if r.status == "ok" and k[0] in self.emotion_ids
        ]

    def compute(self, unit: Unit, done: Mapping[Key, ProbeRecord]) -> Iterator[ProbeRecord]:
        from stylebench.metrics.emotion_probe import top

        ((key, fp),) = unit.fps.items()
        backend, model = self.probe
        probs = self.get_probe().probabilities(self.store.root / unit.payload.audio)
        label, p = top(probs)
        yield ProbeRecord(
            *key, "ok", fp, probs=probs, top=label, top_prob=p, backend=backend, model=model
        )


def probe_part(inputs: ScoreInputs) -> ScoredPart:
    """The probe stage's part of a scored run: its per-turn scores of the probed samples
    (:class:`~stylebench.scoring.emotion.ProbeScores`, scored with ``--probe-delta``), or no
    value when the probe is off or no sample's dimension is probed."""
    from stylebench.metrics.dims.base import dimension
    from stylebench.scoring.cells import Thresholds
    from stylebench.scoring.emotion import probe_scores

    cfg, records = inputs.cfg, inputs.measured.records
    if cfg.emotion.emotion_probe == "none" or not any(
        dimension(s.dim).probed for s in inputs.samples
    ):
        return ScoredPart()
    return ScoredPart(
        probe_scores(
            inputs.samples,
            records.of(RESPONSES),
            records.of(PROBE_SCORES),
            Thresholds(emotion_delta=cfg.emotion.probe_delta),
        )
    )
