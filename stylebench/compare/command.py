"""``stylebench compare``: load, check, add the calibration rows, compare, write."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Collection, Sequence
from pathlib import Path
from typing import Any

from stylebench.compare.build import compare_runs, unique_labels
from stylebench.compare.calibrate import (
    CALIBRATION,
    RUN_ONLY,
    calibration_folders,
    ensure_calibration,
)
from stylebench.compare.files import write_files
from stylebench.compare.kept import keep_in_parallel
from stylebench.compare.load import (
    RunData,
    asr_machine_warnings,
    check_compatible,
    computed_scores,
    load_run,
    records_held,
)
from stylebench.compare.md import render_md


def default_out(runs: Sequence[RunData]) -> Path:
    ids = sorted(str(r.provenance["model_fingerprint"]) + r.root.name for r in runs)
    return runs[0].root.parent / (
        "compare-" + hashlib.sha256("|".join(ids).encode()).hexdigest()[:10]
    )


def compare_command(
    run_dirs: Sequence[Path | str],
    *,
    out: Path | str | None = None,
    allow: Collection[str] = (),
    cluster: str = "none",
    n_boot: int = 2000,
    seed: int = 0,
    alpha: float = 0.05,
    calibration: bool = True,
    calibration_out: Path | str | None = None,
    embed_audio: bool = False,
    progress: bool = False,
) -> tuple[dict[str, Any], str, Path]:
    """Compare the runs (plus the calibration rows) and write the files; ``(result, markdown,
    out folder)``.

    Incompatible runs are refused before any calibration row is run.

    Raises:
        ValueError: incompatible runs, fewer than two rows in all, or no shared samples.
    """
    with records_held():  # the runs read are left out of later garbage collections
        result, runs = comparison(
            run_dirs,
            allow=allow,
            cluster=cluster,
            n_boot=n_boot,
            seed=seed,
            alpha=alpha,
            calibration=calibration,
            calibration_out=calibration_out,
            progress=progress,
        )
        md, folder = write_comparison(result, runs, out, embed_audio=embed_audio)
    return result, md, folder


def write_comparison(
    result: dict[str, Any],
    runs: Sequence[RunData],
    out: Path | str | None = None,
    *,
    embed_audio: bool = False,
) -> tuple[str, Path]:
    """Write compare.json/.md/.html, the leaderboard, the figures (``figures/``, drawn once for
    both pages) and the cells' sample pages into ``out`` (default: beside the first run,
    :func:`default_out`); ``(markdown, folder)``."""
    from stylebench.compare.figures import (
        draw_or_say_why,
        figures_html,
        figures_md,
        write_figures,
    )
    from stylebench.compare.html import render_html
    from stylebench.compare.sample_pages import sample_pages, write_pages

    figures, why = draw_or_say_why(result)
    md = render_md(result, figures_md(figures, why))
    folder = Path(out) if out else default_out(runs)
    html = render_html(result, runs, folder, figures=figures_html(figures, why))
    write_files(folder, result, md, html)
    write_figures(folder, figures)
    write_pages(folder, sample_pages(result, runs, folder, embed_audio=embed_audio))
    return md, folder


def _rows_there(dirs: Sequence[Path], calibration_out: Path | str | None) -> list[Path]:
    """The calibration rows' folders that are already there for a comparison of ``dirs`` (as
    :func:`ensure_calibration` looks them up), to be read beside the runs; a run that cannot
    be read adds none (its own read says why)."""
    from stylebench.errors import UserError
    from stylebench.store import RunStore

    manifests = []
    for d in dirs:
        try:
            manifests.append((d, RunStore(d).read_manifest()))
        except (UserError, OSError, ValueError):  # load_run of the run says what is wrong
            continue
    present = [str((m.get("config") or {}).get("model")) for _, m in manifests]
    found: list[Path] = []
    asked: set[str] = set()
    for d, m in manifests:
        where = Path(calibration_out) if calibration_out else d.parent
        config = {k: v for k, v in (m.get("config") or {}).items() if k not in RUN_ONLY}
        ask = json.dumps([str(where), config], sort_keys=True, default=str)
        if ask in asked:  # the runs of one comparison mostly share their settings
            continue
        asked.add(ask)
        try:
            rows = calibration_folders(m, present, where)
        except (UserError, OSError, ValueError, KeyError):  # ensure_calibration says what
            continue
        found += [f for _, _, f in rows if (f / "manifest.json").is_file() and f not in found]
    return found


def comparison(
    run_dirs: Sequence[Path | str],
    *,
    allow: Collection[str] = (),
    cluster: str = "none",
    n_boot: int = 2000,
    seed: int = 0,
    alpha: float = 0.05,
    calibration: bool = True,
    calibration_out: Path | str | None = None,
    progress: bool = False,
) -> tuple[dict[str, Any], list[RunData]]:
    """The comparison of the runs (plus the calibration rows, run where missing), written
    nowhere: ``(result, the runs compared)``. :func:`compare_command` writes it.

    Raises:
        ValueError: incompatible runs, fewer than two rows in all, or no shared samples.
    """
    dirs = sorted({Path(d).resolve() for d in run_dirs})
    keep_in_parallel(
        dirs + (_rows_there(dirs, calibration_out) if calibration else []), computed_scores
    )
    runs = unique_labels([load_run(d) for d in dirs])
    allowed = check_compatible(runs, allow) if len(runs) > 1 else {}
    notes = [f"settings allowed to differ ({k}): " + "; ".join(v) for k, v in allowed.items()]
    if calibration:
        where = Path(calibration_out) if calibration_out else runs[0].root.parent
        manifest = runs[0].manifest
        made = ensure_calibration(manifest, [r.model for r in runs], where, progress=progress)
        new = [r.root.name for r, existed in made if not existed]
        old = [r.root.name for r, existed in made if existed]
        if new:
            notes.append(f"calibration rows run for this comparison into {where}: {', '.join(new)}")
        if old:
            notes.append(f"calibration rows reused from {where}: {', '.join(old)}")
        runs = unique_labels(runs + [r for r, _ in made])
        allowed = check_compatible(runs, allow)
    notes += asr_machine_warnings(runs)
    missing = [m for m in CALIBRATION if m not in {r.model for r in runs}]
    if missing:
        notes.append(f"calibration rows absent ({', '.join(missing)}): no bounds shown for them")
    result = compare_runs(runs, cluster=cluster, n_boot=n_boot, seed=seed, alpha=alpha, notes=notes)
    return result, runs
