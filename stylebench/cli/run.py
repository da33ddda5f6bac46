"""``stylebench run``: run a model on a dialogue set and score it (resumable)."""

from __future__ import annotations

import argparse
import sys

from stylebench.cli.common import add_config_flags, add_format, overrides, print_report

HELP = "run a model on a dialogue set and score it (resumable)"


def register(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--config", help="TOML or JSON file of run settings (CLI flags win)")
    add_format(parser)
    add_config_flags(parser, "run")


def main(args: argparse.Namespace) -> int:
    from stylebench.config import resolve_config
    from stylebench.pipeline.commands import run

    cfg = resolve_config(overrides(args, "run"), args.config)
    result = run(cfg, progress=not args.no_progress)
    print_report(result.report, args.format)
    print(f"[stylebench] run folder: {result.store.root}", file=sys.stderr)
    return 0
