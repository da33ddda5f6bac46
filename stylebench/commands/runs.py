"""The three ways a run folder is worked on.

``run``     respond -> transcribe -> features -> (probe) -> judge -> score/report
``rescore`` the same after respond, on a stored run with new settings (never calls the model)
``report_only`` score/report from the current stored records (computes nothing)

Each holds the run folder's lock for its whole duration, so two processes never work on one
folder at once.
"""

from __future__ import annotations

import logging
from collections import defaultdict
from collections.abc import Collection
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from stylebench.commands.manifest import (
    Identity,
    check_identity,
    dialogues_entry,
    read_run_manifest,
    stored_identity,
    write_manifest,
)
from stylebench.commands.reporting import extractor_names, report
from stylebench.commands.run_parts import (
    RunResult,
    dropped_if_empty_on_user_error,
    is_persistence_run,
    judge_entry,
    model_spec,
    prepare_run_folder,
    stored_config,
)
from stylebench.commands.scored import ScoredRun, score_run
from stylebench.config import RunConfig
from stylebench.errors import BadValue
from stylebench.executors.base import make_executor
from stylebench.pipeline.stage import run_stage
from stylebench.pipeline.timings import Invocation
from stylebench.records import Key, RespondRecord, Sample
from stylebench.stages.registry import RESPOND, check_models
from stylebench.stages.respond import ReplyLimits, RespondStage
from stylebench.stages.runner import measure
from stylebench.store import RunStore

log = logging.getLogger(__name__)


def load_dialogues(cfg: RunConfig) -> tuple[list[Sample], Path, str]:
    """The set's samples (user-turn audio not yet checked: :func:`select_samples` checks the
    turns it selects), its folder and its checksum."""
    from stylebench.dialogues.sets import default_set_path, load_set

    root = default_set_path(cfg.dims) if cfg.dialogues == "default" else Path(cfg.dialogues)
    samples, checksum = load_set(root, check_audio=False)
    return samples, root, checksum


def select_samples(
    samples: list[Sample], cfg: RunConfig, set_root: Path | None = None
) -> list[Sample]:
    """Samples of the asked dims and languages, the first ``limit`` of each cell by id
    (for emotion, of each (direction, lang, emotion) cell). With ``set_root``, the user-turn
    audio of the selected samples is checked (inside the set, whole, the hashed file): only
    those are played to the model, so only those are read (the harness used to hash every wav
    of the set on every command)."""
    cells: dict[tuple[str, str, str, str], list[Sample]] = defaultdict(list)
    for s in sorted(samples, key=lambda s: s.id):
        if s.dim in cfg.dims and s.lang in cfg.langs:
            cells[(s.dim, s.direction, s.lang, s.emotion)].append(s)
    chosen = [s for cell in cells.values() for s in (cell[: cfg.limit] if cfg.limit else cell)]
    if not chosen:
        raise BadValue(f"the dialogue set has no samples for dim={cfg.dim} lang={cfg.lang}")
    chosen.sort(key=lambda s: s.id)
    if set_root is not None:
        from stylebench.dialogues.sets import check_turn_audio

        check_turn_audio(set_root, chosen)
    return chosen


def persistence_root(cfg: RunConfig) -> Path | None:
    """The persistence set ``cfg.dialogues`` names (``persistence``: the cached default one),
    or None for a StyleBench set."""
    from stylebench.dialogues.persistence import default_persistence_set_path, is_persistence_set

    if cfg.dialogues == "persistence":
        return default_persistence_set_path()
    if cfg.dialogues != "default" and is_persistence_set(cfg.dialogues):
        return Path(cfg.dialogues)
    return None


def run(cfg: RunConfig, *, progress: bool = True) -> RunResult:
    """Run (or resume) the whole pipeline for ``cfg``; its timings go to ``timings.jsonl``
    (:mod:`.timings`: setup, each stage, scoring and the report)."""
    from stylebench.model_wrappers.decoding import decode_entry
    from stylebench.model_wrappers.registry import MODELS

    proot = persistence_root(cfg)
    if proot is not None:  # the persistence protocol (docs/persistence.md)
        from stylebench.commands.persistence import run_persistence

        return run_persistence(cfg, proot, progress=progress)
    inv = Invocation("run")
    setup = inv.start("setup")
    if not (cfg.worker_python and ":" in cfg.model):  # a worker may import module:Class
        MODELS[cfg.model]  # unknown names fail here, before any work, with suggestions
    if cfg.executor.executor == "ray":
        from stylebench.executors.ray_executor import import_ray

        import_ray()  # without the extra: one line naming it, before the run folder exists
    samples_all, set_root, checksum = load_dialogues(cfg)
    samples = select_samples(samples_all, cfg, set_root)
    # a model named by a path that is not there, a flag that would do nothing: before the folder
    check_models(cfg, samples, given=cfg.flat())
    store, fresh = prepare_run_folder(cfg, cfg.run_id or cfg.default_run_id(checksum), checksum)
    inv.store = store
    with (
        dropped_if_empty_on_user_error(store.root, fresh),
        store.lock("stylebench run"),
        make_executor(cfg.executor) as executor,
    ):
        # a remote worker cannot write into this folder: its worker adapter logs to its own disk
        spec = model_spec(
            cfg, None if cfg.executor.executor == "ray" else store.root / "worker.log"
        )
        model = setup.timed(executor.build, spec)  # loading the model is its work, not ours
        try:
            desc = setup.timed(model.describe)
            identity = Identity.of(desc, cfg.decode)
            check_identity(store, identity)
            from stylebench.stages.caption import self_caption_warning

            if warn := self_caption_warning(cfg, desc):
                log.warning(warn)
            entry = {**desc, "decode_effective": decode_entry(model, cfg.decode)}  # not in the key
            write_manifest(
                store,
                cfg,
                identity,
                dialogues_entry(set_root, checksum, samples),
                model=entry,
                judge=setup.timed(judge_entry, cfg),  # builds the judge (kept for its stage)
                extractors=extractor_names(cfg),
                command="run",
                invocation=inv.id,
            )
            inv.stop(setup)
            limits = ReplyLimits(cfg.max_reply_chars, cfg.max_reply_s)
            stage = RespondStage(
                store,
                samples,
                set_root,
                identity,
                model,
                limits=limits,
                strict=cfg.strict,
                model_spec=spec,
            )
            with inv.stage(RESPOND) as clock:
                responded = run_stage(
                    store, stage, strict=cfg.strict, progress=progress, executor=executor
                )
                clock.took(responded)
        finally:
            getattr(model, "close", lambda: None)()
        measured = measure(
            store,
            samples,
            cfg,
            responded.records,
            progress=progress,
            executor=executor,
            timings=inv,
        )
        measured.counts["respond"] = responded.counts
        return RunResult(
            store, _score_and_report(inv, store, samples, cfg, measured), measured.counts
        )


def current_identity(cfg: RunConfig) -> Identity:
    """The identity a run of ``cfg`` would key its replies by: its model built (as
    :func:`run` builds it), described and closed."""
    with make_executor(cfg.executor) as executor:
        model = executor.build(model_spec(cfg, None))
        try:
            return Identity.of(model.describe(), cfg.decode)
        finally:
            getattr(model, "close", lambda: None)()


def _score_and_report(
    inv: Invocation, store: RunStore, samples: list[Sample], cfg: RunConfig, measured: Any
) -> dict[str, Any]:
    """Score and write the report, each clocked, then close the invocation's timings."""
    with inv.stage("score", all_compute=True):
        scored = score_run(store, samples, cfg, measured)
    with inv.stage("report", all_compute=True):
        out = report(scored)
    inv.finish()
    return out


@dataclass(frozen=True)
class StoredRun:
    """A run folder opened for re-scoring, reporting or export: its config (the stored one with
    ``overrides`` on top), the samples it selected and its dialogue set."""

    store: RunStore
    manifest: dict[str, Any]
    cfg: RunConfig
    samples: list[Sample]
    set_root: Path
    checksum: str

    def replies(self) -> dict[Key, RespondRecord]:
        """The current replies (this run's identity only); the model is not called."""
        stage = RespondStage(
            self.store, self.samples, self.set_root, stored_identity(self.manifest)
        )
        records = run_stage(self.store, stage, compute=False).records
        if not records and next(self.store.iter_raw("respond"), None) is not None:
            # records, but none of the identity the manifest names: reporting would call every
            # cell unfinished when the manifest is what is wrong
            raise BadValue(
                f"{self.store.manifest_path}: no reply in respond.jsonl is of the model "
                "configuration this manifest names"
                + (
                    ""
                    if "identity" in self.manifest
                    else " (it has no identity: written by an older stylebench or edited)"
                )
                + "; re-run the folder with the stylebench that made it, or run it again"
            )
        return records


def score_stored(run: StoredRun, *, only: Collection[str] | None = None) -> ScoredRun:
    """Collect a stored run's current records (nothing is computed) and score them.

    ``only`` collects just those stages and what they read (:func:`.runner.measure`); the
    scores of the stages left out read as not run (``caption-eval`` needs no judge).
    """
    measured = measure(
        run.store,
        run.samples,
        run.cfg,
        run.replies(),
        compute=False,
        progress=False,
        only=only,
        manifest=run.manifest,
    )
    return score_run(run.store, run.samples, run.cfg, measured, manifest=run.manifest)


def open_stored(run_dir: Path | str, overrides: dict[str, Any] | None = None) -> StoredRun:
    """Open a finished (or interrupted) run folder.

    Raises:
        FileNotFoundError: not a run folder. ValueError: its dialogue set changed since.
    """
    overrides = overrides or {}
    store = RunStore(run_dir)
    manifest = read_run_manifest(store)
    if is_persistence_run(manifest):
        raise BadValue(
            f"{store.root} is a persistence run; this command reads StyleBench runs only "
            "(docs/persistence.md: `stylebench score` and `report` read both)"
        )
    cfg = stored_config(manifest, overrides)
    samples_all, set_root, checksum = load_dialogues(cfg)
    if checksum != manifest["dialogues"]["checksum"]:
        raise BadValue(
            "the dialogue set changed since this run was made; rebuild or point "
            f"--dialogues at the set with checksum {manifest['dialogues']['checksum'][:12]}"
        )
    return StoredRun(
        store, manifest, cfg, select_samples(samples_all, cfg, set_root), set_root, checksum
    )


def rescore(run_dir: Path | str, overrides: dict[str, Any], *, progress: bool = True) -> RunResult:
    """Re-transcribe / re-measure / re-judge / re-score a stored run with new settings; the model
    is never called."""
    if is_persistence_run(read_run_manifest(RunStore(run_dir))):
        from stylebench.commands.persistence import rescore_persistence

        return rescore_persistence(run_dir, overrides, progress=progress)
    inv = Invocation("score")
    setup = inv.start("setup")
    run = open_stored(run_dir, overrides)
    store, cfg, samples = run.store, run.cfg, run.samples
    check_models(cfg, samples, given=overrides)  # the user's flags, not the stored settings
    inv.store = store
    with store.lock("stylebench score"):
        identity = stored_identity(run.manifest)
        write_manifest(
            store,
            cfg,
            identity,
            dialogues_entry(run.set_root, run.checksum, samples),
            model=run.manifest.get("model") or identity.model,
            judge=setup.timed(judge_entry, cfg),
            extractors=extractor_names(cfg),
            command="score",
            invocation=inv.id,
        )
        replies = run.replies()
        inv.stop(setup)
        with make_executor(cfg.executor) as executor:
            measured = measure(
                store, samples, cfg, replies, progress=progress, executor=executor, timings=inv
            )
        return RunResult(
            store, _score_and_report(inv, store, samples, cfg, measured), measured.counts
        )


def report_only(run_dir: Path | str) -> RunResult:
    """Rebuild the report files from the current stored records."""
    if is_persistence_run(read_run_manifest(RunStore(run_dir))):
        from stylebench.commands.persistence import rescore_persistence

        return rescore_persistence(run_dir, {}, compute=False)
    run = open_stored(run_dir)
    with run.store.lock("stylebench report"):
        return RunResult(run.store, report(score_stored(run)), {})
