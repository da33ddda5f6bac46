"""``stylebench pairs PAIRS.csv``: did b move from a as asked? Per pair, and VSP/SVD per group."""

from __future__ import annotations

import sys
from typing import Any

import click

from stylebench.cli.common import Args, argument, option
from stylebench.cli.measure import given_settings, setting_options
from stylebench.cli.rows import (
    chosen_format,
    counts_line,
    csv_text,
    emit,
    json_text,
    num,
    out_option,
    row_format_option,
    text_table,
)
from stylebench.errors import BadValue
from stylebench.records import LANGS

HELP = "score pairs of audio files: did b move from a on a dim as asked (VSP/SVD per group)"


def params() -> list[Any]:
    from stylebench.commands.files import PAIR_SECTIONS

    return [
        argument(
            "pairs_csv",
            help="CSV with columns a, b, dim, direction[, lang, group, id]; paths relative to "
            'its folder (docs/import.md, "Pair scoring")',
        ),
        option(
            "--lang",
            type=click.Choice(LANGS),
            default="en",
            help="language of the rows without a lang column (default en)",
        ),
        option(
            "--allow-outside",
            is_flag=True,
            help="accept absolute paths and paths that leave the CSV's folder",
        ),
        option("--per-pair", is_flag=True, help="also print every pair's change and outcome"),
        option(
            "--per-pair-out",
            default=None,
            metavar="FILE",
            help="write every pair's row to FILE (.json: JSON, else CSV)",
        ),
        row_format_option(),
        out_option(),
        option("--jobs", type=int, default=1, help="pairs measured at once, one process each"),
        option("--seed", type=int, default=0, help="bootstrap seed (default 0)"),
        option("--config", help="TOML or JSON file of settings (CLI flags win)"),
        *setting_options(PAIR_SECTIONS),
    ]


def _ci(r: dict[str, Any], name: str, nd: int) -> str:
    lo, hi = r[f"{name}_ci_low"], r[f"{name}_ci_high"]
    return "-" if lo is None else f"[{num(lo, nd)}, {num(hi, nd)}]"


POOL_COLUMNS = [
    ("dim", lambda r: r["dim"]),
    ("direction", lambda r: r["direction"]),
    ("lang", lambda r: r["lang"]),
    ("group", lambda r: r["group"] or "-"),
    ("moved/n_ok", lambda r: f"{r['n_moved']}/{r['n_ok']}"),
    ("n", lambda r: str(r["n"])),
    ("VSP %", lambda r: num(r["vsp"], 1)),
    ("VSP 95% CI", lambda r: _ci(r, "vsp", 1)),
    (
        "change toward",
        lambda r: "-" if r["toward_mean"] is None else f"{num(r['toward_mean'], 2)} {r['unit']}",
    ),
    ("change 95% CI", lambda r: _ci(r, "toward", 2)),
    ("SVD %", lambda r: num(r["svd"], 1)),
    ("SVD 95% CI", lambda r: _ci(r, "svd", 1)),
]

PAIR_TABLE = [
    ("id", lambda r: r["id"]),
    ("group", lambda r: r["group"] or "-"),
    ("dim", lambda r: r["dim"]),
    ("direction", lambda r: r["direction"]),
    ("lang", lambda r: r["lang"]),
    ("a", lambda r: num(r["score_a"], 3 if r["dim"] == "volume" else 1)),
    ("b", lambda r: num(r["score_b"], 3 if r["dim"] == "volume" else 1)),
    ("change", lambda r: "-" if r["change"] is None else f"{num(r['change'], 2)} {r['unit']}"),
    ("moved", lambda r: {True: "yes", False: "no", None: "-"}[r["moved"]]),
    ("unscored", lambda r: r["unscored"] or "-"),
]
#: with --loudness: b's integrated loudness change from a, before the outcome columns
LOUDNESS_CELL = ("loudness LU", lambda r: num(r["loudness_change_lu"], 2))


def table(
    pools: list[dict[str, Any]],
    pairs: list[dict[str, Any]] | None,
    unscored: dict[str, int],
    loudness: bool = False,
) -> str:
    """The pools (by group, then each dim over all), the pairs if asked (with ``loudness``, each
    pair's LU change), what is unscored."""
    groups = [r for r in pools if r["scope"] == "group"]
    dims = [r for r in pools if r["scope"] == "dim"]
    text = "per group\n" + text_table(POOL_COLUMNS, groups)
    text += "\nper dim, every group and direction\n" + text_table(POOL_COLUMNS, dims)
    if pairs is not None:
        cols = PAIR_TABLE[:-2] + [LOUDNESS_CELL] + PAIR_TABLE[-2:] if loudness else PAIR_TABLE
        text += "\nper pair\n" + text_table(cols, pairs)
    n = sum(r["n"] for r in dims)
    k = sum(unscored.values())
    text += (
        f"\n{n} pairs: {n - k} scored, {k} unscored"
        + (f" ({counts_line(unscored)})" if k else "")
        + "\n"
    )
    return text


def main(args: Args) -> int:
    from stylebench.commands.pairs import (
        CELL_COLUMNS,
        PAIR_COLUMNS,
        cell_rows,
        pair_rows,
        read_pairs_csv,
        run_pairs,
        settings_entry,
        unscored_pairs,
    )

    fmt = chosen_format(args.format, args.out)
    loudness = bool(given_settings(args).get("loudness"))
    if loudness and not (args.per_pair or args.per_pair_out):
        raise BadValue(
            "--loudness gives each pair's integrated loudness change (LU), a per-pair value: add "
            "--per-pair or --per-pair-out FILE"
        )
    if args.per_pair and fmt == "csv":
        raise BadValue(
            "--per-pair with CSV output: one CSV holds one table; pass --per-pair-out FILE for "
            "the pairs' rows"
        )
    pairs = read_pairs_csv(args.pairs_csv, lang=args.lang, allow_outside=args.allow_outside)
    scored = run_pairs(
        pairs,
        given_settings(args),
        config_file=args.config,
        jobs=args.jobs,
        progress=not args.no_progress,
        seed=args.seed,
    )
    pools, rows, unscored = cell_rows(scored), pair_rows(scored), unscored_pairs(scored)
    if fmt == "csv":
        text = csv_text(pools, CELL_COLUMNS)
    elif fmt == "json":
        data: dict[str, Any] = {"settings": settings_entry(scored, args.seed), "pools": pools}
        if args.per_pair:
            data["pairs"] = rows
        data["unscored"] = unscored
        text = json_text(data)
    else:
        text = table(pools, rows if args.per_pair else None, unscored, loudness)
    if args.per_pair_out:
        is_json = args.per_pair_out.lower().endswith(".json")
        emit(
            json_text(rows) if is_json else csv_text(rows, PAIR_COLUMNS),
            args.per_pair_out,
            "per-pair rows",
        )
    emit(text, args.out, "pair scores")
    if fmt != "table" or args.out:
        k = sum(unscored.values())
        print(
            f"stylebench: {len(rows)} pairs, {k} unscored"
            + (f" ({counts_line(unscored)})" if k else ""),
            file=sys.stderr,
        )
    return 0
