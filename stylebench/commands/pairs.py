"""Pairs of audio files made anywhere, scored as a run scores a turn pair (``stylebench pairs``).

A pairs table has one row per pair: ``a``, ``b``, ``dim``, ``direction`` and optionally
``lang``, ``group``, ``id`` (other columns are ignored). ``b`` should be more (``intensify``) or
less (``attenuate``) of ``dim`` than ``a``. The two files are measured together as one two-turn
sample (:func:`stylebench.commands.files.measure_samples`: turn 1 = ``a``, turn 2 = ``b``), scored
by the dimension's own ``turn_values`` and :func:`~stylebench.scoring.turns.turn_score`, and
judged and pooled by the run's cell statistics (:mod:`stylebench.scoring.pairs`), under the
thresholds and unscored rules a run applies.

Paths: a relative path is read from the table's folder (a CSV's own folder; for a table handed
in by the API, ``root``). A path that leaves that folder, absolute or through ``..``, is refused
unless ``allow_outside``: a table copied with its audio keeps meaning the same files, and one
from elsewhere cannot point the command at any file on the machine. The test is on the path as
written (normalised, symbolic links not followed). The table is refused as a whole, in one line
naming the file, line and column, for a missing column, an unknown dim or direction, a bad
language, an empty path, a duplicate id or a path outside; a file that is missing or cannot be
measured only leaves its pair unscored, with the reason, counted in ``n`` and not in ``n_ok``.
"""

from __future__ import annotations

import csv
import os
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from stylebench.commands.files import (
    FileMeasurement,
    FileSettings,
    file_dims,
    measure_samples,
)
from stylebench.errors import BadValue
from stylebench.metrics.dims.base import dimension
from stylebench.paths import named_file
from stylebench.records import DIMS, DIRECTIONS, LANGS
from stylebench.scoring.cells import (
    TurnScore,
    is_valid,
    pair_values,
    perceptual_change,
    relative_change,
)
from stylebench.scoring.pairs import PairCell, pair_cells
from stylebench.scoring.turns import turn_score

REQUIRED = ("a", "b", "dim", "direction")
OPTIONAL = ("lang", "group", "id")
#: the table's line of its first pair (the header is line 1)
FIRST_LINE = 2


@dataclass(frozen=True)
class FilePair:
    """One row of a pairs table: its files (as written, and resolved), what it asks, its pool;
    ``line`` is where it is in the table (a CSV's line, a DataFrame's row)."""

    id: str
    line: int
    a: str
    b: str
    path_a: Path
    path_b: Path
    dim: str
    direction: str
    lang: str
    group: str


def _resolve(
    value: str, root: Path, where: str, column: str, allow_outside: bool, flag: str
) -> Path:
    if not value:
        raise BadValue(f"{where}, column {column}: the path is empty")
    p = Path(value)
    if p.is_absolute():
        if not allow_outside:
            raise BadValue(
                f"{where}, column {column}: {value!r} is an absolute path; write it relative to "
                f"the table's folder {root}, or pass {flag} to read files anywhere"
            )
        return Path(os.path.normpath(p))
    full = Path(os.path.normpath(root / p))
    base = Path(os.path.normpath(root))
    if not allow_outside and not full.is_relative_to(base):
        raise BadValue(
            f"{where}, column {column}: {value!r} leads outside the table's folder {root}; "
            f"move the file under it, or pass {flag} to read files anywhere"
        )
    return full


def parse_pairs(
    rows: Iterable[Mapping[str, Any]],
    columns: Sequence[str],
    root: Path | str,
    *,
    source: str,
    lang: str = "en",
    allow_outside: bool = False,
    flag: str = "--allow-outside",
    first: int = FIRST_LINE,
    word: str = "line",
) -> tuple[FilePair, ...]:
    """Check a pairs table and resolve its paths against ``root`` (see the module docstring).

    ``rows`` are the table's rows as ``{column: value}``, one per pair; messages call the first
    ``f"{source} {word} {first}"`` (a CSV's line 2, a DataFrame's row 0). ``lang`` is the
    language of rows without one, and ``flag`` is how the caller's user allows paths outside
    (``--allow-outside``, ``allow_outside=True``).

    Raises:
        BadValue: one line naming ``source``, the line and the column.
    """
    cols = [str(c).strip() for c in columns]
    missing = [c for c in REQUIRED if c not in cols]
    if missing:
        raise BadValue(
            f"{source}: no column {', '.join(missing)} (its columns: {', '.join(cols) or 'none'}; "
            f"a pairs table needs {', '.join(REQUIRED)}, and may have {', '.join(OPTIONAL)})"
        )
    if lang not in LANGS:
        raise BadValue(f"--lang must be one of {', '.join(LANGS)}, got {lang!r}")
    dims = file_dims()
    root = Path(root)
    out: list[FilePair] = []
    seen: dict[str, int] = {}
    for line, row in enumerate(rows, start=first):
        cell = {
            c: "" if row.get(c) is None else str(row.get(c)).strip() for c in (*REQUIRED, *OPTIONAL)
        }
        where = f"{source} {word} {line}"
        if cell["dim"] not in dims:
            note = dimension(cell["dim"]).files_note if cell["dim"] in DIMS else ""
            why = f" ({note})" if note else ""
            raise BadValue(
                f"{where}, column dim: {cell['dim']!r} is not one of {', '.join(dims)}{why}"
            )
        if cell["direction"] not in DIRECTIONS:
            raise BadValue(
                f"{where}, column direction: {cell['direction']!r} is not one of "
                f"{', '.join(DIRECTIONS)} (b should be more, or less, of the dim than a)"
            )
        pair_lang = cell["lang"] or lang
        if pair_lang not in LANGS:
            raise BadValue(f"{where}, column lang: {pair_lang!r} is not one of {', '.join(LANGS)}")
        pid = cell["id"] or f"pair{line - first + 1}"
        if pid in seen:
            raise BadValue(f"{where}, column id: {pid!r} is also the id of {word} {seen[pid]}")
        seen[pid] = line
        paths = [_resolve(cell[c], root, where, c, allow_outside, flag) for c in ("a", "b")]
        out.append(
            FilePair(
                pid,
                line,
                cell["a"],
                cell["b"],
                paths[0],
                paths[1],
                cell["dim"],
                cell["direction"],
                pair_lang,
                cell["group"],
            )
        )
    if not out:
        raise BadValue(f"{source}: the table has no pairs (a header and no rows)")
    return tuple(out)


def read_pairs_csv(
    path: Path | str, *, lang: str = "en", allow_outside: bool = False
) -> tuple[FilePair, ...]:
    """Read and check a pairs CSV (UTF-8, a header row); paths are relative to its folder.

    Raises:
        MissingFile: no such file. BadValue: a table :func:`parse_pairs` refuses, or not CSV.
    """
    p = named_file(path, "pairs file")
    try:
        with open(p, newline="", encoding="utf-8-sig") as fh:
            reader = csv.DictReader(fh)
            columns = [c for c in (reader.fieldnames or []) if c is not None]
            rows = [{(k or "").strip(): v for k, v in r.items()} for r in reader]
    except (UnicodeDecodeError, csv.Error) as exc:
        raise BadValue(f"{p}: not a UTF-8 CSV table ({type(exc).__name__}: {exc})") from None
    return parse_pairs(
        rows, columns, p.parent, source=str(p), lang=lang, allow_outside=allow_outside
    )


@dataclass(frozen=True)
class PairResult:
    """One pair scored: both files' measurements and turn scores on the pair's dim, the change
    ``a -> b`` on the dim's perceptual scale (and relative, in percent of ``a``), whether it
    moved as asked (``None``: unscored, ``reason`` says why)."""

    pair: FilePair
    a: FileMeasurement
    b: FileMeasurement
    scores: tuple[TurnScore, TurnScore]
    change: float | None
    relative: float | None
    moved: bool | None
    reason: str


@dataclass(frozen=True)
class PairsScored:
    """Every pair's result and the pools over them (:func:`~stylebench.scoring.pairs.pair_cells`)."""

    pairs: tuple[PairResult, ...]
    cells: tuple[PairCell, ...]
    settings: FileSettings


def score_pairs(
    pairs: Sequence[FilePair],
    settings: FileSettings,
    *,
    jobs: int = 1,
    progress: bool = False,
    seed: int = 0,
) -> PairsScored:
    """Measure and score every pair, then pool them (bootstrap ``settings.n_boot``, ``seed``)."""
    measured = measure_samples(
        [(p.id, (p.path_a, p.path_b), p.lang) for p in pairs],
        settings,
        jobs=jobs,
        progress=progress,
        desc="pairs",
        unit="pair",
    )
    results: list[PairResult] = []
    scores: list[TurnScore] = []
    for p, m in zip(pairs, measured, strict=True):
        fa, fb = m.files
        values, extra = m.values[p.dim], m.extra[p.dim]
        ta = turn_score(p, 1, fa.features, values, extra, p.group)
        tb = turn_score(p, 2, fb.features, values, extra, p.group)
        scores += [ta, tb]
        got = pair_values(ta, tb)
        if isinstance(got, str):
            side = "a" if ta.value is None else "b"
            results.append(PairResult(p, fa, fb, (ta, tb), None, None, None, f"{side}: {got}"))
            continue
        a, b = got
        results.append(
            PairResult(
                p,
                fa,
                fb,
                (ta, tb),
                perceptual_change(p.dim, a, b),
                relative_change(p.dim, a, b),
                is_valid(p.dim, p.direction, a, b, settings.thresholds),
                "",
            )
        )
    cells = pair_cells(scores, settings.thresholds, n_boot=settings.n_boot, seed=seed)
    return PairsScored(tuple(results), tuple(cells), settings)


PAIR_COLUMNS = (
    "id",
    "line",
    "a",
    "b",
    "dim",
    "direction",
    "lang",
    "group",
    "score_a",
    "score_b",
    "unit",
    "change",
    "relative_pct",
    "threshold",
    "moved",
    "unscored",
    "loudness_a_lufs",
    "loudness_b_lufs",
    "loudness_change_lu",
    "flags_a",
    "flags_b",
)


def pair_row(r: PairResult, settings: FileSettings) -> dict[str, Any]:
    """One pair as a flat row (keys :data:`PAIR_COLUMNS`); the change is in the dim's
    perceptual unit (``unit``: st, dB, %), ``moved`` is ``None`` for an unscored pair."""
    p = r.pair
    return {
        "id": p.id,
        "line": p.line,
        "a": p.a,
        "b": p.b,
        "dim": p.dim,
        "direction": p.direction,
        "lang": p.lang,
        "group": p.group,
        "score_a": r.scores[0].value,
        "score_b": r.scores[1].value,
        "unit": dimension(p.dim).unit,
        "change": r.change,
        "relative_pct": r.relative,
        "threshold": settings.thresholds.for_dim(p.dim),
        "moved": r.moved,
        "unscored": r.reason,
        # --loudness: each file's integrated loudness and b's change from a (LU), whatever dim
        # the pair asks about; None when not asked or not measurable
        "loudness_a_lufs": _lufs(r.a.lufs),
        "loudness_b_lufs": _lufs(r.b.lufs),
        "loudness_change_lu": (
            None if r.a.lufs is None or r.b.lufs is None else round(r.b.lufs - r.a.lufs, 3)
        ),
        "flags_a": list(r.a.flags),
        "flags_b": list(r.b.flags),
    }


def _lufs(x: float | None) -> float | None:
    return None if x is None else round(x, 3)


CELL_COLUMNS = (
    "scope",
    "dim",
    "direction",
    "lang",
    "group",
    "n",
    "n_ok",
    "n_moved",
    "vsp",
    "vsp_ci_low",
    "vsp_ci_high",
    "toward_mean",
    "toward_ci_low",
    "toward_ci_high",
    "unit",
    "change_mean",
    "svd",
    "svd_ci_low",
    "svd_ci_high",
    "svd_signed",
    "n_unscored",
    "unscored",
)


def cell_row(c: PairCell) -> dict[str, Any]:
    """One pool as a flat row (keys :data:`CELL_COLUMNS`): VSP and SVD in percent, the changes
    in the dim's perceptual unit, ``unscored`` the count per reason."""
    cell = c.cell

    def ci(v: tuple[float, float] | None, i: int) -> float | None:
        return None if v is None else v[i]

    return {
        "scope": c.scope,
        "dim": cell.dim,
        "direction": cell.direction,
        "lang": cell.lang,
        "group": cell.group,
        "n": cell.n,
        "n_ok": cell.n_decided,
        "n_moved": cell.n_valid,
        "vsp": cell.vsp,
        "vsp_ci_low": ci(cell.vsp_ci, 0),
        "vsp_ci_high": ci(cell.vsp_ci, 1),
        "toward_mean": c.toward_mean,
        "toward_ci_low": ci(c.toward_ci, 0),
        "toward_ci_high": ci(c.toward_ci, 1),
        "unit": dimension(cell.dim).unit,
        "change_mean": cell.change_mean,
        "svd": cell.svd,
        "svd_ci_low": ci(cell.svd_ci, 0),
        "svd_ci_high": ci(cell.svd_ci, 1),
        "svd_signed": cell.svd_signed,
        "n_unscored": cell.n - cell.n_decided,
        "unscored": dict(cell.errors),
    }


def run_pairs(
    pairs: Sequence[FilePair],
    settings: Mapping[str, Any] | None = None,
    *,
    config_file: Path | str | None = None,
    jobs: int = 1,
    progress: bool = False,
    seed: int = 0,
) -> PairsScored:
    """``stylebench pairs``' work on checked pairs, with settings named as the CLI flags are
    (``asr="none"``, ``pitch_st=2``): the command and :func:`stylebench.pairs` both call this."""
    from stylebench.commands.files import PAIR_SECTIONS, file_settings

    fs = file_settings(settings or {}, config_file, PAIR_SECTIONS)
    return score_pairs(pairs, fs, jobs=jobs, progress=progress, seed=seed)


def pair_rows(scored: PairsScored) -> list[dict[str, Any]]:
    return [pair_row(r, scored.settings) for r in scored.pairs]


def cell_rows(scored: PairsScored) -> list[dict[str, Any]]:
    return [cell_row(c) for c in scored.cells]


def unscored_pairs(scored: PairsScored) -> dict[str, int]:
    """How many pairs are unscored for each reason (the file's side and its first clause)."""
    from stylebench.commands.files import short_reason

    out: dict[str, int] = {}
    for r in scored.pairs:
        if r.reason:
            side, _, why = r.reason.partition(": ")
            key = f"{side}: {short_reason(why)}"
            out[key] = out.get(key, 0) + 1
    return out


def settings_entry(scored: PairsScored, seed: int) -> dict[str, Any]:
    """What the numbers were computed under (the JSON output's ``settings``)."""
    s = scored.settings
    return {
        "thresholds": {d: s.thresholds.for_dim(d) for d in file_dims()},
        "asr": None if s.asr is None else f"{s.asr.backend} {s.asr.model}",
        "vad": s.features.vad,
        "pitch_stat": s.context.get("pitch_stat"),
        "speed_source": s.context.get("speed_source"),
        "n_boot": s.n_boot,
        "seed": seed,
        "ci": 0.95,
    }
