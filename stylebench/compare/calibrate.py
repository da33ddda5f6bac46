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

from stylebench.config import RunConfig, flatten, resolve_config

CALIBRATION = ("reference", "neutral", "shuffled")
log = logging.getLogger(__name__)

#: options that belong to the compared model's run, not to the calibration rows'
_RUN_ONLY = ("model", "model_args", "worker_python", "run_id", "out", "turn_timeout_s")


def calibration_config(manifest: Mapping[str, Any], model: str, out: Path) -> RunConfig:
    """The stored config of a compared run with ``model`` in its place, writing under ``out``."""
    base = {k: v for k, v in flatten(manifest["config"]).items() if k not in _RUN_ONLY}
    return resolve_config({"model": model, "out": str(out)}, base=base)


def ensure_calibration(
    manifest: Mapping[str, Any],
    present: Sequence[str],
    out: Path,
    *,
    rows: Sequence[str] = CALIBRATION,
    progress: bool = False,
) -> list[tuple[Path, bool]]:
    """Run (or resume) every calibration row not in ``present``: ``(run folder, was there)``.

    A finished calibration run in ``out`` is resumed, which computes nothing, so repeating a
    comparison is cheap.
    """
    from stylebench.commands.runs import load_dialogues, run

    made = []
    for model in rows:
        if model in present:
            continue
        cfg = calibration_config(manifest, model, out)
        checksum = load_dialogues(cfg)[2]
        existed = (out / cfg.default_run_id(checksum) / "manifest.json").is_file()
        log.info("calibration row %s: %s in %s", model, "resuming" if existed else "running", out)
        made.append((run(cfg, progress=progress).store.root, existed))
    return made
