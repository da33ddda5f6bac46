"""``stylebench report RUN``: print a run's report from its stored records."""

from __future__ import annotations

from typing import Any

from stylebench.cli.common import Args, argument, format_option, option, print_report

HELP = "print a run's report from its stored records"


def params() -> list[Any]:
    return [
        argument("run_dir"),
        format_option(),
        option(
            "--timings",
            is_flag=True,
            default=False,
            help="also print where each run and resume spent its time, per stage (md: a table, "
            "json: a timings block); never written to the report files",
        ),
    ]


def main(args: Args) -> int:
    from stylebench.commands.runs import report_only
    from stylebench.errors import BadValue
    from stylebench.pipeline.timings import timings_block

    if args.timings and args.format == "csv":
        raise BadValue("--timings prints with --format md or json (the CSV holds the cells only)")
    result = report_only(args.run_dir)
    report = result.report
    if args.timings:
        report = {**report, "timings": timings_block(result.store.read_timings())}
    print_report(report, args.format)
    return 0
