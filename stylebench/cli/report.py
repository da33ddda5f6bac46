"""``stylebench report RUN``: print a run's report from its stored records."""

from __future__ import annotations

from typing import Any

from stylebench.cli.common import Args, argument, format_option, print_report

HELP = "print a run's report from its stored records"


def params() -> list[Any]:
    return [argument("run_dir"), format_option()]


def main(args: Args) -> int:
    from stylebench.pipeline.commands import report_only

    print_report(report_only(args.run_dir).report, args.format)
    return 0
