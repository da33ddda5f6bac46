"""The ``stylebench`` command line: one module per command. Logging is configured here only."""

from __future__ import annotations

import argparse
import importlib
import logging
import sys

from stylebench import __version__

#: command name -> module with ``HELP``, ``register(parser)`` and ``main(args) -> int``
COMMANDS = {
    "run": "stylebench.cli.run",
    "score": "stylebench.cli.score",
    "report": "stylebench.cli.report",
    "models": "stylebench.cli.models",
    "build-dialogues": "stylebench.cli.build_dialogues",
    "export-ratings": "stylebench.cli.export_ratings",
    "import-ratings": "stylebench.cli.import_ratings",
    "compare": "stylebench.cli.compare",
    "caption-eval": "stylebench.cli.caption_eval",
}


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="stylebench", description=__doc__)
    p.add_argument("--version", action="version", version=f"stylebench {__version__}")
    p.add_argument("-v", "--verbose", action="store_true", help="debug logging")
    p.add_argument("--no-progress", action="store_true", help="hide progress bars")
    sub = p.add_subparsers(dest="command", required=True)
    for name, module in COMMANDS.items():
        mod = importlib.import_module(module)
        mod.register(sub.add_parser(name, help=mod.HELP))
    return p


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    logging.basicConfig(
        level=logging.DEBUG if args.verbose else logging.WARNING,
        format="%(levelname)s %(name)s: %(message)s",
    )
    from stylebench.errors import missing_tools, user_errors

    try:
        return importlib.import_module(COMMANDS[args.command]).main(args)
    except KeyboardInterrupt:
        print(
            "stylebench: interrupted; finished records are kept, re-run the same command to resume",
            file=sys.stderr,
        )
        return 130
    except missing_tools() as exc:  # what to install: the message is the whole story
        print(f"stylebench: {exc}", file=sys.stderr)
        return 2
    except user_errors() as exc:
        if args.verbose:
            raise
        msg = exc.args[0] if isinstance(exc, KeyError) and exc.args else exc
        print(f"stylebench: error: {msg}", file=sys.stderr)
        return 2
