"""The ``stylebench`` command line: one module per command. Logging is configured here only.

Errors: a :class:`~stylebench.errors.UserError` (or a click usage error) prints one line
``stylebench: error: ...`` and exits 2. Anything else is a bug: it prints
``stylebench: internal error: <one line>``, writes the traceback to a log file under
``<cache root>/errors/`` (``$STYLEBENCH_CACHE`` or ``~/.cache/stylebench``; the temp folder when
that cannot be written), prints that file's path and exits 1. ``-v`` shows the traceback instead.
"""

from __future__ import annotations

import datetime as dt
import importlib
import logging
import os
import sys
import tempfile
import traceback
from pathlib import Path
from typing import Any

import click

from stylebench import __version__
from stylebench.cli.common import Args, SectionedCommand
from stylebench.errors import UserError

#: command name -> module with ``HELP``, ``params()`` and ``main(args) -> int``
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
    "export-set": "stylebench.cli.export_set",
    "import-replies": "stylebench.cli.import_replies",
    "measure": "stylebench.cli.measure",
    "pairs": "stylebench.cli.pairs",
}
PROG = "stylebench"
ABOUT = "Benchmark spoken style-control instructions in speech-to-speech models."
CONTEXT = {"help_option_names": ["-h", "--help"]}
INTERRUPTED = (
    "stylebench: interrupted; finished records are kept, re-run the same command to resume"
)


class _Group(click.Group):
    def list_commands(self, ctx: click.Context) -> list[str]:
        return list(self.commands)  # in COMMANDS order, not sorted


def _command(name: str, module: str) -> click.Command:
    mod = importlib.import_module(module)

    @click.pass_obj
    def callback(state: dict[str, Any], **params: Any) -> int:
        return mod.main(Args(**params, **state))

    return SectionedCommand(
        name,
        params=mod.params(),
        callback=callback,
        help=mod.HELP,
        short_help=mod.HELP,
        context_settings=CONTEXT,
    )


def build_cli() -> click.Group:
    """The ``stylebench`` group with every command of :data:`COMMANDS`."""

    @click.group(PROG, cls=_Group, help=ABOUT, context_settings=CONTEXT)
    @click.version_option(__version__, prog_name=PROG, message="%(prog)s %(version)s")
    @click.option("-v", "--verbose", is_flag=True, help="debug logging (and tracebacks)")
    @click.option("--no-progress", is_flag=True, help="hide progress bars")
    @click.pass_obj
    def cli(state: dict[str, Any], verbose: bool, no_progress: bool) -> None:
        state.update(verbose=verbose, no_progress=no_progress)
        logging.basicConfig(
            level=logging.DEBUG if verbose else logging.WARNING,
            format="%(levelname)s %(name)s: %(message)s",
        )

    for name, module in COMMANDS.items():
        cli.add_command(_command(name, module))
    return cli


def parse_args(argv: list[str]) -> Args:
    """The parameters ``argv`` gives its command, without running it (for tests and tools)."""
    cli = build_cli()
    ctx = cli.make_context(PROG, list(argv), obj={})
    name, cmd, rest = cli.resolve_command(ctx, ctx.protected_args + ctx.args)
    assert cmd is not None, name
    sub = cmd.make_context(name or "", rest, parent=ctx)
    return Args(**sub.params, verbose=ctx.params["verbose"], no_progress=ctx.params["no_progress"])


def internal_error_log(text: str) -> Path:
    """Write ``text`` (a traceback) to a new log file and return its path."""
    from stylebench.paths import cache_root

    stamp = dt.datetime.now(dt.UTC).strftime("%Y%m%dT%H%M%SZ")
    name = f"internal-error-{stamp}-{os.getpid()}.log"
    for folder in (cache_root() / "errors", Path(tempfile.gettempdir()) / "stylebench-errors"):
        try:
            folder.mkdir(parents=True, exist_ok=True)
            path = folder / name
            path.write_text(text, encoding="utf-8")
            return path
        except OSError:
            continue
    raise OSError("no folder to write the log to")


def _one_line(exc: BaseException) -> str:
    text = str(exc).strip().splitlines()
    return f"{type(exc).__name__}: {text[0]}" if text else type(exc).__name__


def main(argv: list[str] | None = None) -> int:
    state: dict[str, Any] = {"verbose": False, "no_progress": False}
    args = sys.argv[1:] if argv is None else list(argv)
    try:
        rv = build_cli().main(args, prog_name=PROG, standalone_mode=False, obj=state)
        return rv if isinstance(rv, int) else 0
    except click.exceptions.Abort:  # click turns KeyboardInterrupt into Abort
        print(INTERRUPTED, file=sys.stderr)
        return 130
    except KeyboardInterrupt:
        print(INTERRUPTED, file=sys.stderr)
        return 130
    except click.ClickException as exc:  # a bad flag, a missing argument: click's own message
        exc.show()
        return exc.exit_code
    except UserError as exc:
        if state["verbose"]:
            raise
        print(f"stylebench: error: {' '.join(str(exc).split(chr(10)))}", file=sys.stderr)
        return 2
    except Exception as exc:
        if state["verbose"]:
            raise
        line = f"stylebench: internal error: {_one_line(exc)}"
        try:
            log = internal_error_log(f"stylebench {' '.join(args)}\n\n{traceback.format_exc()}")
            line += f"\nstylebench: the traceback is in {log}; please report it"
        except OSError:
            line += "\n" + traceback.format_exc()
        print(line, file=sys.stderr)
        return 1
