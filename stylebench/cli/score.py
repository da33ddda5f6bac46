"""``stylebench score RUN``: re-transcribe, re-measure, re-judge and re-score; never calls the model."""

from __future__ import annotations

import argparse

from stylebench.cli.common import add_config_flags, add_format, overrides, print_report

HELP = "re-transcribe/measure/judge/score a run without calling the model"


def register(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("run_dir")
    add_format(parser)
    add_config_flags(parser, "score")


def main(args: argparse.Namespace) -> int:
    from stylebench.pipeline.commands import rescore

    result = rescore(args.run_dir, overrides(args, "score"), progress=not args.no_progress)
    print_report(result.report, args.format)
    return 0
