"""The ``export-ratings`` and ``import-ratings`` subcommands (parsers and handlers; light imports)."""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any


def add_ratings_parsers(sub: Any) -> None:
    """Add the two rating subcommands to the CLI's subparsers."""
    e = sub.add_parser("export-ratings", help="write a blinded listening test for human raters")
    e.add_argument("run_dir")
    e.add_argument("--out", required=True, help="new folder for the test (pages, sheets, audio)")
    e.add_argument("--raters", type=int, default=3, help="number of rater pages (default 3)")
    e.add_argument("--seed", type=int, default=0, help="fixes ids, check items and orders")
    e.add_argument(
        "--checks", type=int, help="attention-check items (default max(2, items/10, rounded up))"
    )
    e.add_argument(
        "--per-cell", type=int, help="at most N samples per (dim, direction, lang, emotion)"
    )
    e.add_argument(
        "--embed-audio", action="store_true", help="embed the audio in each page (one file each)"
    )

    i = sub.add_parser("import-ratings", help="read rating CSVs back: QC, human VSP, agreement")
    i.add_argument("run_dir")
    i.add_argument("csv", nargs="+", help="CSV files downloaded from the pages or filled sheets")
    i.add_argument(
        "--min-attention",
        type=float,
        default=0.75,
        help="drop raters whose attention-check accuracy is below this share (default 0.75)",
    )
    i.add_argument("--key", help="the test's key.json (default: the copy in RUN/ratings/keys/)")
    i.add_argument("--seed", type=int, default=0, help="bootstrap seed")
    i.add_argument("--n-boot", type=int, default=2000, help="bootstrap resamples (default 2000)")
    i.add_argument("--format", choices=["md", "json"], default="md", help="printed summary")


def cmd_export_ratings(args: argparse.Namespace) -> int:
    from stylebench.ratings_export import export_ratings

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
        "(failed replies). Send the rater_*.html pages (and audio/ unless --embed-audio) or the "
        "sheet_*.csv files; keep key.json private.",
        file=sys.stderr,
    )
    return 0


def cmd_import_ratings(args: argparse.Namespace) -> int:
    from stylebench.ratings_import import human_report_block, import_ratings
    from stylebench.ratings_report import human_markdown

    summary = import_ratings(
        args.run_dir,
        args.csv,
        min_attention=args.min_attention,
        key_path=args.key,
        n_boot=args.n_boot,
        seed=args.seed,
    )
    block = human_report_block(args.run_dir) or {}
    if args.format == "json":
        print(json.dumps(block, indent=2, sort_keys=True))
    else:
        print("\n".join(human_markdown(block)))
    try:
        from stylebench.pipeline import report_only

        report_only(args.run_dir)
    except (FileNotFoundError, ValueError) as exc:
        print(
            f"[stylebench] ratings saved, but the run's report was not rebuilt ({exc}); "
            "run `stylebench report RUN` once its dialogue set is available",
            file=sys.stderr,
        )
    dropped = [r["rater_id"] for r in summary["raters"] if not r["kept"]]
    if dropped:
        print(
            f"[stylebench] dropped raters below the attention threshold: {dropped}", file=sys.stderr
        )
    return 0
