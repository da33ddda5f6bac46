"""features: pitch, volume and speaking-rate measurements for every ok reply, and its speech
quality (DNSMOS P.835 SIG/BAK/OVRL, a measured value, never a gate here) where speechmos is
installed and ``--quality`` is on (:attr:`FeatureConfig.quality`).

A sample's three replies are processed together: the octave-error guard on F0 takes its range
from the speaker's own voiced frames across the sample (:func:`stylebench.metrics.pitch.speaker_f0_range`).
Which keys a record holds, and at which definition version, comes from the metric specs
(:func:`stylebench.metrics.spec.feature_specs`): a key no spec declares is a bug, caught here.
Unscorable audio becomes an error record with the reason, never a crash of the run. A sample is
measured by a :class:`FeaturesJob`, stateless, so any process computes it: this one, a pool of
processes on this machine (``--feature-workers``) or a Ray task.
"""

from __future__ import annotations

import tempfile
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, ClassVar

from stylebench.audio import AudioError, load_audio
from stylebench.metrics.spec import check_declared
from stylebench.pipeline.blobs import Blob
from stylebench.pipeline.keys import fingerprint
from stylebench.pipeline.stage import PROVENANCE, Unit
from stylebench.records import (
    FEATURES,
    FeatureRecord,
    Key,
    RecordKind,
    RespondRecord,
    Sample,
    TranscriptRecord,
)
from stylebench.stages.measure import ANALYSIS_SR, FeatureConfig, analyse_reply, finish_sample
from stylebench.stages.outputs import LabelledRun, ReportPart, ScoredView
from stylebench.store import RunStore

#: the respond record's ``raw`` key a wrapper sets when its reply stopped at the model's token
#: budget (docs/models.md, Kimi-Audio): the reply is cut off, and no score reads it
TRUNCATED = "truncated_at_token_budget"


class FeaturesStage:
    """One unit per sample (its ok replies and their transcripts)."""

    records: ClassVar[RecordKind[FeatureRecord]] = FEATURES
    name: ClassVar[str] = FEATURES.name
    errors: ClassVar[tuple[type[BaseException], ...]] = ()
    unit: ClassVar[str] = "sample"

    def __init__(
        self,
        store: RunStore,
        samples: Sequence[Sample],
        replies: Mapping[Key, RespondRecord],
        transcripts: Mapping[Key, TranscriptRecord],
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
            reps = {
                k: r
                for k in s.turn_numbers
                if (r := self.replies.get((s.id, k))) is not None and r.status == "ok"
            }
            trs = {k: t for k in reps if (t := self.transcripts.get((s.id, k))) is not None}
            key = fingerprint(
                cfp,
                {k: r.sha256 for k, r in reps.items()},
                {k: (t.status, t.text) for k, t in trs.items()},
            )
            if reps:
                units.append(Unit(s.id, {(s.id, k): key for k in reps}, payload=(s, reps, trs)))
        return units

    resident = None  # stateless: any worker computes any sample

    def job(self, unit: Unit, done: Mapping[Key, FeatureRecord]) -> FeaturesJob:
        s, reps, trs = unit.payload
        pending = tuple(
            k for k in reps if not (done.get((s.id, k)) and done[(s.id, k)].status == "ok")
        )
        audio = {
            k: Blob(f"reply/{Path(r.audio).name}", path=str(self.store.root / r.audio))
            for k, r in reps.items()
        }
        texts = {k: r.text for k, r in reps.items()}
        fps = {k: unit.fps[(s.id, k)] for k in reps}
        cut = tuple(k for k, r in reps.items() if (r.raw or {}).get(TRUNCATED) is True)
        return FeaturesJob(
            s.id, s.lang, audio, texts, trs, fps, pending, self.cfg, self.strict, cut
        )

    def accept(
        self, unit: Unit, outcomes: Iterable[FeatureRecord], done: Mapping[Key, FeatureRecord]
    ) -> Iterable[FeatureRecord]:
        return outcomes

    def compute(self, unit: Unit, done: Mapping[Key, FeatureRecord]) -> Iterator[FeatureRecord]:
        return self.job(unit, done).run(None)


@dataclass(frozen=True)
class FeaturesJob:
    """One sample's measurements, computable anywhere (its replies' audio as blobs)."""

    sample_id: str
    lang: str
    audio: Mapping[int, Blob]
    texts: Mapping[int, str]
    transcripts: Mapping[int, Any]
    fps: Mapping[int, str]
    pending: tuple[int, ...]
    cfg: FeatureConfig
    strict: bool = False
    #: turns whose model says the reply stopped at its token budget, cut off mid-reply
    truncated: tuple[int, ...] = ()

    def shipped(self) -> FeaturesJob:
        return replace(self, audio={k: b.shipped() for k, b in self.audio.items()})

    def run(
        self, resident: Any = None, where: Mapping[str, Any] | None = None
    ) -> Iterator[FeatureRecord]:
        """Yield the records of the pending turns; unscorable audio is an error record."""
        with tempfile.TemporaryDirectory(prefix="stylebench-job-") as tmp:
            yield from self._run(Path(tmp), dict(where) if where else {})

    def _run(self, tmp: Path, raw: dict[str, Any]) -> Iterator[FeatureRecord]:
        sid, pending = self.sample_id, set(self.pending)
        raw = {PROVENANCE: raw} if raw else {}
        parts: dict[int, dict[str, Any]] = {}
        quality: dict[int, tuple[dict[str, float], list[str]]] = {}
        for k, blob in self.audio.items():
            try:
                wave, sr = load_audio(blob.local(tmp), target_sr=ANALYSIS_SR)
                parts[k] = analyse_reply(wave, sr, self.cfg)
                if self.cfg.quality and k in pending:
                    quality[k] = reply_quality(wave, sr)
            except (AudioError, ValueError) as exc:
                if self.strict:
                    raise
                if k in pending:
                    yield FeatureRecord(
                        sid, k, "error", self.fps[k], error=f"{type(exc).__name__}: {exc}", raw=raw
                    )
        finished = (
            finish_sample(parts, dict(self.transcripts), self.lang, dict(self.texts))
            if parts
            else {}
        )
        for k, result in finished.items():
            if k not in pending:
                continue
            if isinstance(result, str):
                if self.strict:
                    raise ValueError(f"{sid} turn {k}: {result}")
                yield FeatureRecord(sid, k, "error", self.fps[k], error=result, raw=raw)
            else:
                q_values, q_flags = quality.get(k, ({}, []))
                values = {**result[0], **q_values}
                check_declared(values)
                flags = [
                    *result[1],
                    *q_flags,
                    *(["reply_truncated"] if k in self.truncated else []),
                ]
                yield FeatureRecord(sid, k, "ok", self.fps[k], values=values, flags=flags, raw=raw)


def reply_quality(wave: Any, sr: int) -> tuple[dict[str, float], list[str]]:
    """A reply's DNSMOS SIG/BAK/OVRL (:mod:`stylebench.metrics.quality`), or no values and a
    ``no_dnsmos`` flag saying why (a reply too short for it); never a gate here: the score stage
    applies ``--min-quality``. The ONNX models load once per process."""
    from stylebench.metrics.quality import dnsmos

    try:
        return dnsmos(wave, sr).values(), []
    except ValueError as exc:
        return {}, [f"no_dnsmos: {exc}"]


def quality_report_part(scored: ScoredView) -> ReportPart:
    """The report's speech-quality block (:func:`stylebench.scoring.quality.quality_block`) over
    all samples, with what it measures and, when no reply has a score, why."""
    from stylebench.metrics.quality import MISSING
    from stylebench.scoring.quality import quality_block

    cfg, features = scored.cfg, scored.records.of(FEATURES)
    block = quality_block(scored.samples, features, n_boot=cfg.score.n_boot, seed=cfg.decode.seed)
    block["measure"] = (
        "DNSMOS P.835 (speechmos ONNX models, 16 kHz, 1-5): SIG speech, BAK background, OVRL "
        "overall; trained on noisy and noise-suppressed human speech, a measured value, not a "
        "style score (docs/metrics.md#speech-quality)"
    )
    block["min_quality"] = cfg.score.min_quality
    if block["measured"] == 0:
        ok = any(f.status == "ok" for f in features.values())
        if not cfg.measure.quality:
            block["note"] = "speech quality not measured (--no-quality)"
        elif not ok:
            block["note"] = "speech quality not measured: no reply was measured"
        else:
            block["note"] = "speech quality not measured: " + MISSING
    return ReportPart({"quality": block})


def quality_compare(
    runs: Sequence[LabelledRun], shared: frozenset[str], boot: Mapping[str, Any]
) -> dict[str, list[dict[str, Any]]]:
    """Speech quality per model and turn over the shared samples (all of them: the ``all`` group
    of :func:`stylebench.scoring.quality.quality_block`), and its change from turn 1."""
    from stylebench.scoring.quality import ALL, quality_block

    turns: list[dict[str, Any]] = []
    changes: list[dict[str, Any]] = []
    for r in runs:
        samples = [s for s in r.scored.samples if s.id in shared]
        block = quality_block(samples, r.scored.records.of(FEATURES), **boot)
        turns += [{"model": r.label, **t} for t in block["turns"] if t["group"] == ALL]
        changes += [{"model": r.label, **c} for c in block["changes"] if c["group"] == ALL]
    return {"turns": turns, "changes": changes}


def quality_compare_markdown(q: Mapping[str, Any]) -> list[str]:
    """Speech quality (DNSMOS) per model and turn, and its change from turn 1 with its CI."""
    from stylebench.report.md_text import md_table
    from stylebench.report.sections.quality import CHANGE_HEAD, TURN_HEAD, quality_rows

    if not (q or {}).get("turns"):
        return []
    turns, changes = quality_rows(q, key="model")
    lines = ["", "## Speech quality per model and turn (DNSMOS P.835, 1-5)", ""]
    lines += md_table(("model", *TURN_HEAD[1:]), turns)
    lines += ["", "Change from turn 1, paired per sample (bootstrap CI):", ""]
    lines += md_table(("model", *CHANGE_HEAD[1:]), changes)
    return lines


def quality_compare_html(q: Mapping[str, Any]) -> list[str]:
    """The same two tables on the comparison page."""
    from stylebench.report.html_table import html_num, table

    if not (q or {}).get("turns"):
        return []
    turns = table(
        "quality",
        ("model", "turn", "SIG", "BAK", "OVRL", "n ok / n"),
        [
            [
                (r["model"], r["model"]),
                (str(r["turn"]), r["turn"]),
                (html_num(r["sig"], None, 2), r["sig"]),
                (html_num(r["bak"], None, 2), r["bak"]),
                (html_num(r["ovrl"], None, 2), r["ovrl"]),
                (f"{r['n_ok']}/{r['n']}", r["n_ok"]),
            ]
            for r in q["turns"]
        ],
    )
    changes = table(
        "quality-change",
        ("model", "turns", "Δ SIG [CI]", "Δ BAK [CI]", "Δ OVRL [CI]", "n paired"),
        [
            [
                (r["model"], r["model"]),
                (r["pair"], r["pair"]),
                *(
                    (html_num(r[f"d_{name}"], r[f"d_{name}_ci"], 2), r[f"d_{name}"])
                    for name in ("sig", "bak", "ovrl")
                ),
                (str(r["n"]), r["n"]),
            ]
            for r in q["changes"]
        ],
    )
    return [
        "<h2>Speech quality per model and turn (DNSMOS P.835, 1-5)</h2>"
        + turns
        + "<p>Change from turn 1, paired per sample (bootstrap CI):</p>"
        + changes
    ]
