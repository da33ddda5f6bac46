"""What the commands share: click options generated from the config's field metadata, ``--help``
grouped by config section, report printing.

A command module declares ``HELP``, ``params() -> list[click.Parameter]`` and
``main(args) -> int``; ``args`` holds every parameter by name plus the global ``verbose`` and
``no_progress`` flags.
"""

from __future__ import annotations

import dataclasses
import sys
import typing
from types import SimpleNamespace
from typing import Any

import click

from stylebench import config as cf

FORMATS = ("md", "json", "csv")
#: the section of the options that are not config settings
COMMAND_SECTION = "options"


class Args(SimpleNamespace):
    """A command's parsed parameters by name (``args.run_dir``, ``args.no_progress``)."""


class SectionOption(click.Option):
    """An option that ``--help`` lists under its config section."""

    def __init__(self, *args: Any, section: str = COMMAND_SECTION, **kw: Any) -> None:
        super().__init__(*args, **kw)
        self.section = section


class HelpArgument(click.Argument):
    """A positional argument with a help text (click's arguments have none)."""

    def __init__(self, *args: Any, help: str = "", **kw: Any) -> None:
        super().__init__(*args, **kw)
        self.help = help


class SectionedCommand(click.Command):
    """A command whose ``--help`` has one section per config section, after its own options."""

    def format_arguments(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        """Written by :meth:`format_options` (click < 8.5 has no argument help)."""

    def format_options(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        rows = [
            (p.make_metavar(ctx), p.help)
            for p in self.get_params(ctx)
            if isinstance(p, HelpArgument) and p.help
        ]
        if rows:
            with formatter.section("Arguments"):
                formatter.write_dl(rows)
        sections: dict[str, list[tuple[str, str]]] = {COMMAND_SECTION: []}
        for p in self.get_params(ctx):
            row = None if isinstance(p, click.Argument) else p.get_help_record(ctx)
            if row is None:
                continue
            section = getattr(p, "section", COMMAND_SECTION)
            sections.setdefault(section, []).append(row)
        for section, rows in sections.items():
            if rows:
                title = "Options" if section == COMMAND_SECTION else f"{section} settings"
                with formatter.section(title):
                    formatter.write_dl(rows)


def option(*decls: str, help: str, **kw: Any) -> click.Option:
    """A command's own option (not a config setting)."""
    return SectionOption(list(decls), help=help, **kw)


def argument(name: str, help: str = "", **kw: Any) -> click.Argument:
    return HelpArgument([name], help=help, **kw)


def _fields() -> list[tuple[str, dataclasses.Field, Any]]:
    """(section, field, type hint) for every option of :class:`RunConfig`, in declaration order."""
    out = []
    for f in dataclasses.fields(cf.RunConfig):
        if f.name in cf.SECTIONS:
            cls = cf.SECTIONS[f.name]
            hints = typing.get_type_hints(cls)
            out += [(f.name, g, hints[g.name]) for g in dataclasses.fields(cls)]
        else:
            out.append(("run", f, typing.get_type_hints(cf.RunConfig)[f.name]))
    return out


def _scalar(hint: Any) -> Any:
    args = [a for a in typing.get_args(hint) if a is not type(None)]
    return args[0] if args else hint


class Number(click.ParamType):
    """A number whose bad value is a one-line user error (click's own FLOAT prints its usage
    block): for settings whose range the config checks and names (``--min-quality``)."""

    name = "number"

    def __init__(self, flag: str) -> None:
        self.flag = flag

    def convert(self, value: Any, param: Any, ctx: Any) -> float:
        from stylebench.errors import BadValue

        try:
            return float(value)
        except (TypeError, ValueError):
            raise BadValue(f"{self.flag} must be a number, got {value!r}") from None


def config_options(command: str, sections: tuple[str, ...] | None = None) -> list[click.Option]:
    """An option for every config setting that ``command`` takes, each under its section.

    The flag is the field's ``flag`` metadata or ``--field-name``; the help is its ``help`` plus
    the default. Every option defaults to ``None`` (a repeatable one to nothing) so that only
    what the user typed overrides the config file and the stored run (see
    :func:`stylebench.config.resolve_config`). ``sections`` keeps only the settings of those
    config sections (``stylebench measure`` takes ``score``'s measure settings, not its judge's).
    """
    out: list[click.Option] = []
    for section, f, hint in _fields():
        meta = f.metadata
        if command not in meta.get("commands", ()):
            continue
        if sections is not None and section not in sections:
            continue
        default = f.default if f.default is not dataclasses.MISSING else "none"
        flag = cf.flag_of(f.name)
        kw: dict[str, Any] = {"default": None, "help": f"{meta['help']} (default {default})"}
        kind = _scalar(hint)
        if meta.get("kind") == "kv":
            kw.update(multiple=True, metavar="KEY=VALUE", help=meta["help"])
        elif meta.get("kind") == "number":
            kw["type"] = Number(flag)
        elif kind is bool:
            flag = f"{flag}/--no-{flag[2:]}"
        elif "choices" in meta:
            kw["type"] = click.Choice([str(c) for c in meta["choices"]])
        else:
            kw["type"] = {int: click.INT, float: click.FLOAT}.get(kind, click.STRING)
        if "metavar" in meta:
            kw["metavar"] = meta["metavar"]
        out.append(SectionOption([flag, f.name], section=section, **kw))
    return out


def overrides(args: Args, command: str) -> dict[str, Any]:
    """The config values given on the command line, by field name."""
    out: dict[str, Any] = {}
    for _, f, _ in _fields():
        if command not in f.metadata.get("commands", ()):
            continue
        value = getattr(args, f.name, None)
        if value is None or value == ():
            continue
        out[f.name] = cf.parse_model_args(list(value)) if f.metadata.get("kind") == "kv" else value
    return out


def format_option(choices: tuple[str, ...] = FORMATS, help: str = "printed report format") -> Any:
    return option("--format", type=click.Choice(choices), default="md", help=help)


def print_report(report: dict[str, Any], fmt: str) -> None:
    """Write the report to stdout in ``fmt`` (each format with its own escaping)."""
    if report.get("protocol") == "persistence":  # docs/persistence.md
        from stylebench.report.persistence import render

        text = render(report, fmt)
    else:
        from stylebench.report.formats import render
        from stylebench.stages.registry import report_sections

        text = render(report, fmt, sections=report_sections())
    sys.stdout.write(text if text.endswith("\n") else text + "\n")
