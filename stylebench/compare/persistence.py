"""``stylebench compare`` on persistence runs (docs/persistence.md#comparing-runs).

Per turn k, every pair of models is tested on the samples scored in both runs at k (pooled over
the selected dims, directions and languages): exact McNemar on whether the style persisted,
Holm-adjusted over all the tests. The leaderboard ranks by mean persistence over turns 2..N
(the mean over the (dim, direction, lang) cells of those turns); ``decay.png`` draws each
model's decay curve, one panel per dim, side by side (:mod:`stylebench.report.figures`). The calibration rows (``reference``,
``neutral``, ``forgetful``: :data:`CALIBRATION`) are run, or resumed, with the compared runs'
stored settings when they are not among the runs, as StyleBench's compare does; runs whose
measure, judge, score or decode settings differ are refused, naming each setting.
"""

from __future__ import annotations

import itertools
import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from stylebench.errors import BadValue
from stylebench.scoring.cells import is_valid

PLOT_NAME = "decay.png"
#: the persistence protocol's calibration rows: the ceiling, the floor, and the turn-2 drop
CALIBRATION = ("reference", "neutral", "forgetful")
#: the settings sections that must agree between compared runs (what a reply is measured,
#: judged and scored with, and how it was decoded); judge_cache only says where verdicts came from
_SECTIONS = ("measure", "judge", "score", "decode")
_IGNORED = ("judge.judge_cache",)


def settings_differences(configs: dict[str, dict[str, Any]]) -> list[str]:
    """Each setting of :data:`_SECTIONS` on which the stored configs (by label) differ, as
    ``"section.key (label: value, ...)"``."""
    flat = {
        label: {
            f"{sec}.{k}": v
            for sec in _SECTIONS
            for k, v in (cfg.get(sec) or {}).items()
            if f"{sec}.{k}" not in _IGNORED
        }
        for label, cfg in configs.items()
    }
    keys = sorted({k for f in flat.values() for k in f})
    out = []
    for k in keys:
        vals = {label: f.get(k) for label, f in flat.items()}
        if len({json.dumps(v, sort_keys=True, default=str) for v in vals.values()}) > 1:
            out.append(f"{k} (" + ", ".join(f"{lb}: {v!r}" for lb, v in vals.items()) + ")")
    return out


def _outcomes(turns: Sequence[Any], thresholds: Any) -> dict[tuple[str, int], bool]:
    """(sample id, turn) -> whether the style persisted, for the scored pairs."""
    return {
        (t.sample_id, t.turn): is_valid(t.dim, t.direction, t.control, t.instructed, thresholds)
        for t in turns
        if t.instructed is not None and t.control is not None
    }


def compare_persistence(runs: Sequence[dict[str, Any]]) -> dict[str, Any]:
    """The comparison of ``runs`` (each: ``label``, ``checksum``, ``turns`` (paired turns),
    ``thresholds``, ``cells`` (report cells), ``selection``).

    Raises:
        BadValue: fewer than two runs, runs of different sets or selections.
    """
    from stylebench.compare.paired import holm, mcnemar_exact
    from stylebench.scoring.persistence import by_turn, mean_after_first

    if len(runs) < 2:
        raise BadValue("compare needs at least two persistence runs")
    for r in runs[1:]:
        for key in ("checksum", "selection"):
            if r[key] != runs[0][key]:
                raise BadValue(
                    f"{r['label']} and {runs[0]['label']} differ in their {key} "
                    f"({r[key]} vs {runs[0][key]}); compare runs of one set and selection"
                )
    outcomes = {r["label"]: _outcomes(r["turns"], r["thresholds"]) for r in runs}
    n_turns = max((t.turn for r in runs for t in r["turns"]), default=0)
    tests = []
    for k in range(1, n_turns + 1):
        for a, b in itertools.combinations([r["label"] for r in runs], 2):
            shared = sorted(
                sid for (sid, turn) in outcomes[a] if turn == k and (sid, turn) in outcomes[b]
            )
            if not shared:
                continue
            xa = [outcomes[a][(s, k)] for s in shared]
            xb = [outcomes[b][(s, k)] for s in shared]
            res = mcnemar_exact(xa, xb)
            tests.append(
                {
                    "turn": k,
                    "a": a,
                    "b": b,
                    "n": res.n,
                    "a_only": res.n10,
                    "b_only": res.n01,
                    "persistence_a": round(100.0 * sum(xa) / len(xa), 2),
                    "persistence_b": round(100.0 * sum(xb) / len(xb), 2),
                    "p": res.p_value,
                }
            )
    for t, p in zip(tests, holm([t["p"] for t in tests]), strict=True):
        t["p_holm"] = p
    board = []
    for r in runs:
        cells = r["cells_obj"]
        m = mean_after_first(cells)
        board.append(
            {
                "model": r["label"],
                "mean_persistence_turns_2_on": None if m is None else round(m, 2),
                "by_turn": {
                    str(k): None if v is None else round(v, 2) for k, v in by_turn(cells).items()
                },
            }
        )
    board.sort(
        key=lambda row: (
            row["mean_persistence_turns_2_on"] is None,
            -(row["mean_persistence_turns_2_on"] or 0.0),
        )
    )
    return {
        "protocol": "persistence",
        "models": [r["label"] for r in runs],
        "turns": list(range(1, n_turns + 1)),
        "leaderboard": board,
        "tests": tests,
        "cells": {r["label"]: r["cells"] for r in runs},
    }


def render_md(result: dict[str, Any]) -> str:
    turns = result["turns"]
    lines = [
        "# Persistence comparison",
        "",
        "Leaderboard by mean persistence over turns 2..N (docs/persistence.md).",
        "",
        "| model | mean persistence, turns 2.. | " + " | ".join(f"turn {k}" for k in turns) + " |",
        "|---|---|" + "---|" * len(turns),
    ]
    for row in result["leaderboard"]:
        m = row["mean_persistence_turns_2_on"]
        per = [row["by_turn"].get(str(k)) for k in turns]
        lines.append(
            f"| {row['model']} | {'n/a' if m is None else f'{m:.0f}%'} | "
            + " | ".join("n/a" if v is None else f"{v:.0f}%" for v in per)
            + " |"
        )
    lines += [
        "",
        "## Paired tests per turn (exact McNemar on persisted or not; Holm over all tests)",
        "",
        "| turn | a | b | n | a only | b only | a | b | p (Holm) |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for t in result["tests"]:
        lines.append(
            f"| {t['turn']} | {t['a']} | {t['b']} | {t['n']} | {t['a_only']} | {t['b_only']} | "
            f"{t['persistence_a']:.0f}% | {t['persistence_b']:.0f}% | {t['p_holm']:.3g} |"
        )
    lines += ["", f"![decay curves]({PLOT_NAME})"]
    if result.get("notes"):
        lines += ["", "## Notes", ""] + [f"- {n}" for n in result["notes"]]
    return "\n".join(lines) + "\n"


def _refuse_different_settings(stored: Sequence[Any]) -> None:
    configs = {st.cfg.model: st.manifest.get("config") or {} for st in stored}
    diff = settings_differences(configs)
    if diff:
        raise BadValue(
            "these persistence runs are not comparable: they differ in "
            + "; ".join(diff)
            + ". Re-score them with the same settings (`stylebench score RUN --...`)"
        )


def _calibration_rows(
    stored: Sequence[Any], where: Path | str | None, notes: list[str], *, progress: bool
) -> list[Any]:
    """The calibration rows missing from ``stored``, run (or resumed) with the first run's
    stored settings and selection into ``where``; says which in ``notes``."""
    from stylebench.commands.persistence import persistence_run_id, rescore_persistence
    from stylebench.commands.runs import run
    from stylebench.compare.calibrate import calibration_config

    folder = Path(where) if where else stored[0].store.root.parent
    present = {st.cfg.model for st in stored}
    made, new, old = [], [], []
    for model in CALIBRATION:
        if model in present:
            continue
        cfg = calibration_config(stored[0].manifest, model, folder)
        run_id = persistence_run_id(cfg, stored[0].sel.checksum)
        existed = (folder / run_id / "manifest.json").is_file()
        root = run(cfg, progress=progress).store.root
        (old if existed else new).append(root.name)
        made.append(rescore_persistence(root, {}, compute=False, write=False))
    if new:
        notes.append(f"calibration rows run for this comparison into {folder}: {', '.join(new)}")
    if old:
        notes.append(f"calibration rows reused from {folder}: {', '.join(old)}")
    return made


def plot_side_by_side(result: dict[str, Any], path: Path) -> Path:
    """One panel per dim, one curve per model (in leaderboard order; the calibration rows in
    their own looks): persistence per turn, the mean over the dim's direction and language
    cells, n per point in each panel's title (:func:`stylebench.report.figures.decay_figure`);
    atomic PNG."""
    from stylebench.atomic import write_bytes
    from stylebench.report.figures import Model, decay_figure, render

    models = [
        Model(row["model"], row["model"] if row["model"] in CALIBRATION else None)
        for row in result["leaderboard"]
    ]
    return write_bytes(path, render(decay_figure(result["cells"], result["turns"], models), "png"))


def compare_persistence_runs(
    run_dirs: Sequence[Path | str],
    out: Path | str | None = None,
    *,
    calibration: bool = True,
    calibration_out: Path | str | None = None,
    progress: bool = False,
) -> tuple[dict[str, Any], str, Path]:
    """Load the stored persistence runs (nothing computed), add the calibration rows (run or
    resumed into ``calibration_out``, default beside the first run, unless ``calibration`` is
    False), compare them, write compare.json, compare.md and decay.png into ``out`` (default:
    ``compare-persistence`` beside the first).

    Raises:
        BadValue: runs of different sets, selections or settings; two runs of one model.
    """
    from stylebench.atomic import write_text
    from stylebench.commands.persistence import paired, rescore_persistence
    from stylebench.pipeline.score_config import thresholds_of
    from stylebench.scoring.persistence import cell_dict, score_persistence

    stored = [rescore_persistence(d, {}, compute=False, write=False) for d in run_dirs]
    _refuse_different_settings(stored)
    notes: list[str] = []
    if calibration:
        stored += _calibration_rows(stored, calibration_out, notes, progress=progress)
        _refuse_different_settings(stored)
    runs = []
    for st in stored:
        turns = paired(st.sel, st.cfg, st.records)
        thr = thresholds_of(st.cfg)
        cells = score_persistence(turns, thr, n_boot=st.cfg.score.n_boot, seed=st.cfg.decode.seed)
        runs.append(
            {
                "label": st.cfg.model,
                "checksum": st.sel.checksum,
                "selection": [st.cfg.dim, st.cfg.lang, st.cfg.limit],
                "turns": turns,
                "thresholds": thr,
                "cells_obj": cells,
                "cells": [cell_dict(c) for c in cells],
            }
        )
    labels = [r["label"] for r in runs]
    if len(set(labels)) != len(labels):
        raise BadValue(f"two runs of one model ({labels}); compare runs of different models")
    result = compare_persistence(runs)
    missing = [m for m in CALIBRATION if m not in labels]
    if missing:
        notes.append(f"calibration rows absent ({', '.join(missing)}): no bounds shown for them")
    result["notes"] = notes
    folder = Path(out) if out else Path(run_dirs[0]).parent / "compare-persistence"
    folder.mkdir(parents=True, exist_ok=True)
    md = render_md(result)
    try:
        plot_side_by_side(result, folder / PLOT_NAME)
    except ModuleNotFoundError as exc:
        if not (exc.name or "").startswith("matplotlib"):
            raise
        md += "\n_no plot: matplotlib is not installed (the [plot] extra)_\n"
    write_text(folder / "compare.json", json.dumps(result, indent=2, ensure_ascii=False) + "\n")
    write_text(folder / "compare.md", md)
    return result, md, folder
