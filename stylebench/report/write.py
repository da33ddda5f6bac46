"""Write a run's report files: report.json, report.md, report.csv and trajectories.png.

Each text file is written to a temporary name and renamed, so a reader never sees half a report.
The plot is optional (the ``[plot]`` extra); when it cannot be drawn the report says why under
its ``plot`` key, which is absent whenever the plot was drawn, so normal reports keep their keys.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence
from pathlib import Path
from typing import Any

from stylebench.atomic import write_text
from stylebench.report.build import ReportMeta, build_report
from stylebench.report.formats import FILE_NAMES, render
from stylebench.report.plots import NothingToPlot, plot_trajectories
from stylebench.report.sections import SECTIONS, Section
from stylebench.scoring.cells import Cell, TurnScore

PLOT_NAME = "trajectories.png"
NO_MATPLOTLIB = (
    "no plot: matplotlib is not installed; install the [plot] extra "
    "(pip install 'stylebench[plot]')"
)


def _plot(
    root: Path, meta: ReportMeta, turn_scores: Sequence[TurnScore], exclude: Collection[str]
) -> tuple[str | None, Exception | None]:
    """Draw the plot; ``(why there is no plot, an unexpected error to raise)``."""
    try:
        plot_trajectories(turn_scores, root / PLOT_NAME, title=meta.model, exclude=exclude)
    except ModuleNotFoundError as exc:
        if not (exc.name or "").startswith("matplotlib"):
            raise  # a missing core dependency is a broken install, not a missing extra
        return NO_MATPLOTLIB, None
    except NothingToPlot as exc:
        return f"no plot: {exc}", None
    except Exception as exc:  # a bug or a matplotlib failure: reported, then raised
        return f"no plot: plotting failed ({type(exc).__name__}: {exc})", exc
    return None, None


def write_reports(
    root: Path,
    meta: ReportMeta,
    cells: Sequence[Cell],
    turn_scores: Sequence[TurnScore],
    *,
    exclude: Collection[str] = (),
    plot: bool = True,
    sections: Sequence[Section] = SECTIONS,
) -> dict[str, Any]:
    """Write report.json / report.md / report.csv (and trajectories.png) into ``root``.

    Any trajectories.png already there is removed first: it belongs to earlier scores and would
    look current. With ``plot`` the plot is redrawn; when it cannot be (matplotlib missing, no
    sample with a turn-1 score) the report gets ``"plot": "no plot: <reason>"``, which the
    Markdown shows too. Pass the same ``exclude`` as to the scoring so per-turn means and the
    plot count the same samples as the cells. ``sections`` are report.md's optional sections
    (the report's own and the run's stages').

    Returns:
        The report dict, as written to report.json.

    Raises:
        Exception: whatever the plot raised unexpectedly (a bug, a matplotlib failure), after
            the three report files, saying "no plot: plotting failed (...)", are written.
    """
    root = Path(root)
    report = build_report(meta, cells, turn_scores, exclude=exclude)
    (root / PLOT_NAME).unlink(missing_ok=True)
    failure = None
    if plot:
        why, failure = _plot(root, meta, turn_scores, exclude)
        if why is not None:
            report["plot"] = why
    for fmt, name in FILE_NAMES.items():  # json first: the source of truth
        write_text(root / name, render(report, fmt, sections=sections))
    if failure is not None:
        raise failure
    return report
