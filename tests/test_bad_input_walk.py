"""The bad-input walk (issue 34): every command, every flag, bad values generated from click.

Each case runs one command in process through :func:`stylebench.cli.main` with one parameter
given a bad value of its type (a word where a number goes, a negative or zero count, a choice
that is not one, a missing file, a folder where a file goes, an empty file, an unwritable path).
The other required parameters get a path that does not exist. No model, synthesiser or ASR
runs: the functions that would start real work are replaced by one that raises ``Reached``, so a
case that passes every check ends there. A case fails on ``internal error`` or a traceback, and
no case may leave a log in the errors folder (that log is for bugs).
"""

from __future__ import annotations

import click
import pytest

from stylebench.cli import COMMANDS, build_cli, main
from stylebench.config import section_of
from stylebench.errors import UserError

#: words in a parameter's name that make it a path: it also gets a missing path, a folder, a file
_PATHISH = {"out", "path", "config", "dialogues", "set", "file", "dir", "python", "model", "csv"}


class Reached(UserError):
    """Real work would start here: every check before it passed."""


def _stop(*args, **kwargs):
    raise Reached("the checks passed; real work would start")


def bad_values(param: click.Parameter, tmp) -> list[str]:
    """Bad values for ``param`` from its click type."""
    kind = param.type
    if isinstance(kind, click.Choice):
        return ["nonsense"]
    if isinstance(kind, click.types.IntParamType):
        return ["abc", "-3", "0"]
    if isinstance(kind, click.types.FloatParamType):
        return ["abc", "-1", "nan", "0"]
    if isinstance(kind, click.types.BoolParamType):
        return ["maybe"]
    values = ["nonsense", "", "/proc/stylebench-x/y"]
    if isinstance(param, click.Argument) or _PATHISH.intersection(param.name.split("_")):
        values += ["/nonexistent/stylebench/x", str(tmp["dir"]), str(tmp["empty"])]
    if param.name == "config":
        values += [str(tmp["toml"]), str(tmp["json"]), str(tmp["typed"])]
    if getattr(param, "multiple", False) or param.name.endswith("_arg"):
        values += ["novalue", "=x", "voices=nope.json", "python=/nonexistent/python"]
    return values


def cases(tmp) -> list[tuple[str, list[str]]]:
    out = []
    cli = build_cli()
    settings = set(section_of())  # config metadata: walked once, on `run`
    for name in COMMANDS:
        cmd = cli.commands[name]
        params = [p for p in cmd.params if p.name != "help"]
        walked = [p for p in params if name == "run" or p.name not in settings]
        filler = {}
        for p in params:
            if p.required:
                filler[p] = str(tmp["dir"] / "new" / p.name)
        for p in walked:
            if isinstance(p, click.Option) and p.is_flag:
                continue
            for value in bad_values(p, tmp):
                argv = [name]
                for q, v in filler.items():
                    if q is p:
                        continue
                    argv += [v] if isinstance(q, click.Argument) else [q.opts[0], v]
                argv += [value] if isinstance(p, click.Argument) else [p.opts[0], value]
                out.append((f"{name} {p.name}={value!r}", argv))
    return out


@pytest.fixture()
def walk_env(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)  # a relative value such as --out nonsense lands here
    monkeypatch.setenv("STYLEBENCH_CACHE", str(tmp_path / "cache"))
    monkeypatch.setattr("stylebench.commands.runs.run", _stop)
    monkeypatch.setattr("stylebench.dialogues.builder.build_set", _stop)
    folder = tmp_path / "folder"
    folder.mkdir()
    (tmp_path / "empty.wav").write_bytes(b"")
    files = {"toml": "limit = \n", "json": '{"limit": ', "typed": 'limit = "one"\n'}
    out = {"dir": folder, "empty": tmp_path / "empty.wav"}
    for key, text in files.items():
        out[key] = tmp_path / f"{key}.{'json' if key == 'json' else 'toml'}"
        out[key].write_text(text, encoding="utf-8")
    return out


def test_the_walk_gives_no_internal_error_and_no_traceback(walk_env, tmp_path, capsys):
    found, reached, n = [], 0, 0
    for label, argv in cases(walk_env):
        n += 1
        try:
            code = main(["--no-progress", *argv])
        except SystemExit as exc:  # never expected: main returns codes
            found.append(f"{label}: SystemExit {exc.code}")
            continue
        err = capsys.readouterr().err
        if "error: the checks passed; real work would start" in err:
            reached += 1
            continue
        if "internal error" in err or "Traceback" in err or code not in (0, 2):
            found.append(f"{label}: exit {code}: {err.strip().splitlines()[:1]}")
    assert n > 300 and reached > 20, (n, reached)
    assert not found, f"{len(found)} of {n} cases:\n" + "\n".join(found)
    assert not list((tmp_path / "cache").glob("errors/*")), "a user mistake wrote an error log"


@pytest.fixture()
def files(small_set, tmp_path, monkeypatch):  # the set is built before build_set is stopped
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("STYLEBENCH_CACHE", str(tmp_path / "cache"))
    monkeypatch.setattr("stylebench.dialogues.builder.build_set", _stop)
    (tmp_path / "bad.toml").write_text("limit = \n", encoding="utf-8")
    (tmp_path / "bad.json").write_text('{"limit": ', encoding="utf-8")
    (tmp_path / "typed.toml").write_text('limit = "one"\n', encoding="utf-8")
    (tmp_path / "list.json").write_text("[1, 2]", encoding="utf-8")
    (tmp_path / "afile").write_text("x", encoding="utf-8")
    (tmp_path / "adir").mkdir()
    return tmp_path


#: the outside check's cases (issue 34) that ended in ``internal error``: (argv, the new line)
OUTSIDE = [
    (
        "build-dialogues --synth espeak-ng --synth-arg voices=nope.json --out {t}/s",
        "espeak-ng has built-in voices; --synth-arg voices= is for cosyvoice2",
    ),
    ("build-dialogues --per-cell -3 --out {t}/s", "'--per-cell': -3 is not in the range x>=1"),
    ("build-dialogues --per-cell 0 --out {t}/s", "'--per-cell': 0 is not in the range x>=1"),
    ("build-dialogues --voices-per-lang 0 --out {t}/s", "'--voices-per-lang': 0 is not in"),
    ("build-dialogues --langs xx --out {t}/s", "--langs: unknown ['xx']; choose from en,zh"),
    (
        "build-dialogues --dims nonsense --out {t}/s",
        "--dims: unknown ['nonsense']; choose from speed,volume,pitch,emotion,expressiveness",
    ),
    ("build-dialogues --out {t}/afile", "--out {t}/afile: a file is already there"),
    ("build-dialogues --out {t}/adir", "--out {t}/adir: a folder is already there"),
    ("build-dialogues --out /proc/stylebench/s", "--out /proc/stylebench/s: cannot create /proc"),
    ("run --config {t}/bad.toml", "config file {t}/bad.toml is not valid TOML: "),
    ("run --config {t}/bad.json", "config file {t}/bad.json is not valid JSON: "),
    ("run --config {t}/typed.toml", "setting 'limit' must be int | None, not str 'one'"),
    ("run --config {t}/list.json", "config file {t}/list.json must hold a table of settings"),
    (
        "run --dialogues {s} --model neutral --out /proc/stylebench-out",
        "--out /proc/stylebench-out: cannot create the run folder there",
    ),
    ("run --workers 0", "--workers must be a number >= 1, got 0"),
    ("models --worker-python {t}/afile", "--worker-python {t}/afile is not executable"),
]


@pytest.mark.parametrize(("argv", "says"), OUTSIDE, ids=[a for a, _ in OUTSIDE])
def test_the_outside_checks_cases_are_one_line_with_exit_2(argv, says, files, request, capsys):
    s = request.getfixturevalue("small_set")
    code = main(["--no-progress", *argv.format(t=files, s=s).split()])
    err = capsys.readouterr().err.strip()
    assert code == 2 and says.format(t=files) in err, err
    assert "internal error" not in err and "Traceback" not in err, err
    assert not list((files / "cache").glob("errors/*")), "a user mistake wrote an error log"


def test_a_bad_model_arg_leaves_no_run_folder(files, small_set, capsys):
    """The run folder made for a model that never started is removed with its lock (issue 34)."""
    out = files / "runs"
    argv = ["run", "--model", "openai-audio", "--model-arg", "timeout_s=abc", "--out", str(out)]
    argv += ["--dialogues", str(small_set)]
    code = main(["--no-progress", *argv, "--limit", "1", "--asr", "none"])
    err = capsys.readouterr().err.strip()
    assert code == 2 and err.endswith("--model-arg timeout_s=abc must be a number"), err
    assert out.is_dir() and not list(out.iterdir()), list(out.iterdir())
