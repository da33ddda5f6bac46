"""From a run's current records to its report: scores, the gate, notes, and the files."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from stylebench.config import RunConfig
from stylebench.pipeline import gate
from stylebench.pipeline.runner import Measured
from stylebench.records import Sample
from stylebench.store import RunStore


def extractor_names(cfg: RunConfig) -> dict[str, str]:
    """How each score was measured: every paper dimension's extractor and the run's own dims'
    (:meth:`~stylebench.metrics.dims.base.Dimension.extractor`), then ASR, VAD and what is
    unscored."""
    from stylebench.metrics.dims.base import in_order

    m = cfg.measure
    shown = [d for d in in_order() if d.paper or d.name in cfg.dims]
    return {
        **{d.name: d.extractor(cfg) for d in shown if d.acoustic},
        "asr": "none" if m.asr == "none" else f"{m.asr} {m.asr_model}" + asr_how(cfg),
        "vad": m.vad,
        "unscored": "replies too short (< 1 s of speech or < 4 syllables) or not speech are "
        "unscored on every dimension, doubtful transcripts on speed, disagreeing F0 trackers on "
        "pitch (docs/metrics.md#unscored-replies); they count in n, not in n_ok",
        **{d.name: d.extractor(cfg) for d in shown if not d.acoustic},
    }


def asr_how(cfg: RunConfig) -> str:
    """How the ASR decoded, when not the default (CPU, one reply at a time)."""
    ex = cfg.executor
    parts = ([f"{ex.asr_device} float16"] if ex.asr_device != "cpu" else []) + (
        [f"batched first pass, {ex.asr_batch_size} replies"] if ex.asr_batch_size > 1 else []
    )
    return f" ({'; '.join(parts)})" if parts else ""


def speed_source_note(cfg: RunConfig, speed_ids: set[str], turn_scores: Sequence[Any]) -> str:
    """Which rate estimate scored how many speed samples, and why."""
    m = cfg.measure
    if m.speed_source == "nuclei":
        return (
            f"speed source: nuclei for all {len(speed_ids)} samples (--speed-source nuclei): an "
            "ASR-free count of loudness peaks, NOT the paper's syllable rate; on real speech it "
            "followed a x1.25 tempo change only about halfway (docs/metrics.md), so read these "
            "speed cells as a diagnostic"
        )
    if m.speed_source != "auto":
        return f"speed source: {m.speed_source} for all {len(speed_ids)} samples (--speed-source)"
    by_text = {t.sample_id for t in turn_scores if "speed_from_text" in t.flags}
    mismatch = {t.sample_id for t in turn_scores if "asr_text_mismatch" in t.flags}
    return (
        f"speed source (auto): {len(speed_ids - by_text)} samples from the ASR transcript, "
        f"{len(by_text)} from the model's text channel because a turn's transcript was unreliable "
        f"(flagged, missing, or WER/CER against the text channel > {m.transcript_max_error:g}: "
        f"{len(mismatch)} samples)"
    )


def report(
    store: RunStore, samples: Sequence[Sample], cfg: RunConfig, measured: Measured
) -> dict[str, Any]:
    """Score the current records and write report.json/.md/.csv (and the plot)."""
    from stylebench.metrics.dims.base import ScoreContext
    from stylebench.model_wrappers.registry import EMBEDDED_NOTES
    from stylebench.ratings.importer import human_report_block
    from stylebench.report.build import ReportMeta
    from stylebench.report.write import write_reports
    from stylebench.scoring.cells import score_cells, thresholds_from
    from stylebench.scoring.emotion import emotion_notes, emotion_report_block
    from stylebench.scoring.turns import collect_turn_scores

    m, sc = cfg.measure, cfg.score
    ctx = ScoreContext(m.pitch_stat, m.speed_source, m.transcript_max_error)
    turn_scores = collect_turn_scores(samples, measured.replies, measured.features, ctx)
    thresholds = thresholds_from(sc)
    judge_extra, exclude, judge_notes = gate.gate_report(
        cfg, samples, measured.judge_desc, measured.verdicts, measured.inputs
    )
    cells = score_cells(
        turn_scores, thresholds=thresholds, n_boot=sc.n_boot, seed=cfg.decode.seed, exclude=exclude
    )
    notes = [EMBEDDED_NOTES[cfg.model]] if cfg.model in EMBEDDED_NOTES else []
    if any(s.dim == "emotion" for s in samples):
        notes += emotion_notes(cfg)
    notes += judge_notes
    speed_ids = {t.sample_id for t in turn_scores if t.dim == "speed"}
    if speed_ids:
        notes.append(speed_source_note(cfg, speed_ids, turn_scores))
    if m.asr != "none" and m.asr_model in ("base", "tiny.en"):
        notes.append(
            f"ASR is Whisper {m.asr_model} (offline copy); the paper used Whisper-large-v3"
        )
    from stylebench.pipeline.caption import self_caption_warning
    from stylebench.scoring.captions import caption_report_block

    captions, caption_notes = caption_report_block(
        store.root, samples, cfg, measured, turn_scores, thresholds, exclude
    )
    warn = self_caption_warning(cfg, store.read_manifest().get("model") if store.exists() else None)
    notes += caption_notes + ([warn] if warn else [])
    human = human_report_block(store.root)
    hears = history_note(store.read_manifest().get("model") or {})
    notes += [hears] if hears else []
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
            **({"human": human} if human else {}),
            "history_kind": (store.read_manifest().get("model") or {}).get("history_kind"),
            **judge_extra,
            **captions,
            **emotion_report_block(store.root, samples, cfg, turn_scores, exclude, measured),
        },
    )
    return write_reports(store.root, meta, cells, turn_scores, exclude=exclude)


def history_note(model: dict[str, Any]) -> str:
    """What the model heard of its own earlier replies (the manifest's ``history_kind``)."""
    kind = model.get("history_kind")
    if not kind:
        return ""
    return (
        f"History kind: {kind}. Turns 2 and 3 reached the model with earlier replies as "
        f"'{kind}' ({model.get('history') or 'no detail recorded'}); compare models of the "
        "same kind when reading multi-turn scores."
    )
