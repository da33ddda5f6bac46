"""The calibration rows of a comparison: ``reference``, ``neutral`` and ``shuffled`` on the same
samples, with the same settings, made (or resumed) with the ordinary run machinery when absent.

They are embedded, offline models, so they cost only their measurement. ``reference`` is the
ceiling (every style step made exactly), ``neutral`` the floor (instructions ignored),
``shuffled`` the relevance gate's check (style followed, content swapped: it must be marked not
eligible).
"""

from __future__ import annotations

import logging
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from stylebench.compare.load import RunData
from stylebench.config import RunConfig, flatten, resolve_config

CALIBRATION = ("reference", "neutral", "shuffled")
log = logging.getLogger(__name__)

#: options that belong to the compared model's run, not to the calibration rows'
RUN_ONLY = ("model", "model_args", "worker_python", "run_id", "out", "turn_timeout_s")


def calibration_config(manifest: Mapping[str, Any], model: str, out: Path) -> RunConfig:
    """The stored config of a compared run with ``model`` in its place, writing under ``out``."""
    base = {k: v for k, v in flatten(manifest["config"]).items() if k not in RUN_ONLY}
    return resolve_config({"model": model, "out": str(out)}, base=base)


def calibration_folders(
    manifest: Mapping[str, Any],
    present: Sequence[str],
    out: Path,
    rows: Sequence[str] = CALIBRATION,
) -> list[tuple[str, RunConfig, Path]]:
    """``(model, config, run folder)`` of each calibration row not in ``present``: where a
    comparison of a run with ``manifest`` finds it under ``out`` (or makes it)."""
    from stylebench.commands.runs import load_dialogues

    out_rows = []
    for model in rows:
        if model in present:
            continue
        cfg = calibration_config(manifest, model, out)
        out_rows.append((model, cfg, out / cfg.default_run_id(load_dialogues(cfg)[2])))
    return out_rows


def ensure_calibration(
    manifest: Mapping[str, Any],
    present: Sequence[str],
    out: Path,
    *,
    rows: Sequence[str] = CALIBRATION,
    progress: bool = False,
) -> list[tuple[RunData, bool]]:
    """Every calibration row not in ``present``, read for comparison: ``(row, was there)``.

    A row that is not there is run; one that is there is read once, and resumed (then read
    again) only where resuming it could compute something (:func:`resume_computes_nothing`).
    """
    from stylebench.commands.runs import run
    from stylebench.compare.load import load_run

    made = []
    for model, cfg, folder in calibration_folders(manifest, present, out, rows):
        existed = (folder / "manifest.json").is_file()
        if existed:
            data = load_run(folder)
            if resume_computes_nothing(data, cfg):
                log.info("calibration row %s: finished in %s, read", model, out)
                made.append((data, True))
                continue
        log.info("calibration row %s: %s in %s", model, "resuming" if existed else "running", out)
        made.append((load_run(run(cfg, progress=progress).store.root), existed))
    return made


#: the options that name where a run is, not what it computes
_PLACE = ("run_id", "out")


def resume_computes_nothing(data: RunData, cfg: RunConfig) -> bool:
    """Whether ``stylebench run`` with ``cfg`` in ``data``'s folder would compute nothing: the
    same options, the same model (its ``describe()`` now, as the run would key its replies),
    the transcripts' CPU code path this machine's (a run keys new transcripts by it), and no
    reply or later unit left to compute. Such a resume would only rewrite the manifest's
    environment and the row's report, which a comparison does not read, so the row is read as
    it stands (reading it twice took a quarter of a comparison's time at paper size)."""
    from stylebench.commands.manifest import stored_identity
    from stylebench.commands.runs import current_identity
    from stylebench.stages.registry import recorded_asr_machine
    from stylebench.stages.transcribe import asr_machine

    def options(c: RunConfig) -> dict[str, Any]:
        return {k: v for k, v in c.flat().items() if k not in _PLACE}

    if data.pending or options(data.scored.cfg) != options(cfg):
        return False
    asr = cfg.measure.asr
    if asr != "none" and recorded_asr_machine(data.manifest) != asr_machine(
        asr, cfg.executor.asr_device
    ):
        return False
    return stored_identity(dict(data.manifest)).fp == current_identity(cfg).fp
