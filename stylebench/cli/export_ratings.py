"""``stylebench export-ratings RUN --out DIR``: write a blinded listening test for human raters."""

from __future__ import annotations

import sys
from typing import Any

from stylebench.cli.common import Args, argument, option

HELP = "write a blinded listening test for human raters"


def params() -> list[Any]:
    """The command's arguments."""
    return [
        argument("run_dir"),
        option("--out", required=True, help="new folder for the test (pages, sheets, audio)"),
        option("--raters", type=int, default=3, help="number of rater pages (default 3)"),
        option("--seed", type=int, default=0, help="fixes ids, check items and orders"),
        option(
            "--checks",
            type=int,
            help="attention-check items (default max(2, items/10, rounded up))",
        ),
        option(
            "--per-cell", type=int, help="at most N samples per (dim, direction, lang, emotion)"
        ),
        option("--embed-audio", is_flag=True, help="embed the audio in each page (one file each)"),
    ]


def main(args: Args) -> int:
    """Export the test and say what to send to raters."""
    from stylebench.ratings.export import export_ratings

    key = export_ratings(
        args.run_dir,
        args.out,
        raters=args.raters,
        seed=args.seed,
        checks=args.checks,
        per_cell=args.per_cell,
        embed_audio=args.embed_audio,
    )
    n_items = len(key["items"])
    print(
        f"[stylebench] test {key['test_id']}: {n_items} items ({key['n_checks']} attention checks) "
        f"for {len(key['raters'])} raters in {args.out}; {len(key['skipped'])} samples skipped "
        "(failed or unreadable replies). Send the rater_*.html pages (and audio/ unless "
        "--embed-audio) or the sheet_*.csv files; keep key.json private.",
        file=sys.stderr,
    )
    return 0
