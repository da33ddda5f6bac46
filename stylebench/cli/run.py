"""``stylebench run``: run a model on a dialogue set and score it (resumable)."""

from __future__ import annotations

import sys
from typing import Any

from stylebench.cli.common import (
    Args,
    config_options,
    format_option,
    option,
    overrides,
    print_report,
)

HELP = "run a model on a dialogue set and score it (resumable)"


def params() -> list[Any]:
    return [
        option("--config", help="TOML or JSON file of run settings (CLI flags win)"),
        option(
            "--set",
            "set_",
            help="dialogue set: a folder, `default` (the built-in StyleBench set) or "
            "`persistence` (the built-in persistence set, docs/persistence.md); "
            "the same as --dialogues",
        ),
        format_option(),
        *config_options("run"),
    ]


def main(args: Args) -> int:
    from stylebench.commands.runs import run
    from stylebench.config import resolve_config
    from stylebench.errors import BadValue

    given = overrides(args, "run")
    if args.set_ is not None:
        if "dialogues" in given and given["dialogues"] != args.set_:
            raise BadValue("--set and --dialogues name the same thing; pass one of them")
        given["dialogues"] = args.set_
    cfg = resolve_config(given, args.config)
    result = run(cfg, progress=not args.no_progress)
    print_report(result.report, args.format)
    print(f"[stylebench] run folder: {result.store.root}", file=sys.stderr)
    return 0
