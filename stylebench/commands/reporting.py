"""From a scored run (:func:`.scored.score_run`) to its report: notes, blocks, and the files."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from stylebench.commands.scored import ScoredRun
from stylebench.config import RunConfig
from stylebench.records import Sample


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
        "pitch (docs/metrics.md#unscored-replies)"
        + (
            f", replies under DNSMOS OVRL {cfg.score.min_quality:g} on every dimension "
            "(--min-quality)"
            if cfg.score.min_quality is not None
            else ""
        )
        + "; they count in n, not in n_ok",
        **{d.name: d.extractor(cfg) for d in shown if not d.acoustic},
    }


def asr_how(cfg: RunConfig) -> str:
    """How the ASR decoded, when not the default (CPU, one reply at a time)."""
    ex = cfg.executor
    parts = ([f"{ex.asr_device} float16"] if ex.asr_device != "cpu" else []) + (
        [f"batched first pass, {ex.asr_batch_size} replies"] if ex.asr_batch_size > 1 else []
    )
    return f" ({'; '.join(parts)})" if parts else ""


def dimension_run_notes(scored: ScoredRun) -> list[str]:
    """Every dimension's notes on how this run scored it
    (:meth:`~stylebench.metrics.dims.base.Dimension.run_notes`), for the dimensions with turn
    scores, in registry order."""
    from stylebench.metrics.dims.base import all_dims

    notes: list[str] = []
    for dim in all_dims():
        mine = [t for t in scored.turn_scores if t.dim == dim.name]
        if mine:
            notes += dim.run_notes(scored.context, mine)
    return notes


def report(scored: ScoredRun) -> dict[str, Any]:
    """Write the scored run's report.json/.md/.csv (and the plot), then its page report.html,
    into its folder.

    The report's own blocks and notes, and every stage's (``StageSpec.report``), go in the order
    of their places (:mod:`stylebench.stages.outputs`)."""
    from stylebench.model_wrappers.registry import EMBEDDED_NOTES
    from stylebench.report.build import ReportMeta
    from stylebench.report.write import write_reports
    from stylebench.scoring.emotion import emotion_report_block
    from stylebench.stages.outputs import REPORT_BLOCKS_AT, REPORT_NOTES_AT, placed
    from stylebench.stages.registry import STAGES, report_sections

    cfg, samples, turn_scores = scored.cfg, scored.samples, scored.turn_scores
    m = cfg.measure
    model = scored.manifest.get("model") or {}
    notes: list[tuple[int, list[str]]] = [
        (
            REPORT_NOTES_AT["model"],
            [EMBEDDED_NOTES[cfg.model]] if cfg.model in EMBEDDED_NOTES else [],
        ),
        (REPORT_NOTES_AT["dimensions"], dimension_notes(samples, cfg.model)),
    ]
    notes.append((REPORT_NOTES_AT["dimension_runs"], dimension_run_notes(scored)))
    if m.asr != "none" and m.asr_model in ("base", "tiny.en"):
        notes.append(
            (
                REPORT_NOTES_AT["asr"],
                [f"ASR is Whisper {m.asr_model} (offline copy); the paper used Whisper-large-v3"],
            )
        )
    hears = history_note(model)
    notes.append((REPORT_NOTES_AT["history"], [hears] if hears else []))
    emotion = emotion_report_block(
        samples,
        cfg,
        turn_scores,
        probe=scored.probe,
        majority=scored.majority,
        exclude=scored.exclude,
    )
    blocks: list[tuple[int, Mapping[str, Any]]] = [
        (REPORT_BLOCKS_AT["human"], {"human": scored.human} if scored.human else {}),
        (REPORT_BLOCKS_AT["history_kind"], {"history_kind": model.get("history_kind")}),
        (REPORT_BLOCKS_AT["emotion_scores"], emotion),
    ]
    for spec in STAGES:
        if spec.report is not None:
            part = spec.report.build(scored)
            blocks.append((spec.report.blocks_at, part.blocks))
            notes.append((spec.report.notes_at, list(part.notes)))
    meta = ReportMeta(
        model=cfg.model,
        run_id=scored.root.name,
        dims=cfg.dims,
        langs=cfg.langs,
        thresholds=scored.thresholds,
        extractors=extractor_names(cfg),
        n_samples=len(samples),
        n_turns_total=len(turn_scores),
        n_turns_ok=sum(t.value is not None for t in turn_scores),
        notes=tuple(n for group in placed(notes) for n in group),
        extra={k: v for block in placed(blocks) for k, v in block.items()},
    )
    written = write_reports(
        scored.root,
        meta,
        scored.cells,
        turn_scores,
        exclude=scored.exclude,
        sections=report_sections(),
    )
    from stylebench.commands.report_page import write_report_page

    write_report_page(written, scored, report_sections())  # report.html, beside report.md
    return written


def dimension_notes(samples: Sequence[Sample], model: str) -> list[str]:
    """What calibration model ``model`` means on each dimension of the run
    (``Dimension.calibration_notes``), in the registry's order."""
    from stylebench.metrics.dims.base import in_order

    present = {s.dim for s in samples}
    return [n for d in in_order() if d.name in present for n in d.calibration_notes(model)]


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
