"""``stylebench score RUN``: re-transcribe, re-measure, re-judge and re-score; never calls the model."""

from __future__ import annotations

from typing import Any

from stylebench.cli.common import (
    Args,
    argument,
    config_options,
    format_option,
    overrides,
    print_report,
)

HELP = "re-transcribe/measure/judge/score a run without calling the model"


def params() -> list[Any]:
    return [argument("run_dir"), format_option(), *config_options("score")]


def main(args: Args) -> int:
    from stylebench.commands.runs import rescore

    result = rescore(args.run_dir, overrides(args, "score"), progress=not args.no_progress)
    print_report(result.report, args.format)
    return 0
