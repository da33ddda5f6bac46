"""Running, scoring and reporting a persistence set (docs/persistence.md).

A persistence run answers, for every selected sample, its **instructed** dialogue and its
**control** dialogue (:func:`stylebench.dialogues.persistence.arms_of`) with the same model,
history kept per dialogue. Both go through the StyleBench stage machinery unchanged in kind:
respond (:class:`~.respond.RespondStage`), then transcribe, features and judge
(:func:`.runner.measure`), append-only and resumable; records are keyed by (dialogue id, turn),
and the control's id carries :data:`~stylebench.dialogues.persistence.CONTROL_SUFFIX`, so the
two never collide. The judge asks SRD on every turn. Scores are
:mod:`stylebench.scoring.persistence`; files :mod:`stylebench.report.persistence`.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, fields
from pathlib import Path
from typing import Any

from stylebench.caption_config import CaptionConfig
from stylebench.config import EmotionConfig, RunConfig, refuse_ignored
from stylebench.dialogues.persistence import PersistenceArm, PersistenceSample, arms_of
from stylebench.errors import BadValue
from stylebench.records import FEATURES, JUDGEMENTS, RESPONSES, JudgeRecord, Key, RunRecords

#: the stages after respond a persistence run uses (probe and captions are StyleBench's)
PERSISTENCE_STAGES = ("transcribe", "features", "judge")
#: the settings a persistence run would ignore, so refused when set: those of the stages it does
#: not have (the emotion probe, captions, loudness) and of the MRD verdict (its judge asks SRD on
#: every turn, never MRD)
PERSISTENCE_IGNORED = (
    *(f.name for f in fields(EmotionConfig)),
    *(f.name for f in fields(CaptionConfig)),
    "loudness",
    "filter_mrd",
    "mrd_threshold",
)


def refuse_unread(cfg: RunConfig) -> None:
    """No setting a persistence run would ignore (:data:`PERSISTENCE_IGNORED`); checked first,
    before the set is read."""
    refuse_ignored(
        cfg.flat(),
        PERSISTENCE_IGNORED,
        "a persistence run (its stages are transcribe, features and an SRD judge on every turn)",
    )


def check_persistence_models(
    cfg: RunConfig, arms: Sequence[PersistenceArm], *, given: Mapping[str, Any] | None = None
) -> None:
    """Every model the persistence stages load, found before any work, and no option of theirs
    ``given`` that they would not read (:func:`stylebench.stages.registry.check_models`)."""
    from stylebench.stages.registry import check_models

    check_models(cfg, arms, only=PERSISTENCE_STAGES, given=given)


@dataclass(frozen=True)
class PersistenceSelection:
    """The selected samples of a persistence set, their dialogues, the set's folder and checksum."""

    samples: tuple[PersistenceSample, ...]
    pairs: tuple[tuple[PersistenceArm, PersistenceArm], ...]
    root: Path
    checksum: str

    @property
    def arms(self) -> list[PersistenceArm]:
        return [a for pair in self.pairs for a in pair]


def select(cfg: RunConfig, root: Path) -> PersistenceSelection:
    """The samples of ``cfg.dims`` and ``cfg.langs``, the first ``cfg.limit`` of each (dim,
    direction, lang) cell by id, their user-turn audio checked.

    Raises:
        BadValue: a malformed set, or no sample for the asked dims and languages.
    """
    from stylebench.dialogues.persistence import load_persistence_set
    from stylebench.dialogues.sets import check_turn_audio

    samples, checksum = load_persistence_set(root, check_audio=False)
    cells: dict[tuple[str, str, str], list[PersistenceSample]] = defaultdict(list)
    for s in sorted(samples, key=lambda s: s.id):
        if s.dim in cfg.dims and s.lang in cfg.langs:
            cells[(s.dim, s.direction, s.lang)].append(s)
    chosen = sorted(
        (s for cell in cells.values() for s in (cell[: cfg.limit] if cfg.limit else cell)),
        key=lambda s: s.id,
    )
    if not chosen:
        raise BadValue(
            f"the persistence set {root} has no samples for dim={cfg.dim} lang={cfg.lang}"
        )
    pairs = tuple(arms_of(s) for s in chosen)
    check_turn_audio(root, [a for pair in pairs for a in pair])
    return PersistenceSelection(tuple(chosen), pairs, root, checksum)


@dataclass(frozen=True)
class StoredPersistence:
    """A stored persistence run's current records, read for comparison (nothing computed)."""

    store: Any
    manifest: dict[str, Any]
    cfg: RunConfig
    sel: PersistenceSelection
    records: RunRecords


def persistence_run_id(cfg: RunConfig, checksum: str) -> str:
    """The folder name a persistence run gets when ``--run-id`` is not given."""
    return "persist-" + cfg.default_run_id(checksum)


def relevance_labels(cfg: RunConfig, judged: dict[Key, JudgeRecord]) -> dict[Key, str] | None:
    """SRD labels by (dialogue id, turn), or None when the gate is skipped (``--judge none``)."""
    from stylebench.stages import gate

    if gate.skip_reason(cfg):
        return None
    return {
        key: (rec.label if rec.status == "ok" else "error")
        for key, rec in judged.items()
        if rec.kind == "srd"
    }


def paired(sel: PersistenceSelection, cfg: RunConfig, records: RunRecords) -> list:
    """Each selected sample's (instructed, control) pair per turn, gated by relevance
    (:func:`stylebench.scoring.persistence.paired_turns`)."""
    from stylebench.pipeline.score_config import score_context
    from stylebench.scoring.persistence import paired_turns

    labels = relevance_labels(cfg, records.get(JUDGEMENTS.name, {}))
    return paired_turns(
        sel.pairs, records.of(RESPONSES), records.of(FEATURES), score_context(cfg), labels
    )


def score_and_report(
    store: Any,
    sel: PersistenceSelection,
    cfg: RunConfig,
    records: RunRecords,
    manifest: dict[str, Any],
) -> dict[str, Any]:
    """Score the run's current records and write its report files; returns the report."""
    from stylebench.model_wrappers.registry import EMBEDDED_NOTES
    from stylebench.pipeline.score_config import thresholds_of
    from stylebench.report.persistence import report_dict, write_persistence_reports
    from stylebench.scoring import persistence as ps
    from stylebench.stages import gate

    turns = paired(sel, cfg, records)
    cells = ps.score_persistence(
        turns, thresholds_of(cfg), n_boot=cfg.score.n_boot, seed=cfg.decode.seed
    )
    half = ps.half_reversion(cells)
    notes = [EMBEDDED_NOTES[cfg.model]] if cfg.model in EMBEDDED_NOTES else []
    why = gate.skip_reason(cfg)
    notes.append(
        f"relevance gate not applied: {why}"
        if why
        else f"relevance: SRD on every turn of both dialogues ({cfg.judge.judge} judge); "
        "a turn whose instructed or control reply is not judged relevant is unscored"
    )
    n_turns = max((len(s.turns) for s in sel.samples), default=0)
    meta = {
        "model": cfg.model,
        "set_version": sel.samples[0].set_version if sel.samples else "",
        "set_checksum": sel.checksum,
        "n_samples": len(sel.samples),
        "identity": (manifest.get("identity") or {}).get("fingerprint", ""),
        "thresholds": {d: thresholds_of(cfg).for_dim(d) for d in cfg.dims},
    }
    summary = {
        "mean_after_turn1": None if (m := ps.mean_after_first(cells)) is None else round(m, 2),
        "by_turn": {
            str(k): None if v is None else round(v, 2) for k, v in ps.by_turn(cells).items()
        },
    }
    report = report_dict(
        meta,
        [ps.cell_dict(c) for c in cells],
        [
            {"dim": d, "direction": r, "lang": lg, "turn": t, "scored_to": last}
            for (d, r, lg), (t, last) in half.items()
        ],
        list(range(1, n_turns + 1)),
        summary,
        notes,
    )
    return write_persistence_reports(store.root, report)


def _write_manifest(
    store: Any, cfg: RunConfig, identity: Any, root: Path, sel: Any, model: Any, command: str
) -> None:
    """The run manifest of a persistence run: StyleBench's, its dialogues marked as persistence
    and counted in samples (each answered as two dialogues)."""
    from stylebench.commands.manifest import dialogues_entry, write_manifest
    from stylebench.commands.reporting import extractor_names
    from stylebench.commands.run_parts import judge_entry

    dialogues = {**dialogues_entry(root, sel.checksum, sel.arms), "protocol": "persistence"}
    dialogues["n_selected"] = len(sel.samples)
    write_manifest(
        store,
        cfg,
        identity,
        dialogues,
        model=model,
        judge=judge_entry(cfg),
        extractors=extractor_names(cfg),
        command=command,
    )


def run_persistence(cfg: RunConfig, root: Path, *, progress: bool = True) -> Any:
    """Run (or resume) a persistence set for ``cfg``: both dialogues of every selected sample,
    then the stages, scores and report. Returns a :class:`~.runs.RunResult`."""
    from stylebench.commands.manifest import (
        Identity,
        check_identity,
        read_run_manifest,
    )
    from stylebench.commands.run_parts import (
        RunResult,
        dropped_if_empty_on_user_error,
        model_spec,
        prepare_run_folder,
    )
    from stylebench.executors.base import make_executor
    from stylebench.model_wrappers.decoding import decode_entry
    from stylebench.model_wrappers.registry import MODELS
    from stylebench.pipeline.stage import run_stage
    from stylebench.stages.respond import ReplyLimits, RespondStage
    from stylebench.stages.runner import measure

    refuse_unread(cfg)
    if not (cfg.worker_python and ":" in cfg.model):
        MODELS[cfg.model]
    sel = select(cfg, root)
    check_persistence_models(cfg, sel.arms, given=cfg.flat())
    run_id = cfg.run_id or persistence_run_id(cfg, sel.checksum)
    store, fresh = prepare_run_folder(cfg, run_id, sel.checksum)
    with (
        dropped_if_empty_on_user_error(store.root, fresh),
        store.lock("stylebench run"),
        make_executor(cfg.executor) as executor,
    ):
        spec = model_spec(cfg, store.root / "worker.log")
        model = executor.build(spec)
        try:
            desc = model.describe()
            identity = Identity.of(desc, cfg.decode)
            check_identity(store, identity)
            entry = {**desc, "decode_effective": decode_entry(model, cfg.decode)}
            _write_manifest(store, cfg, identity, root, sel, entry, "run")
            stage = RespondStage(
                store,
                sel.arms,
                root,
                identity,
                model,
                limits=ReplyLimits(cfg.max_reply_chars, cfg.max_reply_s),
                strict=cfg.strict,
                model_spec=spec,
            )
            responded = run_stage(
                store, stage, strict=cfg.strict, progress=progress, executor=executor
            )
        finally:
            getattr(model, "close", lambda: None)()
        measured = measure(
            store,
            sel.arms,
            cfg,
            responded.records,
            progress=progress,
            executor=executor,
            only=PERSISTENCE_STAGES,
        )
        measured.counts["respond"] = responded.counts
        manifest = read_run_manifest(store)
        report = score_and_report(store, sel, cfg, measured.records, manifest)
        return RunResult(store, report, measured.counts)


def rescore_persistence(
    run_dir: Path | str,
    overrides: dict[str, Any],
    *,
    progress: bool = True,
    compute: bool = True,
    write: bool = True,
) -> Any:
    """Re-measure, re-judge and re-score a stored persistence run with new settings (the model
    is never called); ``compute=False`` only rebuilds the report from the current records;
    ``write=False`` (with ``compute=False``) writes nothing and returns the run's current
    records as a :class:`StoredPersistence` (``stylebench compare``)."""
    from stylebench.commands.manifest import (
        read_run_manifest,
        stored_identity,
    )
    from stylebench.commands.run_parts import RunResult, stored_config
    from stylebench.executors.base import make_executor
    from stylebench.pipeline.stage import run_stage
    from stylebench.stages.respond import RespondStage
    from stylebench.stages.runner import measure
    from stylebench.store import RunStore

    store = RunStore(run_dir)
    manifest = read_run_manifest(store)
    cfg = stored_config(manifest, overrides)
    refuse_unread(cfg)
    root = Path(manifest["dialogues"]["path"])
    sel = select(cfg, root)
    if compute:
        check_persistence_models(cfg, sel.arms, given=overrides)
    if sel.checksum != manifest["dialogues"]["checksum"]:
        raise BadValue(
            f"the persistence set {root} changed since this run was made; rebuild it or run again"
        )
    identity = stored_identity(manifest)
    if not compute and not write:
        lock = store.lock("stylebench compare")
    else:
        lock = store.lock("stylebench score" if compute else "stylebench report")
    with lock:
        if compute:
            model = manifest.get("model") or identity.model
            _write_manifest(store, cfg, identity, root, sel, model, "score")
            manifest = read_run_manifest(store)
        replies = run_stage(
            store, RespondStage(store, sel.arms, root, identity), compute=False
        ).records
        with make_executor(cfg.executor) as executor:
            measured = measure(
                store,
                sel.arms,
                cfg,
                replies,
                compute=compute,
                progress=progress and compute,
                executor=executor,
                only=PERSISTENCE_STAGES,
                manifest=manifest,
            )
        if not write:
            return StoredPersistence(store, manifest, cfg, sel, measured.records)
        report = score_and_report(store, sel, cfg, measured.records, manifest)
        return RunResult(store, report, measured.counts)
