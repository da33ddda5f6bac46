"""What ``run``, ``score`` and ``report`` share between the StyleBench protocol
(:mod:`.runs`) and the persistence protocol (:mod:`.persistence`): the run's result, how the
model and the judge are described, a stored run's config, and the clean-up of a run folder that
a user error left empty."""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from stylebench.config import RunConfig, flatten, resolve_config
from stylebench.errors import UserError
from stylebench.stages import gate
from stylebench.stages.respond_job import ModelSpec
from stylebench.store import LOCK_NAME, RunStore

#: executor settings a stored run's config does not pass on (how the ASR decoded does: it is
#: part of the transcripts' key; how many replies it decoded at once is not, nor does it change one)
WHERE_IT_RAN = (
    "executor",
    "ray_address",
    "workers",
    "gpus_per_worker",
    "feature_workers",
    "asr_workers",
)


@dataclass(frozen=True)
class RunResult:
    store: RunStore
    report: dict[str, Any]
    counts: dict[str, dict[str, int]]


def model_spec(cfg: RunConfig, log_path: Path | None = None) -> ModelSpec:
    """How to build the wrapper for ``cfg.model``: in process, or in ``cfg.worker_python``'s env."""
    return ModelSpec(
        cfg.model,
        dict(cfg.model_args),
        cfg.worker_python,
        cfg.turn_timeout_s,
        None if log_path is None else str(log_path),
    )


def judge_entry(cfg: RunConfig) -> dict[str, Any]:
    """The manifest's ``judge``: the judge's ``describe()`` (it is built once per process and
    settings, so the judge stage gets the same one), or why there is none."""
    why = gate.skip_reason(cfg)
    return (
        {"backend": cfg.judge.judge, "skipped": why}
        if why
        else gate.required_judge(cfg.judge).describe()
    )


def prepare_run_folder(cfg: RunConfig, run_id: str, checksum: str) -> tuple[RunStore, bool]:
    """The run store ``--out``/``run_id`` and whether it is new, with ``--out`` made.

    Raises:
        BadValue: the folder holds a run of another dialogue set, or ``--out`` cannot be made.
    """
    from stylebench.commands.manifest import read_run_manifest
    from stylebench.errors import BadValue

    store = RunStore(Path(cfg.out) / run_id)
    if store.exists() and read_run_manifest(store)["dialogues"]["checksum"] != checksum:
        raise BadValue(
            f"{store.root} holds a run of another dialogue set; pass a different --run-id or --out"
        )
    fresh = not store.root.exists()
    try:
        Path(cfg.out).mkdir(parents=True, exist_ok=True)
    except (FileExistsError, NotADirectoryError):
        pass  # a file in the way: the run store's own check names it
    except OSError as exc:
        raise BadValue(
            f"--out {cfg.out}: cannot create the run folder there ({exc.strerror or exc})"
        ) from None
    return store, fresh


@contextmanager
def dropped_if_empty_on_user_error(root: Path, fresh: bool) -> Iterator[None]:
    """A run folder this call made is removed (after its lock) when a user error ends the call
    and only its lock and empty files are left in it (a bad ``--model-arg``: nothing to resume). A worker log
    with text in it is kept: it says why the model did not start."""
    try:
        yield
    except UserError:
        if fresh and root.is_dir():
            left = [f for f in root.iterdir() if f.name != LOCK_NAME]
            if all(f.is_file() and f.stat().st_size == 0 for f in left):
                shutil.rmtree(root, ignore_errors=True)
        raise


def is_persistence_run(manifest: dict[str, Any]) -> bool:
    """Whether a run manifest is a persistence run's (docs/persistence.md)."""
    return (manifest.get("dialogues") or {}).get("protocol") == "persistence"


def stored_config(manifest: dict[str, Any], overrides: dict[str, Any]) -> RunConfig:
    """A stored run's config with ``overrides`` on top; a new judge or captioner backend drops
    the old one's options, and where the stored run's work ran is not passed on."""
    from stylebench.stages.registry import STAGES

    base = flatten(manifest["config"])
    for spec in STAGES:
        for name, options in spec.backend_options:
            if overrides.get(name) not in (
                None,
                base.get(name),
            ):  # another backend: drop its options
                for key in options:
                    base.pop(key, None)
    for key in WHERE_IT_RAN:  # where the stored run's work ran is not where this one runs
        base.pop(key, None)
    return resolve_config(overrides, base=base)
