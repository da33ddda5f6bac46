"""``stylebench compare RUN [RUN ...]``: compare runs of different models on the same samples."""

from __future__ import annotations

import json
import sys
from typing import Any

import click

from stylebench.cli.common import Args, argument, format_option, option
from stylebench.compare.load import CHECKS
from stylebench.errors import BadValue

HELP = "compare runs of different models: leaderboard, paired tests, the paper's tables, HTML"


def params() -> list[Any]:
    return [
        argument("runs", nargs=-1, required=True, help="run folders (same dialogue set)"),
        option(
            "--out",
            default=None,
            help="folder for compare.json/.md/.html and the leaderboard (default: compare-<hash> "
            "beside the first run)",
        ),
        option(
            "--allow-mismatch",
            multiple=True,
            type=click.Choice(CHECKS),
            help="compare runs that differ in these settings anyway (repeatable); the difference "
            "is noted",
        ),
        option(
            "--cluster",
            type=click.Choice(("none", "content", "voice")),
            default="none",
            help="bootstrap resampling unit for the VSP difference (default: sample)",
        ),
        option("--n-boot", type=int, default=2000, help="bootstrap resamples (default 2000)"),
        option("--seed", type=int, default=0, help="bootstrap seed (default 0)"),
        option(
            "--alpha",
            type=float,
            default=0.05,
            help="level for the groups the data cannot separate (default 0.05)",
        ),
        option(
            "--no-calibration", is_flag=True, help="do not add the reference/neutral/shuffled rows"
        ),
        option(
            "--calibration-out",
            default=None,
            help="where missing calibration rows are run (default: the first run's parent folder)",
        ),
        option(
            "--embed-audio",
            is_flag=True,
            help="put the audio into compare.html (large); default: relative links to the run "
            "folders",
        ),
        format_option(("md", "json"), "printed format"),
    ]


def main(args: Args) -> int:
    from stylebench.compare.command import compare_command

    if not 0.0 < args.alpha < 1.0:
        raise BadValue(f"--alpha must be in (0, 1), got {args.alpha}")
    kinds = {_is_persistence(r) for r in args.runs}
    if kinds == {True, False}:
        raise BadValue("persistence runs and StyleBench runs cannot be compared with each other")
    if kinds == {True}:  # docs/persistence.md#comparing-runs
        from stylebench.compare.persistence import compare_persistence_runs

        result, md, out = compare_persistence_runs(
            list(args.runs),
            args.out,
            calibration=not args.no_calibration,
            calibration_out=args.calibration_out,
            progress=not args.no_progress,
        )
        sys.stdout.write(
            md if args.format == "md" else json.dumps(result, indent=2, sort_keys=True) + "\n"
        )
        print(f"stylebench: comparison written to {out}", file=sys.stderr)
        return 0
    result, md, out = compare_command(
        list(args.runs),
        out=args.out,
        allow=list(args.allow_mismatch),
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


def _is_persistence(run_dir: str) -> bool:
    """Whether the folder's manifest names a persistence run (a folder that is no run is left
    for the comparison to refuse with its own message)."""
    from pathlib import Path

    from stylebench.commands.run_parts import is_persistence_run

    path = Path(run_dir) / "manifest.json"
    try:
        return is_persistence_run(json.loads(path.read_text(encoding="utf-8")))
    except (OSError, ValueError, AttributeError):
        return False
