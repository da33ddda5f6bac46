"""``stylebench report RUN``: print a run's report from its stored records."""

from __future__ import annotations

import argparse

from stylebench.cli.common import add_format, print_report

HELP = "print a run's report from its stored records"


def register(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("run_dir")
    add_format(parser)


def main(args: argparse.Namespace) -> int:
    from stylebench.pipeline.commands import report_only

    print_report(report_only(args.run_dir).report, args.format)
    return 0
