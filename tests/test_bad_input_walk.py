"""Every command, every option, bad values by type: never an internal error, never a traceback.

The cases are generated from click's parameters, which the CLI itself generates from the config
metadata (``stylebench/cli/common.py``: each config field's type, choices and range become its
option), so a new option is walked without editing this file. Each command gets the positional
arguments it requires as paths that do not exist (a run folder, a set, a CSV), so a bad value
that passes parsing meets the command's own checks and stops there without running a model.
"""

from __future__ import annotations

from pathlib import Path

import click
import pytest

from stylebench.cli import build_cli, main

BAD_BY_TYPE: dict[str, tuple[str, ...]] = {
    "INT": ("abc", "1.5", "-1", "0", "99999999999999999999"),
    "FLOAT": ("abc", "-1", "nan", "inf", "1e400"),
    "STRING": ("", "nonsense", "a=b=c", "/nonexistent/x", "../../etc"),
    "CHOICE": ("nonsense", ""),
    "PATH": ("/nonexistent/x", "/proc/x"),
}


#: per command, settings that keep a case that passes every check small: a run on a set that
#: does not exist, a dialogue set of two samples (a bad value that is in fact valid, such as
#: ``--out nonsense``, then builds that set in a few seconds instead of the default set)
SMALL: dict[str, dict[str, str]] = {
    "run": {"--dialogues": "/nonexistent/set"},
    "build-dialogues": {
        "--per-cell": "1",
        "--dims": "pitch",
        "--langs": "en",
        "--voices-per-lang": "1",
        "--synth": "espeak-ng",
    },
}


def _kind(param: click.Parameter) -> str | None:
    t = param.type
    if isinstance(t, click.Choice):
        return "CHOICE"
    if isinstance(t, click.Path):
        return "PATH"
    if isinstance(t, click.types.IntParamType):
        return "INT"
    if isinstance(t, click.types.FloatParamType):
        return "FLOAT"
    if isinstance(t, click.types.StringParamType):
        return "STRING"
    return None  # flags (bool) take no value


def _positionals(cmd: click.Command, tmp: Path) -> list[str]:
    out: list[str] = []
    for p in cmd.params:
        if isinstance(p, click.Argument):
            n = 2 if p.nargs == -1 else max(1, p.nargs)
            out += [str(tmp / f"missing-{p.name}-{i}") for i in range(n)]
    return out


def cases() -> list[tuple[str, str, str]]:
    out = []
    for name, cmd in build_cli().commands.items():
        for p in cmd.params:
            if not isinstance(p, click.Option) or p.is_flag or p.count:
                continue
            kind = _kind(p)
            if kind is None:
                continue
            flag = max(p.opts, key=len)
            out += [(name, flag, v) for v in BAD_BY_TYPE[kind]]
    return out


CASES = cases()


def test_the_walk_covers_every_command_and_many_options() -> None:
    commands = {c for c, _, _ in CASES}
    flags = {(c, f) for c, f, _ in CASES}
    assert commands >= set(build_cli().commands) - {"models"}
    assert len(flags) > 200 and len(CASES) > 700, (len(flags), len(CASES))


@pytest.mark.parametrize("command", sorted(build_cli().commands))
def test_no_bad_value_is_an_internal_error(command, tmp_path, monkeypatch, capsys):
    """One test per command (the cases run in a loop, so a failure lists every bad case)."""
    monkeypatch.setenv("STYLEBENCH_CACHE", str(tmp_path / "cache"))
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.chdir(tmp_path)
    cmd = build_cli().commands[command]
    base = _positionals(cmd, tmp_path)
    # a required option gets a path under a folder that does not exist: the command stops
    # there at the latest, before it builds a set or runs a model
    required = {
        max(p.opts, key=len): str(tmp_path / "missing-folder" / f"new-{p.name}")
        for p in cmd.params
        if isinstance(p, click.Option) and p.required
    }
    failures = []
    for _, flag, value in (c for c in CASES if c[0] == command):
        args = [command, *base]
        for f, v in {**required, **SMALL.get(command, {})}.items():
            if f != flag:
                args += [f, v]
        args += [f"{flag}={value}"]
        code = main(["--no-progress", *args])
        out = capsys.readouterr()
        text = out.err + out.out
        if code not in (0, 2) or "internal error" in text or "Traceback" in text:
            failures.append(f"{' '.join(args)} -> exit {code}: {text.strip()[:200]}")
    assert not list((tmp_path / "cache").glob("errors/*.log")), "a user mistake wrote a bug log"
    assert not failures, "\n".join(failures)
