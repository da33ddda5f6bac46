"""``stylebench export-set SET DIR``: a dialogue set's user turns for inference elsewhere."""

from __future__ import annotations

import sys
from typing import Any

from stylebench.cli.common import Args, argument, config_options, overrides

HELP = "write a dialogue set's user turns (DIR/<sample_id>/userN.wav, .txt) for inference elsewhere"
#: the run settings that select the samples, as for `stylebench run`
RUN_SETTINGS = ("dim", "lang", "limit")


def params() -> list[Any]:
    return [
        argument("set", help="dialogue set folder, or 'default' (the built-in set of --dim)"),
        argument("dir", help="folder to write (docs/import.md)"),
        *[o for o in config_options("run") if o.name in RUN_SETTINGS],
    ]


def main(args: Args) -> int:
    from stylebench.commands.export_set import export_set
    from stylebench.config import resolve_config

    cfg = resolve_config({**overrides(args, "run"), "dialogues": args.set})
    result = export_set(cfg, args.dir)
    print(
        f"[stylebench] {result.n_samples} samples in {result.root} ({result.written} files "
        "written); put the replies beside them as turnN.wav and run `stylebench import-replies`",
        file=sys.stderr,
    )
    return 0
