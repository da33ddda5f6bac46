"""``stylebench import-replies SET DIR --name NAME``: replies made elsewhere as a scored run."""

from __future__ import annotations

import sys
from typing import Any

from stylebench.cli.common import (
    Args,
    argument,
    config_options,
    format_option,
    option,
    overrides,
    print_report,
)

HELP = "import replies made elsewhere (DIR/<sample_id>/turnN.wav) as a run, and score it"
#: the run settings that mean the same here: the selection, where the run folder goes, the limits
RUN_SETTINGS = ("dim", "lang", "limit", "out", "run_id", "max_reply_chars", "max_reply_s")


def params() -> list[Any]:
    return [
        argument("set", help="dialogue set folder, or 'default' (the built-in set of --dim)"),
        argument(
            "dir",
            help="folder of replies: DIR/<sample_id>/turn{1,2,3}.{wav,flac,mp3} (docs/import.md)",
        ),
        option("--name", required=True, help="the run's model label (and its folder name's start)"),
        format_option(),
        *[o for o in config_options("run") if o.name in RUN_SETTINGS],
        *config_options("score"),
    ]


def main(args: Args) -> int:
    from stylebench.commands.importing import import_replies
    from stylebench.config import resolve_config

    given = {**overrides(args, "run"), **overrides(args, "score")}
    cfg = resolve_config({**given, "model": args.name, "dialogues": args.set})
    result = import_replies(cfg, args.dir, progress=not args.no_progress)
    print_report(result.report, args.format)
    for line in result.problems:
        print(f"[stylebench] {args.dir}: {line}", file=sys.stderr)
    print(
        f"[stylebench] imported {result.n_ok} of {result.n_total} replies; run folder: "
        f"{result.store.root}",
        file=sys.stderr,
    )
    return 0
