"""What the commands share: flags generated from the config's field metadata, report printing."""

from __future__ import annotations

import argparse
import dataclasses
import sys
import typing
from typing import Any

from stylebench import config as cf

FORMATS = ("md", "json", "csv")


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


def add_config_flags(parser: argparse.ArgumentParser, command: str) -> None:
    """Add a flag for every config option that ``command`` takes, grouped by section.

    Every flag defaults to ``None`` so that only what the user typed overrides the config file
    and the stored run (see :func:`stylebench.config.resolve_config`).
    """
    groups: dict[str, Any] = {}
    for section, f, hint in _fields():
        meta = f.metadata
        if command not in meta.get("commands", ()):
            continue
        if section not in groups:
            groups[section] = parser.add_argument_group(f"{section} settings")
        default = f.default if f.default is not dataclasses.MISSING else "none"
        kw: dict[str, Any] = {
            "dest": f.name,
            "default": None,
            "help": f"{meta['help']} (default {default})",
        }
        flag = meta.get("flag", "--" + f.name.replace("_", "-"))
        kind = _scalar(hint)
        if meta.get("kind") == "kv":
            kw.update(action="append", metavar="KEY=VALUE", help=meta["help"])
        elif kind is bool:
            kw["action"] = argparse.BooleanOptionalAction
        else:
            kw["type"] = kind if kind in (int, float) else str
            for key in ("choices", "metavar"):
                if key in meta:
                    kw[key] = meta[key]
        groups[section].add_argument(flag, **kw)


def overrides(args: argparse.Namespace, command: str) -> dict[str, Any]:
    """The config values given on the command line, by field name."""
    out: dict[str, Any] = {}
    for _, f, _ in _fields():
        if command not in f.metadata.get("commands", ()):
            continue
        value = getattr(args, f.name, None)
        if value is None:
            continue
        out[f.name] = cf.parse_model_args(value) if f.metadata.get("kind") == "kv" else value
    return out


def add_format(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--format", choices=FORMATS, default="md", help="printed report format")


def print_report(report: dict[str, Any], fmt: str) -> None:
    """Write the report to stdout in ``fmt`` (each format with its own escaping)."""
    from stylebench.report.formats import render

    text = render(report, fmt)
    sys.stdout.write(text if text.endswith("\n") else text + "\n")
