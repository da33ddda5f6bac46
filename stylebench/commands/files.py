"""Audio files made anywhere, measured as a run measures its replies (``stylebench measure``).

A file is a reply without a run. It goes through the transcribe and features stages' own jobs
(:class:`~stylebench.stages.transcribe.TranscribeJob`,
:class:`~stylebench.stages.features.FeaturesJob`) and through each dimension's ``turn_values``
(:mod:`stylebench.metrics.dims`) under the settings a run's config gives
(:func:`~stylebench.pipeline.score_config.score_context`), so its scores, flags and unscored
reasons are the ones a run records for the same audio. Files measured together are one sample,
as a run's turns are (a pair of ``stylebench pairs`` is turns 1 and 2): one speech-span detector
for all of them (the VAD fallback) and the speed checks that compare turns. A file measured
alone is a one-turn sample. Nothing is written anywhere; a file that cannot be measured (missing,
empty, not audio, silent) comes back with its reason, never as an exception.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from stylebench.config import RunConfig, refuse_ignored, resolve_config, section_of
from stylebench.errors import BadValue
from stylebench.metrics.asr.offline import check_asr_model
from stylebench.metrics.dims.base import ScoreContext, TurnValues, dimension, in_order, plain
from stylebench.pipeline.blobs import Blob
from stylebench.pipeline.score_config import score_context, thresholds_of
from stylebench.records import FEATURES, LANGS, FeatureRecord, TranscriptRecord, error_record
from stylebench.scoring.cells import Thresholds
from stylebench.stages.measure import FeatureConfig
from stylebench.stages.registry import feature_config
from stylebench.stages.transcribe import AsrSpec, TranscribeJob, TranscribeStage

#: the config sections whose settings apply to measuring files, and to scoring pairs of them
MEASURE_SECTIONS = ("measure",)
PAIR_SECTIONS = ("measure", "score")
#: the run settings that mean the same for files: the length guard a reply gets
RUN_SETTINGS = ("max_reply_s",)
#: settings of those sections that files cannot use: a file has no text channel to compare its
#: transcript with
IGNORED = ("transcript_max_error",)
#: a speed reason for files measured without ASR (the run's words say only "not measured")
NO_ASR = "no transcript (--asr none): the speed score counts a transcript's syllables"
#: the stand-in fingerprint of records that are never stored
FP = "files"


def file_dims() -> tuple[str, ...]:
    """The dimensions a file is scored on: those scored from its features (pitch, volume, speed,
    extension dimensions), in report order; emotion is scored from ratings or a probe, not features."""
    return tuple(d.name for d in in_order() if d.acoustic)


@dataclass(frozen=True)
class FileSettings:
    """What measuring files takes from a run's config, and nothing else."""

    features: FeatureConfig
    context: ScoreContext
    thresholds: Thresholds
    #: ``None``: ``--asr none`` (speed unscored, with :data:`NO_ASR`)
    asr: AsrSpec | None
    n_boot: int
    #: a longer file is not measured (``--max-reply-s``, as a run's replies)
    max_seconds: float = RunConfig().max_reply_s
    #: ``--loudness``: each file's integrated loudness (ITU-R BS.1770-4, LUFS), as the loudness
    #: stage measures a run's replies
    loudness: bool = False

    @staticmethod
    def of(cfg: RunConfig) -> FileSettings:
        """The settings a run with config ``cfg`` would measure and score its replies with."""
        m = cfg.measure
        asr = None if m.asr == "none" else AsrSpec(m.asr, m.asr_model, cfg.executor.asr_device)
        return FileSettings(
            feature_config(cfg),
            score_context(cfg),
            thresholds_of(cfg),
            asr,
            cfg.score.n_boot,
            cfg.max_reply_s,
            m.loudness,
        )


def settings_config(
    settings: Mapping[str, Any],
    config_file: Path | str | None = None,
    sections: Sequence[str] = PAIR_SECTIONS,
) -> RunConfig:
    """A run config from settings named as ``stylebench run``'s flags are (``asr="none"``,
    ``pitch_st=2.0``), over a config file, over the defaults.

    Raises:
        BadValue: a setting outside ``sections`` and :data:`RUN_SETTINGS` (a judge or model
            setting means nothing to files), one files would ignore (:data:`IGNORED`), or a
            bad value.
    """
    where = section_of()
    foreign = sorted(
        k
        for k, v in settings.items()
        if v is not None and where.get(k) not in sections and k not in RUN_SETTINGS
    )
    if foreign:
        known = sorted(k for k, s in where.items() if s in sections) + list(RUN_SETTINGS)
        raise BadValue(
            f"settings {', '.join(foreign)} do not apply here; the {'/'.join(sections)} settings "
            f"do: {', '.join(known)}"
        )
    refuse_ignored(settings, IGNORED, "measuring files")
    return resolve_config(dict(settings), config_file)


@dataclass(frozen=True)
class FileMeasurement:
    """One file measured: its records as a run's stages make them, and its score (or why it has
    none) on each of :func:`file_dims`.

    ``scores`` are on each dimension's linear scale (pitch Hz, volume RMS amplitude, speed
    syllables per minute, an extension dimension in its own unit); ``unscored`` holds the reason of
    every dimension without one; ``flags`` are every flag of its features (transcript flags
    included) and of its sample (``speed_from_text``).
    """

    path: str
    lang: str
    transcript: TranscriptRecord | None
    features: FeatureRecord
    scores: Mapping[str, float]
    unscored: Mapping[str, str]
    flags: tuple[str, ...]
    #: integrated loudness in LUFS with ``--loudness`` (``None``: not asked, or no 400 ms block
    #: above -70 LUFS)
    lufs: float | None = None

    @property
    def ok(self) -> bool:
        """The file was measured (its features are ok; a dimension may still be unscored)."""
        return self.features.status == "ok"

    @property
    def error(self) -> str:
        """Why the file was not measured at all; ``""`` when it was."""
        return "" if self.ok else self.features.error


@dataclass(frozen=True)
class SampleMeasurement:
    """Files measured together as one sample (turn ``k`` = ``files[k - 1]``): each file, and per
    dimension its ``turn_values`` result (turn -> score or reason) and sample flags."""

    files: tuple[FileMeasurement, ...]
    values: Mapping[str, TurnValues]
    extra: Mapping[str, tuple[str, ...]]


@dataclass(frozen=True)
class _Job:
    """One sample's files to measure, picklable (a process pool's unit)."""

    sample_id: str
    paths: tuple[str, ...]
    lang: str
    features: FeatureConfig
    asr: AsrSpec | None
    max_seconds: float
    loudness: bool = False


@functools.cache
def _asr(spec: AsrSpec) -> Any:
    """The ASR model, built once per process."""
    return spec()


def _records(job: _Job) -> list[tuple[TranscriptRecord | None, FeatureRecord, float | None]]:
    """The transcript and feature records of a job's files, as the stages would make them, and
    with ``--loudness`` each measured file's integrated loudness (the loudness stage's measure)."""
    from stylebench.stages.features import FeaturesJob

    too_long = _too_long(job)
    blobs = {k: Blob.of(p) for k, p in enumerate(job.paths, start=1) if k not in too_long}
    transcripts: dict[int, TranscriptRecord] = {}
    if job.asr is not None:
        for k, blob in blobs.items():
            key = (job.sample_id, k)
            try:
                (rec,) = TranscribeJob(((key, FP, blob, job.lang),)).run(_asr(job.asr))
            except TranscribeStage.errors as exc:  # what run_stage turns into an error record
                rec = error_record("transcribe", key, FP, f"{type(exc).__name__}: {exc}")
            transcripts[k] = rec
    turns = tuple(blobs)
    feats = FeaturesJob(
        job.sample_id,
        job.lang,
        blobs,
        {},
        transcripts,
        dict.fromkeys(turns, FP),
        turns,
        job.features,
    )
    by_turn = {r.turn: r for r in feats.run(None)} if blobs else {}
    for k, why in too_long.items():
        by_turn[k] = error_record(FEATURES, (job.sample_id, k), FP, why)
    lufs: dict[int, float | None] = {}
    if job.loudness:
        from stylebench.audio import load_audio
        from stylebench.metrics.loudness import integrated_loudness

        for k in turns:
            if by_turn[k].status == "ok":  # audio that loaded and was measured
                lufs[k] = integrated_loudness(*load_audio(job.paths[k - 1]))
    return [(transcripts.get(k), by_turn[k], lufs.get(k)) for k in range(1, len(job.paths) + 1)]


def _too_long(job: _Job) -> dict[int, str]:
    """The job's files longer than its length guard (:func:`~stylebench.audio.check_length`),
    found from their headers before any is decoded or transcribed, with the reason as the
    features stage words an :class:`~stylebench.audio.AudioError`."""
    import soundfile as sf

    from stylebench.audio import AudioError, check_length

    out: dict[int, str] = {}
    for k, path in enumerate(job.paths, start=1):
        try:
            check_length(sf.info(path).duration, job.max_seconds)
        except AudioError as exc:
            out[k] = f"AudioError: {Path(path).name}: {exc}"
        except (RuntimeError, OSError):  # unreadable: load_audio says why, in its own record
            continue
    return out


def _score(
    job: _Job,
    records: list[tuple[TranscriptRecord | None, FeatureRecord, float | None]],
    ctx: ScoreContext,
) -> SampleMeasurement:
    """Each dimension's ``turn_values`` over the sample's ok feature records."""
    ok = {k: f for k, (_, f, _) in enumerate(records, start=1) if f.status == "ok"}
    values: dict[str, TurnValues] = {}
    extra: dict[str, tuple[str, ...]] = {}
    for name in file_dims():
        values[name], extra[name] = dimension(name).gated_turn_values(None, ok, ctx)
    files = []
    for k, (tr, feat, lufs) in enumerate(records, start=1):
        scores, unscored = {}, {}
        for name in file_dims():
            v = plain(values[name].get(k))
            if feat.status != "ok":
                unscored[name] = f"features: {feat.error}"
            elif isinstance(v, str) or v is None:
                why = v or f"{name}: no score (not measured)"
                if name == "speed" and job.asr is None and why.startswith("spm unavailable"):
                    why = NO_ASR
                unscored[name] = why
            else:
                scores[name] = float(v)
        sample_flags = [f for name in scores for f in extra[name]]
        flags = tuple(dict.fromkeys([*feat.flags, *sample_flags]))
        files.append(
            FileMeasurement(job.paths[k - 1], job.lang, tr, feat, scores, unscored, flags, lufs)
        )
    return SampleMeasurement(tuple(files), values, extra)


def measure_samples(
    samples: Sequence[tuple[str, Sequence[Path | str], str]],
    settings: FileSettings,
    *,
    jobs: int = 1,
    progress: bool = False,
    desc: str = "measure",
    unit: str = "file",
) -> list[SampleMeasurement]:
    """Measure each ``(sample id, files, lang)`` as one sample; results in the given order.

    ``jobs`` > 1 measures samples in that many processes (each builds its own ASR). The ASR model
    is looked up (:func:`~stylebench.metrics.asr.offline.check_asr_model`, as a run's is) and
    built here first, so a missing extra or model fails once, before any file is read. A file
    longer than ``settings.max_seconds`` is an error row, found before it is decoded.

    Raises:
        BadValue: a language other than en/zh, or ``jobs`` < 1. MissingExtra: the ASR's extra.
    """
    if not (isinstance(jobs, int) and jobs >= 1):
        raise BadValue(f"--jobs must be a whole number >= 1, got {jobs!r}")
    for _, _, lang in samples:
        if lang not in LANGS:
            raise BadValue(f"language {lang!r} is not one of {', '.join(LANGS)}")
    if settings.asr is not None:  # the model looked up (as a run's is), then built once
        check_asr_model(settings.asr.backend, settings.asr.model)
        _asr(settings.asr)
    todo = [
        _Job(
            sid,
            tuple(str(p) for p in paths),
            lang,
            settings.features,
            settings.asr,
            settings.max_seconds,
            settings.loudness,
        )
        for sid, paths, lang in samples
    ]
    from tqdm import tqdm

    bar = tqdm(total=len(todo), desc=desc, unit=unit, disable=not progress or len(todo) < 2)
    out = []
    try:
        for job, records in zip(todo, _run(todo, min(jobs, max(len(todo), 1))), strict=True):
            out.append(_score(job, records, settings.context))
            bar.update(1)
    finally:
        bar.close()
    return out


def _run(todo: Sequence[_Job], jobs: int) -> Iterator[list[Any]]:
    if jobs <= 1:
        yield from map(_records, todo)
        return
    import multiprocessing
    from concurrent.futures import ProcessPoolExecutor

    # forkserver, as the features stage's pool: workers start clean, not as forks of a process
    # that holds the ASR's threads
    ctx = multiprocessing.get_context("forkserver")
    ctx.set_forkserver_preload([__name__])
    with ProcessPoolExecutor(jobs, mp_context=ctx) as pool:
        yield from pool.map(_records, todo)


def measure_files(
    paths: Sequence[Path | str],
    settings: FileSettings,
    *,
    lang: str | Sequence[str] = "en",
    jobs: int = 1,
    progress: bool = False,
) -> list[FileMeasurement]:
    """Measure each file alone (a one-turn sample); ``lang`` is one language or one per file.

    Raises:
        BadValue: no files, a ``lang`` list of another length, or a bad language.
    """
    if not paths:
        raise BadValue("no audio files given")
    langs = [lang] * len(paths) if isinstance(lang, str) else list(lang)
    if len(langs) != len(paths):
        raise BadValue(f"{len(langs)} languages for {len(paths)} files; give one, or one per file")
    samples = [(f"file{i}", [p], g) for i, (p, g) in enumerate(zip(paths, langs, strict=True), 1)]
    done = measure_samples(samples, settings, jobs=jobs, progress=progress)
    return [s.files[0] for s in done]


#: the columns of a measured file's row (:func:`measurement_row`), after which come
#: ``<dim>`` (its score) and ``<dim>_unscored`` (why not) for every dim of :func:`file_dims`
ROW_HEAD = (
    "file",
    "lang",
    "status",
    "error",
    "duration_s",
    "speech_start_s",
    "speech_end_s",
    "speech_span_s",
    "speech_active_s",
)
ROW_TAIL = (
    "volume_dbfs",
    "loudness_lufs",
    "syllables",
    "dnsmos_sig",
    "dnsmos_bak",
    "dnsmos_ovrl",
    "transcript",
    "flags",
)


def row_columns() -> tuple[str, ...]:
    """Every column of :func:`measurement_row`, in order."""
    dims = file_dims()
    return (*ROW_HEAD, *dims, *ROW_TAIL, *(f"{d}_unscored" for d in dims))


def measurement_row(m: FileMeasurement) -> dict[str, Any]:
    """A measured file as one flat row (keys :func:`row_columns`): what ``stylebench measure``
    prints and :func:`stylebench.measure` returns. A value not measured is ``None``; a dimension
    scored leaves its ``_unscored`` column ``""``."""
    v: Mapping[str, float] = m.features.values if m.ok else {}
    tr = m.transcript
    row: dict[str, Any] = {
        "file": m.path,
        "lang": m.lang,
        "status": "ok" if m.ok else "error",
        "error": m.error,
        "duration_s": v.get("duration_s"),
        "speech_start_s": v.get("span_start"),
        "speech_end_s": v.get("span_end"),
        "speech_span_s": v.get("span_s"),
        "speech_active_s": v.get("active_s"),
    }
    row.update({d: m.scores.get(d) for d in file_dims()})
    row["volume_dbfs"] = v.get("rms_gated_dbfs") if "volume" in m.scores else None
    row["loudness_lufs"] = None if m.lufs is None else round(m.lufs, 3)
    row["syllables"] = v.get("syllables")
    # speech quality (DNSMOS P.835, 1-5): a measured value; None where it was not measured
    row.update({k: v.get(k) for k in ("dnsmos_sig", "dnsmos_bak", "dnsmos_ovrl")})
    row["transcript"] = tr.text if tr is not None and tr.status == "ok" else ""
    row["flags"] = list(m.flags)
    row.update({f"{d}_unscored": m.unscored.get(d, "") for d in file_dims()})
    return row


def unscored_counts(rows: Sequence[Mapping[str, Any]]) -> dict[str, dict[str, int]]:
    """Per dimension, how many rows are unscored for each reason (the reason's first clause)."""
    out: dict[str, dict[str, int]] = {}
    for d in file_dims():
        counts: dict[str, int] = {}
        for r in rows:
            why = r.get(f"{d}_unscored")
            if why:
                counts[short_reason(why)] = counts.get(short_reason(why), 0) + 1
        out[d] = dict(sorted(counts.items(), key=lambda kv: (-kv[1], kv[0])))
    return out


def short_reason(why: str) -> str:
    """A reason without the file's own details, for counting reasons over many files:
    ``features: AudioError: x.mp3: audio file is empty (0 bytes); ...`` reads
    ``features: AudioError: audio file is empty``, ``unscored: too short (under 1 s ...)`` reads
    ``unscored: too short``, ``f0_mean_agreed unavailable: no_f0: only 3 voiced frames ...``
    reads ``f0_mean_agreed unavailable: no_f0``; the flags a doubtful transcript names stay."""
    parts = why.split(": ")
    if parts[0] == "features" and len(parts) >= 4 and parts[1].endswith("Error"):
        parts = parts[:2] + parts[3:]  # the file's name, which the row already shows
    elif parts[0].endswith(" unavailable"):
        parts = parts[:2]  # "f0_mean_agreed unavailable: no_f0", without the frame counts
    text = ": ".join(parts)
    head, _, rest = text.partition(" (")
    flags = rest[:-1] if rest.endswith(")") else ""
    if flags and re.fullmatch(r"[a-z0-9_]+(, [a-z0-9_]+)*", flags):  # which flags: worth counting
        return f"{head} ({flags})"
    return head.split("; ")[0]


def file_settings(
    settings: Mapping[str, Any],
    config_file: Path | str | None = None,
    sections: Sequence[str] = PAIR_SECTIONS,
) -> FileSettings:
    """:class:`FileSettings` from settings named as the CLI flags are (see :func:`settings_config`)."""
    return FileSettings.of(settings_config(settings, config_file, sections))


def measure_rows(
    paths: Sequence[Path | str],
    settings: Mapping[str, Any] | None = None,
    *,
    config_file: Path | str | None = None,
    lang: str | Sequence[str] = "en",
    jobs: int = 1,
    progress: bool = False,
) -> list[dict[str, Any]]:
    """``stylebench measure``'s rows (:func:`measurement_row`): the command and
    :func:`stylebench.measure` both call this."""
    fs = file_settings(settings or {}, config_file, MEASURE_SECTIONS)
    done = measure_files(paths, fs, lang=lang, jobs=jobs, progress=progress)
    return [measurement_row(m) for m in done]
