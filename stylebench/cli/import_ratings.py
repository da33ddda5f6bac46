"""``stylebench import-ratings RUN CSV...``: read rating CSVs back (QC, human VSP, agreement)."""

from __future__ import annotations

import json
import sys
from typing import Any

from stylebench.cli.common import Args, argument, format_option, option

HELP = "read rating CSVs back: QC, human VSP, agreement"


def params() -> list[Any]:
    """The command's arguments."""
    return [
        argument("run_dir"),
        argument(
            "csv",
            nargs=-1,
            required=True,
            help="CSV files downloaded from the pages or filled sheets",
        ),
        option(
            "--min-attention",
            type=float,
            default=0.75,
            help="drop raters whose attention-check accuracy is below this share (default 0.75)",
        ),
        option("--key", help="the test's key.json (default: the copy in RUN/ratings/keys/)"),
        option("--seed", type=int, default=0, help="bootstrap seed"),
        option("--n-boot", type=int, default=2000, help="bootstrap resamples (default 2000)"),
        format_option(("md", "json"), "printed summary"),
    ]


def main(args: Args) -> int:
    """Import, print the human block, and rebuild the run's report with it."""
    from stylebench.ratings.importer import human_report_block, import_ratings
    from stylebench.report.sections.human import human_markdown

    summary = import_ratings(
        args.run_dir,
        list(args.csv),
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
        from stylebench.commands.runs import report_only

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
