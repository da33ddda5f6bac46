"""Drive the measuring stages in order, each handing its current records to the next.

transcribe -> features -> (probe) -> judge. The ASR model, the probe and the judge are built once,
and only when a stage has work for them. ``compute=False`` collects the current records of every
stage without computing anything (``stylebench report``), the transcripts those of the CPU code
path the manifest records (:func:`recorded_asr_machine`), not this machine's.
"""

from __future__ import annotations

import functools
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from stylebench.config import RunConfig
from stylebench.metrics.dims.base import dimension
from stylebench.pipeline import gate
from stylebench.pipeline.features import FeaturesStage
from stylebench.pipeline.measure import FeatureConfig
from stylebench.pipeline.stage import run_stage
from stylebench.records import Key, Sample
from stylebench.store import RunStore


@dataclass
class Measured:
    """Every stage's current records for one run, and what each stage did."""

    replies: dict[Key, Any]
    transcripts: dict[Key, Any] = field(default_factory=dict)
    features: dict[Key, Any] = field(default_factory=dict)
    probes: dict[Key, Any] = field(default_factory=dict)
    verdicts: dict[Key, Any] = field(default_factory=dict)
    captions: dict[Key, Any] = field(default_factory=dict)
    caption_verdicts: dict[Key, Any] = field(default_factory=dict)
    caption_desc: dict[str, Any] = field(default_factory=dict)
    judge_desc: dict[str, Any] | None = None
    inputs: gate.Inputs = field(default_factory=dict)
    counts: dict[str, dict[str, int]] = field(default_factory=dict)


def feature_config(cfg: RunConfig) -> FeatureConfig:
    m = cfg.measure
    return FeatureConfig(vad=m.vad, f0_floor=m.f0_floor, f0_ceil=m.f0_ceil)


def recorded_asr_machine(store: RunStore) -> dict[str, str] | None:
    """The CPU code path the run's transcripts were made on, as its manifest records it; ``{}``
    for a manifest from before it was recorded (whose keys do not name one), None without one."""
    if not store.exists():
        return None
    return dict((store.read_manifest().get("environment") or {}).get("asr_machine") or {})


def measure(
    store: RunStore,
    samples: Sequence[Sample],
    cfg: RunConfig,
    replies: dict[Key, Any],
    *,
    judge: Any = None,
    compute: bool = True,
    progress: bool = True,
    executor: Any = None,
) -> Measured:
    """Run (or, with ``compute=False``, only collect) every stage after respond.

    ``judge`` is the judge built from ``cfg`` (:func:`.gate.make_judge`); ``None`` skips judging.
    ``executor`` computes the transcribe and features units (:mod:`stylebench.executors`).
    """
    out = Measured(replies)
    kw = {"compute": compute, "strict": cfg.strict, "progress": progress}
    m, ex = cfg.measure, cfg.executor
    if m.asr != "none":
        from stylebench.pipeline.transcribe import AsrSpec, TranscribeStage

        asr, spec = (m.asr, m.asr_model), AsrSpec(m.asr, m.asr_model, ex.asr_device)
        stage = TranscribeStage(
            store,
            replies,
            {s.id: s.lang for s in samples},
            asr,
            functools.cache(spec),
            spec=spec,
            batch_size=ex.asr_batch_size,
            strict=cfg.strict,
            machine=None if compute else recorded_asr_machine(store),
        )
        res = run_stage(store, stage, executor=executor, **kw)
        out.transcripts, out.counts["transcribe"] = res.records, res.counts
    res = run_stage(
        store,
        FeaturesStage(
            store, samples, replies, out.transcripts, feature_config(cfg), strict=cfg.strict
        ),
        executor=executor,
        **kw,
    )
    out.features, out.counts["features"] = res.records, res.counts
    emo = {s.id for s in samples if s.dim == "emotion"}
    if cfg.emotion.emotion_probe != "none" and emo:
        from stylebench.pipeline.probe import PROBES, ProbeStage

        probe = (cfg.emotion.emotion_probe, cfg.emotion.probe_model)
        stage = ProbeStage(
            store, replies, emo, probe, functools.cache(lambda: PROBES.load(probe[0])(probe[1]))
        )
        res = run_stage(store, stage, **kw)
        out.probes, out.counts["probe"] = res.records, res.counts
    if cfg.caption.captioner != "none":
        _caption(store, samples, cfg, out, kw)
    if judge is not None:
        _judge(store, samples, cfg, judge, out, kw)
    return out


def _caption(
    store: RunStore, samples: Sequence[Sample], cfg: RunConfig, out: Measured, kw: dict[str, Any]
) -> None:
    from stylebench.metrics.captions.base import CAPTION_JUDGES, CAPTIONERS, load_instruction
    from stylebench.metrics.dims.base import ScoreContext
    from stylebench.metrics.judges.cache import JudgeCache, default_cache_path
    from stylebench.pipeline.caption import CaptionJudgeStage, CaptionStage, build, dim_values

    cc, m = cfg.caption, cfg.measure
    captioner = build(
        CAPTIONERS, cc.captioner, cc.caption_model, cc.caption_url, cc.caption_args, "captioner"
    )
    offline = cc.captioner == "features"  # reads the measurements; emotion has none to describe
    dims = sorted({s.dim for s in samples if not (offline and not dimension(s.dim).acoustic)})
    instructions = {d: load_instruction(d, cc.caption_prompt) for d in dims}
    extra: dict[str, Any] = {}
    if offline:
        ctx = ScoreContext(m.pitch_stat, m.speed_source, m.transcript_max_error)
        extra = {"features": out.features, "values": dim_values(samples, out.features, ctx)}
    stage = CaptionStage(
        store, samples, out.replies, captioner, instructions, strict=cfg.strict, **extra
    )
    res = run_stage(store, stage, **kw)
    out.captions, out.counts["caption"] = res.records, res.counts
    jargs = {
        **cc.caption_judge_args,
        **({"prompt": cc.caption_judge_prompt} if cc.caption_judge_prompt else {}),
    }
    judge = build(
        CAPTION_JUDGES,
        cc.caption_judge,
        cc.caption_judge_model,
        cc.caption_judge_url,
        jargs,
        "caption judge",
    )
    out.caption_desc = {
        "captioner": stage.desc,
        "judge": judge.describe(),
        "instructions": {
            d: {"name": i.name, "sha256": i.sha256, "source": i.source}
            for d, i in instructions.items()
        },
    }
    use_cache = cc.caption_judge != "lexicon" and cfg.judge.judge_cache and kw["compute"]
    cache = JudgeCache(default_cache_path()) if use_cache else None
    try:
        res = run_stage(
            store,
            CaptionJudgeStage(samples, out.captions, judge, cache=cache, strict=cfg.strict),
            **kw,
        )
    finally:
        if cache is not None:
            cache.close()
    out.caption_verdicts, out.counts["caption_judge"] = res.records, res.counts


def _judge(
    store: RunStore,
    samples: Sequence[Sample],
    cfg: RunConfig,
    judge: Any,
    out: Measured,
    kw: dict[str, Any],
) -> None:
    from stylebench.metrics.judges.cache import JudgeCache, default_cache_path
    from stylebench.pipeline.judge import JudgeStage, plan_requests, sample_inputs

    out.judge_desc = desc = judge.describe()
    heard = out.transcripts if gate.reads_transcripts(cfg) else None
    out.inputs = sample_inputs(samples, out.replies, heard, gate.max_error(cfg))
    requests = plan_requests(samples, out.inputs, desc)
    cache = JudgeCache(default_cache_path()) if cfg.judge.judge_cache and kw["compute"] else None
    try:
        res = run_stage(
            store, JudgeStage(requests, judge, desc, cache=cache, strict=cfg.strict), **kw
        )
    finally:
        if cache is not None:
            cache.close()
    out.verdicts, out.counts["judge"] = res.records, res.counts
