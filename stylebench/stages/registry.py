"""The stages after respond, declared as data: :data:`STAGES`, in the order they run.

Each :class:`StageSpec` names its records (``<name>.jsonl``, ``Measured.records[name]``), the
earlier stages whose current records it reads (``inputs``; ``"respond"`` is the replies), the
config section that holds its settings, when it runs (a predicate on the run's config and
samples), and how its :class:`~stylebench.pipeline.stage.Stage` is built; and, after it ran,
what it adds to a scored run, to the report and to a comparison
(:mod:`stylebench.stages.outputs`). The runner (:func:`stylebench.stages.runner.measure`),
scoring (:func:`stylebench.commands.scored.score_run`), the report and ``stylebench compare``
loop over this list and name no stage: adding a stage is one module with the stage class and
its hooks, one record type and one entry here.

A builder sees only the records its spec declares (:attr:`StageInputs.records`), so a stage that
reads another stage's records without saying so fails at once (``KeyError``), not by reading an
empty dict. A stage that did not run for this config hands on no records (``{}``).
"""

from __future__ import annotations

import functools
import logging
from collections.abc import Callable, Collection, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from stylebench.config import Ignored, RunConfig
from stylebench.metrics.dims.base import dimension
from stylebench.pipeline.stage import Stage
from stylebench.records import (
    CAPTION_VERDICTS,
    CAPTIONS,
    FEATURES,
    JUDGEMENTS,
    PROBE_SCORES,
    RESPONSES,
    TRANSCRIPTS,
    RecordKind,
    RunRecords,
    Sample,
)
from stylebench.report.sections import SECTIONS, Section, in_place
from stylebench.stages import gate
from stylebench.stages.loudness import LOUDNESS
from stylebench.stages.measure import FeatureConfig
from stylebench.stages.outputs import (
    ScoredPart,
    ScoreInputs,
    StageCompare,
    StageReport,
)
from stylebench.store import RunStore

if TYPE_CHECKING:
    from stylebench.metrics.judges.cache import JudgeCache

#: the replies: the records every later stage starts from (made by ``RespondStage``, which needs
#: the model and so runs in :func:`stylebench.commands.runs.run`, not in this list)
RESPOND = RESPONSES.name


@dataclass(frozen=True)
class StageInputs:
    """What a builder is given: the run, its config, and the records of its declared inputs."""

    store: RunStore
    samples: Sequence[Sample]
    cfg: RunConfig
    records: RunRecords
    #: False: collect current records only (``stylebench report``, ``compare``)
    compute: bool
    #: the run's manifest, as already read (used when only collecting); ``None``: not read yet
    manifest: Mapping[str, Any] | None = None


@dataclass
class Built:
    """A stage ready to run, what the report needs of it besides its records, and its cleanup."""

    stage: Stage
    #: e.g. a backend's ``describe()``; ``Measured.info[name]``
    info: dict[str, Any] = field(default_factory=dict)
    close: Callable[[], None] | None = None


@dataclass(frozen=True)
class StageSpec:
    """One stage as data (see the module docstring)."""

    #: its records: file name, key in a run's records, record type
    records: RecordKind[Any]
    inputs: tuple[RecordKind[Any], ...]
    #: the ``RunConfig`` section with its settings (whose fields are its CLI flags)
    section: str
    runs: Callable[[RunConfig, Sequence[Sample]], bool]
    build: Callable[[StageInputs], Built]
    #: its units are computed by ``--executor`` (else in this process)
    on_executor: bool = False
    #: (backend option, the options that belong to that backend): re-scoring a run with another
    #: backend drops the stored run's options of the old one (``stylebench score --judge ...``)
    backend_options: tuple[tuple[str, tuple[str, ...]], ...] = ()
    #: its part of a scored run (``ScoredRun.part(name)``), computed once from its records
    scores: Callable[[ScoreInputs], ScoredPart] | None = None
    #: its blocks, notes and sections in the run's report
    report: StageReport | None = None
    #: its tables in a comparison of runs
    compare: tuple[StageCompare, ...] = ()
    #: checks, before any work starts, its options and that the model it will load (named by
    #: path or hub id) can be loaded: one line and no run folder when not (:func:`check_models`)
    check: Callable[[RunConfig, Sequence[Sample]], None] | None = None
    #: its options that this config and these samples would leave unread (the stage does not
    #: run, or its backend does not read them): refused when given (:func:`check_models`)
    unread: Callable[[RunConfig, Sequence[Sample]], Sequence[Ignored]] | None = None

    @property
    def name(self) -> str:
        return self.records.name

    @property
    def input_names(self) -> tuple[str, ...]:
        return tuple(k.name for k in self.inputs)


def feature_config(cfg: RunConfig) -> FeatureConfig:
    """The features stage's settings; ``quality`` is what will be computed here: asked for
    (``--quality``, the default) and speechmos installed. It is part of the features
    fingerprint, so turning it on or off, or installing speechmos later, recomputes the
    features (never the replies)."""
    m = cfg.measure
    quality = m.quality and _quality_available()
    return FeatureConfig(vad=m.vad, f0_floor=m.f0_floor, f0_ceil=m.f0_ceil, quality=quality)


@functools.cache
def _quality_available() -> bool:
    from stylebench.metrics.quality import MISSING, available

    if not available():
        logging.getLogger(__name__).warning("speech quality not measured: %s", MISSING)
        return False
    return True


def recorded_asr_machine(manifest: Mapping[str, Any] | None) -> dict[str, str] | None:
    """The CPU code path the run's transcripts were made on, as its manifest records it; ``{}``
    for a manifest from before it was recorded (whose keys do not name one), None without one."""
    if manifest is None:
        return None
    return dict((manifest.get("environment") or {}).get("asr_machine") or {})


def _manifest(ctx: StageInputs) -> Mapping[str, Any] | None:
    if ctx.manifest is not None:
        return ctx.manifest
    return ctx.store.read_manifest() if ctx.store.exists() else None


def _transcribe(ctx: StageInputs) -> Built:
    from stylebench.executors.serial import cores
    from stylebench.stages.transcribe import AsrSpec, TranscribeStage, asr_workers

    m, ex = ctx.cfg.measure, ctx.cfg.executor
    n = cores()
    # several replies at once in this process; a Ray ASR actor decodes one unit at a time
    workers = (
        1
        if ex.executor != "serial"
        else asr_workers(ex.asr_workers, m.asr, ex.asr_device, ex.asr_batch_size, n)
    )
    spec = AsrSpec(m.asr, m.asr_model, ex.asr_device, workers=workers, cores=n)
    stage = TranscribeStage(
        ctx.store,
        ctx.records.of(RESPONSES),
        {s.id: s.lang for s in ctx.samples},
        (m.asr, m.asr_model),
        functools.cache(spec),
        spec=spec,
        batch_size=ex.asr_batch_size,
        strict=ctx.cfg.strict,
        # collecting: the records of the CPU code path the manifest records, not this machine's
        machine=None if ctx.compute else recorded_asr_machine(_manifest(ctx)),
    )
    return Built(stage)


def _check_asr(cfg: RunConfig, samples: Sequence[Sample]) -> None:
    from stylebench.metrics.asr.offline import check_asr_model

    check_asr_model(cfg.measure.asr, cfg.measure.asr_model)


def _check_backend_model(registry: Any, name: str, model: str | None, flag: str) -> None:
    """A backend that loads weights here (``weights_marker``: the file its folder holds) gets
    ``model`` looked up (:func:`stylebench.paths.find_weights`); a served model (``openai``)
    or a backend's own names are not paths or hub ids, so are left to it."""
    from stylebench.paths import find_weights

    marker = getattr(registry.load(name), "weights_marker", None)
    if marker is not None and model:
        find_weights(model, flag, marker=marker)


def _check_judge(cfg: RunConfig, samples: Sequence[Sample]) -> None:
    from stylebench.metrics.judges.base import JUDGES

    gate.judge_arguments(cfg.judge)
    _check_backend_model(JUDGES, cfg.judge.judge, cfg.judge.judge_model, "--judge-model")


def _check_caption(cfg: RunConfig, samples: Sequence[Sample]) -> None:
    from stylebench.metrics.captions.base import CAPTIONERS
    from stylebench.stages.caption import check_captioner

    check_captioner(cfg, samples)
    cc = cfg.caption
    _check_backend_model(CAPTIONERS, cc.captioner, cc.caption_model, "--caption-model")


def _check_probe_model(cfg: RunConfig, samples: Sequence[Sample]) -> None:
    from stylebench.metrics.emotion_probe import PROBES
    from stylebench.paths import find_weights

    em = cfg.emotion
    marker = getattr(PROBES.load(em.emotion_probe), "weights_marker", None)
    if marker is not None:
        # a hub id is ModelScope's (funasr fetches it on first use): a folder is checked here
        find_weights(em.probe_model, "--probe-model", marker=marker, fetch=_left_to_funasr)


def _left_to_funasr(hub_id: str) -> None:
    """funasr resolves a ModelScope id itself, on the first reply it scores."""


def check_models(
    cfg: RunConfig,
    samples: Sequence[Sample],
    only: Collection[str] | None = None,
    *,
    given: Mapping[str, Any] | None = None,
) -> None:
    """The options and every model of the stages that run for ``cfg`` (within ``only``),
    checked before any work starts, so a model named by a path that is not there, or a hub id
    that is neither cached nor reachable, an option a backend does not take or a prompt file
    that is not there is one line and exit 2, not an error record on every reply after the
    model has answered (each stage's ``check``).

    Args:
        given: the settings the user gave, by field name (``stylebench run``: its whole config;
            ``score``: its flags, not the stored run's settings): each one a stage would not
            read with this config is refused (each stage's ``unread``,
            :func:`stylebench.config.refuse_ignored`).
    """
    from stylebench.config import refuse_ignored

    wanted = None if only is None else with_inputs(list(only))
    chosen = [s for s in STAGES if wanted is None or s.name in wanted]
    for spec in chosen:
        if given is not None and spec.unread is not None:
            for ignored in spec.unread(cfg, samples):
                refuse_ignored(given, ignored.names, ignored.where, fix=ignored.fix)
    for spec in chosen:
        if spec.check is not None and spec.runs(cfg, samples):
            spec.check(cfg, samples)


def _features(ctx: StageInputs) -> Built:
    from stylebench.stages.features import FeaturesStage

    stage = FeaturesStage(
        ctx.store,
        ctx.samples,
        ctx.records.of(RESPONSES),
        ctx.records.of(TRANSCRIPTS),
        feature_config(ctx.cfg),
        strict=ctx.cfg.strict,
    )
    return Built(stage)


def _probed_ids(samples: Sequence[Sample]) -> set[str]:
    """The samples whose dimension the emotion probe scores (``Dimension.probed``)."""
    return {s.id for s in samples if dimension(s.dim).probed}


def _probe_unread(cfg: RunConfig, samples: Sequence[Sample]) -> list[Ignored]:
    em = cfg.emotion
    if em.emotion_probe == "none":
        return [
            Ignored(
                ("probe_model", "probe_delta"),
                "--emotion-probe none (the default: the probe does not run)",
                "pass --emotion-probe emotion2vec",
            )
        ]
    if not _probed_ids(samples):
        return [
            Ignored(
                ("emotion_probe", "probe_model", "probe_delta"),
                "a selection without emotion samples (the probe scores the emotion dimension only)",
            )
        ]
    return []


def _probe(ctx: StageInputs) -> Built:
    from stylebench.metrics.emotion_probe import PROBES
    from stylebench.stages.probe import ProbeStage

    probe = (ctx.cfg.emotion.emotion_probe, ctx.cfg.emotion.probe_model)
    stage = ProbeStage(
        ctx.store,
        ctx.records.of(RESPONSES),
        _probed_ids(ctx.samples),
        probe,
        functools.cache(lambda: PROBES.load(probe[0])(probe[1])),
    )
    return Built(stage)


def _offline_captioner(cfg: RunConfig) -> bool:
    """The ``features`` captioner reads the measurements (emotion has none to describe)."""
    return cfg.caption.captioner == "features"


def _caption(ctx: StageInputs) -> Built:
    from stylebench.metrics.captions.base import CAPTIONERS, load_instruction
    from stylebench.pipeline.score_config import score_context
    from stylebench.stages.caption import CaptionStage, build, dim_values

    cfg, samples = ctx.cfg, ctx.samples
    cc = cfg.caption
    captioner = build(
        CAPTIONERS, cc.captioner, cc.caption_model, cc.caption_url, cc.caption_args, "captioner"
    )
    offline = _offline_captioner(cfg)
    dims = sorted({s.dim for s in samples if not (offline and not dimension(s.dim).acoustic)})
    instructions = {d: load_instruction(d, cc.caption_prompt) for d in dims}
    extra: dict[str, Any] = {}
    if offline:
        features = ctx.records.of(FEATURES)
        extra = {"features": features, "values": dim_values(samples, features, score_context(cfg))}
    stage = CaptionStage(
        ctx.store,
        samples,
        ctx.records.of(RESPONSES),
        captioner,
        instructions,
        strict=cfg.strict,
        **extra,
    )
    info = {
        "captioner": stage.desc,
        "instructions": {
            d: {"name": i.name, "sha256": i.sha256, "source": i.source}
            for d, i in instructions.items()
        },
    }
    return Built(stage, info)


def _cache(use: bool) -> JudgeCache | None:
    from stylebench.metrics.judges.cache import JudgeCache, default_cache_path

    return JudgeCache(default_cache_path()) if use else None


def _caption_judge(ctx: StageInputs) -> Built:
    from stylebench.metrics.captions.base import CAPTION_JUDGES
    from stylebench.stages.caption import CaptionJudgeStage, build, caption_judge_args

    cfg = ctx.cfg
    cc = cfg.caption
    jargs = caption_judge_args(cc)
    judge = build(
        CAPTION_JUDGES,
        cc.caption_judge,
        cc.caption_judge_model,
        cc.caption_judge_url,
        jargs,
        "caption judge",
    )
    cache = _cache(cc.caption_judge != "lexicon" and cfg.judge.judge_cache and ctx.compute)
    stage = CaptionJudgeStage(
        ctx.samples, ctx.records.of(CAPTIONS), judge, cache=cache, strict=cfg.strict
    )
    return Built(stage, {"judge": judge.describe()}, None if cache is None else cache.close)


def _judge(ctx: StageInputs) -> Built:
    from stylebench.stages.judge import JudgeStage, language_notes, plan_requests, sample_inputs

    cfg = ctx.cfg
    judge = gate.required_judge(cfg.judge)  # built once per process and settings
    desc = judge.describe()
    heard = ctx.records.of(TRANSCRIPTS) if gate.reads_transcripts(cfg) else None
    inputs = sample_inputs(
        ctx.samples,
        ctx.records.of(RESPONSES),
        heard,
        gate.max_error(cfg),
        ctx.records.of(FEATURES),  # their asr_text_er: the rate the judge would compute again
    )
    requests = plan_requests(ctx.samples, inputs, desc, language_notes(ctx.samples, heard))
    cache = _cache(cfg.judge.judge_cache and ctx.compute)
    stage = JudgeStage(requests, judge, desc, cache=cache, strict=cfg.strict)
    info = {"describe": desc, "inputs": inputs}
    return Built(stage, info, None if cache is None else cache.close)


# what the stages add after they ran (each imports its module on use, as the builders do)


def _on_use(target: str) -> Callable[..., Any]:
    """The function ``module:name``, imported on its first call (a stage's module loads only when
    one of its hooks is used)."""
    module, _, name = target.partition(":")

    def call(*args: Any, **kwargs: Any) -> Any:
        import importlib

        return getattr(importlib.import_module(module), name)(*args, **kwargs)

    call.__qualname__ = call.__name__ = target
    return call


def _loudness(ctx: StageInputs) -> Built:
    from stylebench.stages.loudness import LoudnessStage

    return Built(LoudnessStage(ctx.store, ctx.records.of(RESPONSES)))


_SECTION = "stylebench.report.sections."

#: the stages after respond, in the order they run
STAGES: tuple[StageSpec, ...] = (
    StageSpec(
        TRANSCRIPTS,
        (RESPONSES,),
        "measure",
        lambda cfg, samples: cfg.measure.asr != "none",
        _transcribe,
        on_executor=True,
        check=_check_asr,
    ),
    StageSpec(
        FEATURES,
        (RESPONSES, TRANSCRIPTS),
        "measure",
        lambda cfg, samples: True,
        _features,
        on_executor=True,
        report=StageReport(
            _on_use("stylebench.stages.features:quality_report_part"),
            blocks_at=70,
            sections=(Section("quality", _SECTION + "quality:quality_markdown", at=20),),
        ),
        compare=(
            StageCompare(
                _on_use("stylebench.stages.features:quality_compare"),
                "quality",
                json_at=50,
                shown_at=60,
                markdown=_on_use("stylebench.stages.features:quality_compare_markdown"),
                html=_on_use("stylebench.stages.features:quality_compare_html"),
            ),
        ),
    ),
    StageSpec(
        PROBE_SCORES,
        (RESPONSES,),
        "emotion",
        lambda cfg, samples: cfg.emotion.emotion_probe != "none" and bool(_probed_ids(samples)),
        _probe,
        scores=_on_use("stylebench.stages.probe:probe_part"),
        check=_check_probe_model,
        unread=_probe_unread,
    ),
    StageSpec(
        CAPTIONS,
        (RESPONSES, FEATURES),
        "caption",
        lambda cfg, samples: cfg.caption.captioner != "none",
        _caption,
        backend_options=(("captioner", ("caption_model", "caption_url", "caption_args")),),
        check=_check_caption,
        unread=_on_use("stylebench.stages.caption:unread"),
    ),
    StageSpec(
        CAPTION_VERDICTS,
        (CAPTIONS,),
        "caption",
        lambda cfg, samples: cfg.caption.captioner != "none",
        _caption_judge,
        report=StageReport(
            _on_use("stylebench.stages.caption:caption_report_part"),
            blocks_at=40,
            notes_at=60,
            sections=(Section("captions", _SECTION + "captions:captions_markdown", at=60),),
        ),
        backend_options=(
            (
                "caption_judge",
                (
                    "caption_judge_model",
                    "caption_judge_url",
                    "caption_judge_args",
                    "caption_judge_prompt",
                ),
            ),
        ),
        check=_on_use("stylebench.stages.caption:check_caption_judge"),
    ),
    StageSpec(
        LOUDNESS,
        (RESPONSES,),
        "measure",
        lambda cfg, samples: cfg.measure.loudness,
        _loudness,
        report=StageReport(
            _on_use("stylebench.stages.loudness:loudness_report_part"),
            blocks_at=75,
            sections=(Section("loudness", "stylebench.stages.loudness:loudness_markdown", at=25),),
        ),
        compare=(
            StageCompare(
                _on_use("stylebench.stages.loudness:loudness_compare"),
                "loudness",
                json_at=55,
                shown_at=65,
                markdown=_on_use("stylebench.stages.loudness:loudness_compare_markdown"),
                html=_on_use("stylebench.stages.loudness:loudness_compare_html"),
            ),
        ),
    ),
    StageSpec(
        JUDGEMENTS,
        (RESPONSES, TRANSCRIPTS, FEATURES),
        "judge",
        lambda cfg, samples: gate.skip_reason(cfg) is None,
        _judge,
        check=_check_judge,
        unread=gate.unread,
        scores=gate.gate_part,
        report=StageReport(
            gate.gate_report_part,
            blocks_at=30,
            notes_at=30,
            sections=(
                Section(
                    "judge",
                    _SECTION + "relevance:relevance_markdown",
                    when_present=True,
                    whole=True,
                    at=30,
                ),
            ),
        ),
        compare=(
            StageCompare(
                gate.relevance_rows,
                "tables.relevance",
                json_at=10,
                shown_at=20,
                markdown=gate.relevance_markdown,
                html=gate.relevance_html,
            ),
        ),
        backend_options=(
            (
                "judge",
                (
                    "judge_model",
                    "judge_url",
                    "judge_args",
                    "judge_prompt",
                    "judge_prompt_srd",
                    "judge_prompt_mrd",
                ),
            ),
        ),
    ),
)


def stage_spec(name: str) -> StageSpec:
    """The spec named ``name``.

    Raises:
        KeyError: no such stage (the message names the stages there are).
    """
    for spec in STAGES:
        if spec.name == name:
            return spec
    raise KeyError(f"no stage {name!r}; the stages are {', '.join(s.name for s in STAGES)}")


def report_sections() -> list[Section]:
    """report.md's optional sections in the order of their places: the report's own
    (:data:`stylebench.report.sections.SECTIONS`) and every stage's."""
    own = [sec for spec in STAGES if spec.report for sec in spec.report.sections]
    return in_place([*SECTIONS, *own])


def with_inputs(names: Sequence[str]) -> set[str]:
    """``names`` and every stage they read from, transitively (``respond`` left out)."""
    out: set[str] = set()
    todo = list(names)
    while todo:
        name = todo.pop()
        if name == RESPOND or name in out:
            continue
        out.add(name)
        todo.extend(stage_spec(name).input_names)
    return out
