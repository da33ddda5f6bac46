"""``stylebench compare RUN [RUN ...]``: compare runs of different models on the same samples."""

from __future__ import annotations

import argparse
import sys

from stylebench.compare.load import CHECKS

HELP = "compare runs of different models: leaderboard, paired tests, the paper's tables, HTML"


def register(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("runs", nargs="+", metavar="RUN", help="run folders (same dialogue set)")
    parser.add_argument(
        "--out",
        default=None,
        help="folder for compare.json/.md/.html and the leaderboard (default: compare-<hash> beside the first run)",
    )
    parser.add_argument(
        "--allow-mismatch",
        action="append",
        default=[],
        choices=CHECKS,
        help="compare runs that differ in these settings anyway (repeatable); the difference is noted",
    )
    parser.add_argument(
        "--cluster",
        choices=("none", "content", "voice"),
        default="none",
        help="bootstrap resampling unit for the VSP difference (default: sample)",
    )
    parser.add_argument(
        "--n-boot", type=int, default=2000, help="bootstrap resamples (default 2000)"
    )
    parser.add_argument("--seed", type=int, default=0, help="bootstrap seed (default 0)")
    parser.add_argument(
        "--alpha",
        type=float,
        default=0.05,
        help="level for the groups the data cannot separate (default 0.05)",
    )
    parser.add_argument(
        "--no-calibration",
        action="store_true",
        help="do not add the reference/neutral/shuffled rows",
    )
    parser.add_argument(
        "--calibration-out",
        default=None,
        help="where missing calibration rows are run (default: the first run's parent folder)",
    )
    parser.add_argument(
        "--embed-audio",
        action="store_true",
        help="put the audio into compare.html (large); default: relative links to the run folders",
    )
    parser.add_argument("--format", choices=("md", "json"), default="md", help="printed format")


def main(args: argparse.Namespace) -> int:
    import json

    from stylebench.compare.command import compare_command

    if not 0.0 < args.alpha < 1.0:
        raise ValueError(f"--alpha must be in (0, 1), got {args.alpha}")
    result, md, out = compare_command(
        args.runs,
        out=args.out,
        allow=args.allow_mismatch,
        cluster=args.cluster,
        n_boot=args.n_boot,
        seed=args.seed,
        alpha=args.alpha,
        calibration=not args.no_calibration,
        calibration_out=args.calibration_out,
        embed_audio=args.embed_audio,
        progress=not args.no_progress,
    )
    sys.stdout.write(
        md if args.format == "md" else json.dumps(result, indent=2, sort_keys=True) + "\n"
    )
    print(f"stylebench: comparison written to {out}", file=sys.stderr)
    return 0
