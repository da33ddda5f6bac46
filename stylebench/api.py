"""The Python API: stylebench's results as pandas DataFrames.

Four functions, each a thin layer over the code the command line runs, so a number here is the
number the command prints:

- :func:`load_run` — a stored run scored as ``stylebench report`` scores it
  (:func:`stylebench.commands.runs.score_stored`): its cells, turns, samples and verdicts.
- :func:`measure` — audio files measured as ``stylebench measure`` measures them
  (:func:`stylebench.commands.files.measure_rows`).
- :func:`pairs` — pairs of files scored as ``stylebench pairs`` scores them
  (:func:`stylebench.commands.pairs.run_pairs`).
- :func:`compare` — runs compared as ``stylebench compare`` compares them
  (:func:`stylebench.compare.command.comparison`), written nowhere unless asked.

They are importable from the package itself (``stylebench.load_run``, ``stylebench.measure``,
``stylebench.pairs``, ``stylebench.compare_runs`` for :func:`compare`: ``stylebench.compare`` is
the compare package), which loads this module, and pandas, only when one is first used.
pandas is the ``api`` extra (``pip install 'stylebench[api]'``; ``offline`` includes it).

Settings are named as the command line's flags are, with underscores: ``asr="none"``,
``pitch_stat="median"``, ``speed_pct=10``; ``config`` is a TOML or JSON settings file, under
them. Example::

    import stylebench

    files = stylebench.measure(["a.mp3", "b.wav"], asr="none")
    scored = stylebench.pairs("pairs.csv")
    scored.pools[scored.pools.scope == "group"][["group", "dim", "n_moved", "n_ok", "vsp"]]
    run = stylebench.load_run("runs/reference-pitch-all-1234abcd")
    run.cells.query("pair == '1-2'")
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from stylebench.errors import MissingExtra
from stylebench.records import JUDGEMENTS
from stylebench.scoring.cells import FRAME_COLUMNS

if TYPE_CHECKING:
    import pandas as pd

    from stylebench.commands.pairs import PairsScored
    from stylebench.commands.scored import ScoredRun
    from stylebench.compare.load import RunData

EXTRA = "api"


def pandas() -> Any:
    """The pandas module, or a :class:`~stylebench.errors.MissingExtra` naming the extra."""
    try:
        import pandas as pd
    except ImportError:
        raise MissingExtra(
            f"the Python API returns pandas DataFrames and pandas is not installed: pip install "
            f"'stylebench[{EXTRA}]'"
        ) from None
    return pd


def _frame(rows: Sequence[Mapping[str, Any]], columns: Sequence[str]) -> pd.DataFrame:
    return pandas().DataFrame(list(rows), columns=list(columns))


def _split_ci(row: dict[str, Any], name: str) -> dict[str, Any]:
    ci = row.pop(f"{name}_ci", None)
    row[f"{name}_ci_low"], row[f"{name}_ci_high"] = (None, None) if ci is None else ci
    return row


# --- a stored run -------------------------------------------------------------------------


@dataclass(frozen=True)
class RunFrames:
    """A stored run's scores as DataFrames (see :func:`load_run`); ``scored`` is the
    :class:`~stylebench.commands.scored.ScoredRun` they come from."""

    scored: ScoredRun
    cells: pd.DataFrame
    turns: pd.DataFrame
    samples: pd.DataFrame
    verdicts: pd.DataFrame


CELL_COLUMNS = FRAME_COLUMNS
TURN_COLUMNS = (
    "sample_id",
    "dim",
    "direction",
    "lang",
    "group",
    "turn",
    "value",
    "error",
    "flags",
    "excluded",
)
SAMPLE_COLUMNS = (
    "sample_id",
    "dim",
    "direction",
    "lang",
    "voice",
    "content",
    "emotion",
    "excluded",
    *(f"{what}_{pair}" for pair in ("1_2", "2_3") for what in ("change", "valid", "relative")),
)
VERDICT_COLUMNS = (
    "sample_id",
    "turn",
    "kind",
    "status",
    "label",
    "score",
    "reason",
    "backend",
    "model",
    "cached",
    "error",
)


def load_run(path: Path | str) -> RunFrames:
    """A stored run folder, scored as ``stylebench report`` scores it (nothing is computed or
    written).

    Returns:
        :class:`RunFrames` with

        - ``cells``: one row per (dim, direction, lang, pair, group) cell, as in ``report.json``
          (VSP and SVD in percent with their CIs split into ``_low``/``_high`` columns, ``n``,
          ``n_ok``, ``errors``: unscored samples by reason), gate exclusions applied;
        - ``turns``: one row per (sample, turn): its score on the dim's linear scale, or
          ``error`` saying why it has none, its flags, and whether the relevance gate left its
          sample out (``excluded``);
        - ``samples``: one row per sample: what it asked, and per turn pair (``1_2``, ``2_3``)
          its perceptual change, whether it was valid (moved as asked by at least the
          threshold) and its relative change in percent (``None`` when a turn is unscored);
        - ``verdicts``: the relevance judge's records (one per sample, turn and kind).

    Raises:
        MissingFile: not a run folder. BadValue: its dialogue set changed since.
        MissingExtra: pandas is not installed.
    """
    from stylebench.commands.runs import open_stored, score_stored
    from stylebench.compare.samples import outcomes
    from stylebench.scoring.cells import cell_dict

    pandas()
    scored = score_stored(open_stored(path))
    cells = [_split_ci(_split_ci(cell_dict(c), "vsp"), "svd") for c in scored.cells]
    turns = [
        {
            "sample_id": t.sample_id,
            "dim": t.dim,
            "direction": t.direction,
            "lang": t.lang,
            "group": t.group,
            "turn": t.turn,
            "value": t.value,
            "error": t.error,
            "flags": list(t.flags),
            "excluded": t.sample_id in scored.exclude,
        }
        for t in scored.turn_scores
    ]
    per_sample: dict[str, dict[str, Any]] = {}
    for key, by_id in outcomes(scored.turn_scores, scored.thresholds).items():
        pair = key[3].replace("-", "_")
        for sid, o in by_id.items():
            row = per_sample.setdefault(sid, {})
            row[f"change_{pair}"] = o.change
            row[f"valid_{pair}"] = o.valid if o.ok else None
            row[f"relative_{pair}"] = o.relative
    samples = [
        {
            "sample_id": s.id,
            "dim": s.dim,
            "direction": s.direction,
            "lang": s.lang,
            "voice": s.voice,
            "content": s.content,
            "emotion": s.emotion,
            "excluded": s.id in scored.exclude,
            **per_sample.get(s.id, {}),
        }
        for s in scored.samples
    ]
    verdicts = [
        {c: getattr(r, c, None) for c in VERDICT_COLUMNS if c != "sample_id"}
        | {"sample_id": r.sample_id}
        for r in scored.records.of(JUDGEMENTS).values()
    ]
    return RunFrames(
        scored,
        _frame(cells, CELL_COLUMNS),
        _frame(turns, TURN_COLUMNS),
        _frame(samples, SAMPLE_COLUMNS),
        _frame(
            sorted(verdicts, key=lambda v: (v["sample_id"], v["turn"], v["kind"])), VERDICT_COLUMNS
        ),
    )


# --- files and pairs of files -------------------------------------------------------------


def measure(
    paths: Path | str | Iterable[Path | str],
    *,
    lang: str | Sequence[str] = "en",
    jobs: int = 1,
    progress: bool = False,
    config: Path | str | None = None,
    **settings: Any,
) -> pd.DataFrame:
    """Measure audio files as ``stylebench measure`` does: one row per file, in order.

    Args:
        paths: one file or several (wav, flac, ogg, mp3; any sample rate).
        lang: the language spoken (``"en"`` or ``"zh"``), or one per file.
        jobs: files measured at once, one process each.
        progress: show a progress bar.
        config: a TOML or JSON settings file; ``settings`` win over it.
        **settings: measure settings named as the flags are (``asr="none"``, ``vad="energy"``,
            ``pitch_stat="median"``, ``speed_source="asr"``, ``f0_floor=60``).

    Returns:
        Columns :func:`stylebench.commands.files.row_columns`: the file, its status and error
        (a file that cannot be read is a row with the reason), duration and speech span, a
        column per dimension with its score on the linear scale (``pitch`` Hz, ``volume`` RMS
        amplitude, ``speed`` syllables per minute, an extension dimension in its own unit) and one
        ``<dim>_unscored`` with why it has none (``""`` when scored), ``volume_dbfs``,
        ``syllables``, ``transcript`` and every flag.

    Raises:
        BadValue: a setting that does not apply, or a bad value. MissingExtra: pandas, or the
            ASR's extra.
    """
    from stylebench.commands.files import measure_rows, row_columns

    pandas()
    items = [paths] if isinstance(paths, (str, Path)) else list(paths)
    rows = measure_rows(
        items, settings, config_file=config, lang=lang, jobs=jobs, progress=progress
    )
    return _frame(rows, row_columns())


@dataclass(frozen=True)
class PairFrames:
    """Pairs scored (see :func:`pairs`): ``pairs`` one row per pair, ``pools`` one per pool
    (``scope`` ``"group"``: one dim, direction and group; ``"dim"``: every pair of a dim),
    ``unscored`` the unscored pairs by reason, ``scored`` what they were built from."""

    scored: PairsScored
    pairs: pd.DataFrame
    pools: pd.DataFrame
    unscored: dict[str, int]


def pairs(
    data: Any,
    *,
    root: Path | str | None = None,
    lang: str = "en",
    allow_outside: bool = False,
    jobs: int = 1,
    progress: bool = False,
    seed: int = 0,
    config: Path | str | None = None,
    **settings: Any,
) -> PairFrames:
    """Score pairs of files as ``stylebench pairs`` does.

    Args:
        data: a pairs CSV's path, a DataFrame, or a list of dicts, with columns ``a``, ``b``,
            ``dim``, ``direction`` and optionally ``lang``, ``group``, ``id``
            (docs/import.md, "Pair scoring").
        root: the folder relative paths are read from, for a DataFrame or list (default: the
            current folder); a CSV's paths are read from its own folder.
        lang: the language of rows without one.
        allow_outside: accept absolute paths and paths that leave the folder.
        jobs, progress, seed: processes, progress bar, bootstrap seed.
        config, **settings: as for :func:`measure`, plus the thresholds (``pitch_st``,
            ``volume_db``, ``speed_pct``, ...) and ``n_boot``.

    Returns:
        :class:`PairFrames`: columns :data:`stylebench.commands.pairs.PAIR_COLUMNS` and
        :data:`stylebench.commands.pairs.CELL_COLUMNS`.

    Raises:
        BadValue: a table with a missing column, an unknown dim or direction, a bad language,
            an empty path, a duplicate id or a path outside its folder (one line naming the
            row and column). MissingFile: no such CSV. MissingExtra: pandas.
    """
    from stylebench.commands.pairs import (
        CELL_COLUMNS,
        PAIR_COLUMNS,
        cell_rows,
        pair_rows,
        parse_pairs,
        read_pairs_csv,
        run_pairs,
        unscored_pairs,
    )

    pd = pandas()
    flag = "allow_outside=True"
    if isinstance(data, (str, Path)):
        table = read_pairs_csv(data, lang=lang, allow_outside=allow_outside)
    else:
        if isinstance(data, pd.DataFrame):
            frame = data.astype(object).where(data.notna(), None)
            rows, columns = frame.to_dict("records"), [str(c) for c in data.columns]
            source = "the pairs DataFrame"
        else:
            rows = [dict(r) for r in data]
            columns = list(dict.fromkeys(k for r in rows for k in r))
            source = "the pairs list"
        table = parse_pairs(
            rows,
            columns,
            Path(root) if root is not None else Path.cwd(),
            source=source,
            lang=lang,
            allow_outside=allow_outside,
            flag=flag,
            first=0,
            word="row",
        )
    scored = run_pairs(table, settings, config_file=config, jobs=jobs, progress=progress, seed=seed)
    return PairFrames(
        scored,
        _frame(pair_rows(scored), PAIR_COLUMNS),
        _frame(cell_rows(scored), CELL_COLUMNS),
        unscored_pairs(scored),
    )


# --- comparing runs -------------------------------------------------------------------------


@dataclass(frozen=True)
class Comparison:
    """Runs compared (see :func:`compare`): ``result`` is ``compare.json``'s content."""

    result: dict[str, Any]
    runs: tuple[RunData, ...]
    leaderboard: pd.DataFrame
    cells: pd.DataFrame
    pairwise: pd.DataFrame

    @property
    def markdown(self) -> str:
        """The comparison as ``compare.md`` reads."""
        from stylebench.compare.md import render_md

        return render_md(self.result)


def compare(
    paths: Iterable[Path | str],
    *,
    allow: Iterable[str] = (),
    cluster: str = "none",
    n_boot: int = 2000,
    seed: int = 0,
    alpha: float = 0.05,
    calibration: bool = False,
    calibration_out: Path | str | None = None,
    out: Path | str | None = None,
    progress: bool = False,
) -> Comparison:
    """Compare run folders as ``stylebench compare`` does.

    Unlike the command, the calibration rows (reference, neutral, shuffled) are not run unless
    ``calibration`` is True (running them synthesises speech for the whole dialogue set), and
    nothing is written unless ``out`` names a folder (then compare.json/.md/.html and the
    leaderboard go there, as the command writes them).

    Returns:
        :class:`Comparison`: ``leaderboard`` (one row per model: mean VSP, relevance,
        provenance columns ``provenance.*``), ``cells`` (one row per cell and model: that
        model's VSP/SVD on the shared samples), ``pairwise`` (one row per cell and pair of
        models: VSP difference with its paired bootstrap CI, McNemar and Wilcoxon p-values,
        Holm-adjusted).

    Raises:
        BadValue: incompatible runs (naming the settings; ``allow`` takes the checks to let
            differ), fewer than two runs, no shared samples. MissingExtra: pandas, or the
            ``compare`` extra.
    """
    from stylebench.compare.command import comparison, write_comparison
    from stylebench.compare.load import records_held

    pd = pandas()
    dirs = [str(p) for p in ([paths] if isinstance(paths, (str, Path)) else paths)]
    kw: dict[str, Any] = {
        "allow": list(allow),
        "cluster": cluster,
        "n_boot": n_boot,
        "seed": seed,
        "alpha": alpha,
        "calibration": calibration,
        "calibration_out": calibration_out,
        "progress": progress,
    }
    with records_held():  # as ``stylebench compare``: runs read are left out of collections
        result, runs = comparison(dirs, **kw)
        if out is not None:
            write_comparison(result, runs, out)
    keys = ("dim", "direction", "lang", "pair", "group")
    cells, pairwise = [], []
    for block in result["cells"]:
        head = {k: block[k] for k in keys}
        for model, cell in block["models"].items():
            row = dict(cell or {})
            for k in keys:
                row.pop(k, None)
            cells.append({**head, "model": model, **_split_ci(_split_ci(row, "vsp"), "svd")})
        for p in block["pairwise"]:
            row = {**head, **{k: v for k, v in p.items() if k not in ("mcnemar", "wilcoxon")}}
            row = _split_ci(row, "vsp_diff")
            for family in ("mcnemar", "wilcoxon"):
                for k, v in (p.get(family) or {}).items():
                    row[f"{family}_{k}"] = v
            pairwise.append(row)
    return Comparison(
        result,
        tuple(runs),
        pd.json_normalize(result["leaderboard"]),
        pd.DataFrame(cells),
        pd.DataFrame(pairwise),
    )
