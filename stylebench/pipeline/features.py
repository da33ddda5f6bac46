"""features: pitch, volume and speaking-rate measurements for every ok reply.

A sample's three replies are processed together: the octave-error guard on F0 takes its range
from the speaker's own voiced frames across the sample (:func:`stylebench.metrics.pitch.speaker_f0_range`).
Which keys a record holds, and at which definition version, comes from the metric specs
(:func:`stylebench.metrics.spec.feature_specs`): a key no spec declares is a bug, caught here.
Unscorable audio becomes an error record with the reason, never a crash of the run.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from typing import Any, ClassVar

from stylebench.audio import AudioError, load_audio
from stylebench.metrics.spec import check_declared
from stylebench.pipeline.keys import fingerprint
from stylebench.pipeline.measure import ANALYSIS_SR, FeatureConfig, analyse_reply, finish_sample
from stylebench.pipeline.stage import Unit
from stylebench.records import TURNS, FeatureRecord, Key, Sample
from stylebench.store import RunStore


class FeaturesStage:
    """One unit per sample (its ok replies and their transcripts)."""

    name: ClassVar[str] = "features"
    errors: ClassVar[tuple[type[BaseException], ...]] = ()
    unit: ClassVar[str] = "sample"

    def __init__(
        self,
        store: RunStore,
        samples: Sequence[Sample],
        replies: Mapping[Key, Any],
        transcripts: Mapping[Key, Any],
        cfg: FeatureConfig,
        *,
        strict: bool = False,
    ) -> None:
        self.store, self.samples, self.cfg, self.strict = store, samples, cfg, strict
        self.replies, self.transcripts = replies, transcripts

    def plan(self) -> list[Unit]:
        """A sample's fingerprint covers the feature config, its ok replies' sha256 and their
        transcripts, so any change upstream recomputes the sample."""
        cfp = self.cfg.fp()
        units = []
        for s in self.samples:
            reps = {k: r for k in TURNS if (r := self.replies.get((s.id, k))) is not None and r.status == "ok"}  # fmt: skip
            trs = {k: t for k in reps if (t := self.transcripts.get((s.id, k))) is not None}
            key = fingerprint(cfp, {k: r.sha256 for k, r in reps.items()},
                              {k: (t.status, t.text) for k, t in trs.items()})  # fmt: skip
            if reps:
                units.append(Unit(s.id, {(s.id, k): key for k in reps}, payload=(s, reps, trs)))
        return units

    def compute(self, unit: Unit, done: Mapping[Key, Any]) -> Iterator[FeatureRecord]:
        s, reps, trs = unit.payload
        pending = {k for k in reps if not (done.get((s.id, k)) and done[(s.id, k)].status == "ok")}
        parts: dict[int, dict[str, Any]] = {}
        for k, r in reps.items():
            try:
                wave, sr = load_audio(self.store.root / r.audio, target_sr=ANALYSIS_SR)
                parts[k] = analyse_reply(wave, sr, self.cfg)
            except (AudioError, ValueError) as exc:
                if self.strict:
                    raise
                if k in pending:
                    yield FeatureRecord(s.id, k, "error", unit.fps[(s.id, k)], error=f"{type(exc).__name__}: {exc}")  # fmt: skip
        texts = {k: r.text for k, r in reps.items()}
        finished = finish_sample(parts, trs, s.lang, texts) if parts else {}
        for k, result in finished.items():
            if k not in pending:
                continue
            fp = unit.fps[(s.id, k)]
            if isinstance(result, str):
                if self.strict:
                    raise ValueError(f"{s.id} turn {k}: {result}")
                yield FeatureRecord(s.id, k, "error", fp, error=result)
            else:
                check_declared(result[0])
                yield FeatureRecord(s.id, k, "ok", fp, values=result[0], flags=result[1])
