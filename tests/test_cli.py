"""The command line: clear one-line errors, never a traceback."""

from __future__ import annotations

import subprocess
import sys


def run_cli(*args: str, block: str = "") -> subprocess.CompletedProcess:
    """The CLI in a subprocess; ``block`` names a module to make unimportable there."""
    code = f"import sys; sys.modules[{block!r}] = None\n" if block else ""
    code += "import sys; from stylebench.cli import main; sys.exit(main(sys.argv[1:]))"
    return subprocess.run(
        [sys.executable, "-c", code, "--no-progress", *args],
        capture_output=True,
        text=True,
        timeout=120,
    )


def test_unknown_model_suggests():
    r = run_cli("run", "--model", "refrence")
    assert r.returncode == 2
    assert "did you mean reference" in r.stderr and "Traceback" not in r.stderr


def test_bad_dim():
    r = run_cli("run", "--dim", "loudness")
    assert r.returncode == 2 and "--dim must be one of" in r.stderr and "Traceback" not in r.stderr


def test_report_on_non_run():
    r = run_cli("report", "/nonexistent/run")
    assert r.returncode == 2 and "not a stylebench run folder" in r.stderr


def test_models_lists_embedded():
    r = run_cli("models")
    assert r.returncode == 0
    names = [line.split()[0] for line in r.stdout.splitlines()]
    assert "reference" in names and "neutral" in names


def test_missing_asr_extra_is_one_line(small_set, tmp_path):
    # openai-whisper may be installed here: the subprocess is made to lack it either way
    r = run_cli(
        "run",
        "--model",
        "reference",
        "--dim",
        "volume",
        "--lang",
        "en",
        "--limit",
        "1",
        "--asr",
        "openai-whisper",
        "--vad",
        "energy",
        "--dialogues",
        str(small_set),
        "--out",
        str(tmp_path),
        block="whisper",
    )
    assert r.returncode == 2, r.stderr
    assert "stylebench[openai-whisper]" in r.stderr and "Traceback" not in r.stderr


# -- bad input never shows a traceback (in process: main() is what the command runs) ---------
import json  # noqa: E402
import shutil  # noqa: E402

import pytest  # noqa: E402

from stylebench.cli import main  # noqa: E402


def cli(capsys, *args: str) -> tuple[int, str]:
    code = main(["--no-progress", *args])
    return code, capsys.readouterr().err


@pytest.fixture(scope="module")
def finished(small_set, tmp_path_factory):
    """A finished reference run (volume, en, 1 sample per cell): its run flags and folder."""
    out = tmp_path_factory.mktemp("cli-run")
    flags = [
        "--model",
        "reference",
        "--dim",
        "volume",
        "--lang",
        "en",
        "--limit",
        "1",
        "--asr",
        "none",
        "--vad",
        "energy",
        "--judge",
        "none",
        "--n-boot",
        "20",
        "--dialogues",
        str(small_set),
        "--out",
        str(out),
        "--run-id",
        "r",
    ]
    assert main(["--no-progress", "run", *flags]) == 0
    return flags, out / "r"


def a_copy_of(finished, tmp_path):
    flags, root = finished
    dest = tmp_path / "out" / "r"
    shutil.copytree(root, dest)
    flags = [*flags[:-4], "--out", str(dest.parent), "--run-id", "r"]
    return flags, dest


SPOILED = {  # manifest.json content -> what the one-line error says
    "a list": (b"[1, 2]", "manifest.json: a run manifest is a JSON object, this one is a list"),
    "config a string": (None, "manifest.json: its 'config' section is a str, not an object"),
    "empty object": (b"{}", "manifest.json: its 'config' section is missing"),
    "truncated": (None, "manifest.json: not valid JSON"),
    "binary": (b"\x89PNG\r\n\x1a\n\xff\xfe", "manifest.json: not UTF-8 text"),
}


@pytest.mark.parametrize("case", sorted(SPOILED))
@pytest.mark.parametrize("command", ["report", "score", "run"])
def test_a_spoiled_manifest_is_one_line_naming_the_file(case, command, finished, tmp_path, capsys):
    flags, root = a_copy_of(finished, tmp_path)
    content, says = SPOILED[case]
    mf = root / "manifest.json"
    if case == "config a string":
        content = json.dumps({**json.loads(mf.read_text()), "config": "volume"}).encode()
    elif case == "truncated":
        content = mf.read_bytes()[:100]
    mf.write_bytes(content)
    args = ["run", *flags] if command == "run" else [command, str(root)]
    code, err = cli(capsys, *args)
    assert code == 2 and says in err and str(root) in err, err
    assert "another dialogue set" not in err


def test_no_config_on_resume_is_named_not_called_another_set(finished, tmp_path, capsys):
    flags, root = a_copy_of(finished, tmp_path)
    mf = root / "manifest.json"
    manifest = json.loads(mf.read_text())
    mf.write_text(json.dumps({k: v for k, v in manifest.items() if k != "config"}))
    code, err = cli(capsys, "run", *flags)
    assert code == 2 and "manifest.json: its 'config' section is missing" in err, err


def test_an_old_schema_manifest_reports_its_records_or_says_why(finished, tmp_path, capsys):
    flags, root = a_copy_of(finished, tmp_path)
    mf = root / "manifest.json"
    manifest = json.loads(mf.read_text())
    mf.write_text(json.dumps({k: v for k, v in manifest.items() if k != "identity"}))
    code, err = cli(capsys, "report", str(root), "--format", "json")
    assert code == 0, err  # before identities: the identity is the model entry + the decode config
    report = json.loads((root / "report.json").read_text())
    assert all(c["n_ok"] == c["n"] > 0 for c in report["cells"]), report["cells"]
    # a model entry that no stored reply answers to: refused, saying why
    mf.write_text(
        json.dumps(
            {
                **{k: v for k, v in manifest.items() if k != "identity"},
                "model": {**manifest["model"], "step": 9.0},
            }
        )
    )
    code, err = cli(capsys, "report", str(root))
    assert code == 2 and "no reply in respond.jsonl is of the model configuration" in err, err
    assert "it has no identity" in err


@pytest.mark.parametrize(
    ("extra", "says"),
    [
        (
            ["--model-arg", "bogus=1"],
            "--model-arg: reference takes no argument 'bogus'; it accepts: voice_en",
        ),
        (["--model-arg", "=x"], "--model-arg '=x': the name before '=' must be an argument name"),
        (["--temperature", "-1"], "--temperature must be a finite number >= 0, got -1.0"),
        (["--top-p", "0"], "--top-p must be in (0, 1], got 0.0"),
    ],
)
def test_bad_run_flags_are_one_line(extra, says, finished, tmp_path, capsys):
    flags, _ = a_copy_of(finished, tmp_path)
    code, err = cli(capsys, "run", *flags, "--run-id", "fresh", *extra)
    assert code == 2 and says in err, err


def test_out_that_is_a_file_or_under_one_is_one_line(finished, tmp_path, capsys):
    flags, _ = a_copy_of(finished, tmp_path)
    file = tmp_path / "a-file"
    file.write_text("x")
    for out in (file, file / "below"):
        code, err = cli(capsys, "run", *flags, "--out", str(out))
        assert code == 2 and f"{file} is a file; pass a folder as --out" in err, err
    (tmp_path / "runs").mkdir()
    (tmp_path / "runs" / "r").write_text("x")  # the run folder itself is a file
    code, err = cli(capsys, "run", *flags, "--out", str(tmp_path / "runs"))
    assert code == 2 and "r is a file; pass a folder as --out" in err, err


def test_verbose_still_shows_the_traceback(finished, tmp_path):
    flags, root = a_copy_of(finished, tmp_path)
    (root / "manifest.json").write_bytes(b"[1]")
    with pytest.raises(ValueError, match="a run manifest is a JSON object"):
        main(["-v", "--no-progress", "report", str(root)])


# -- a bug is not a user error: "internal error", a log with the traceback, exit 1 -----------
def test_an_internal_key_error_is_logged_and_exits_1(monkeypatch, tmp_path, capsys):
    import stylebench.cli.models as models

    def broken(args):
        raise KeyError("config")

    monkeypatch.setenv("STYLEBENCH_CACHE", str(tmp_path / "cache"))
    monkeypatch.setattr(models, "main", broken)
    code, err = cli(capsys, "models")
    lines = err.strip().splitlines()
    assert code == 1, err
    assert lines[0] == "stylebench: internal error: KeyError: 'config'", err
    assert "error: 'config'" not in err.replace("KeyError: 'config'", "")
    logs = list((tmp_path / "cache" / "errors").glob("internal-error-*.log"))
    assert len(logs) == 1 and str(logs[0]) in lines[1], err
    text = logs[0].read_text()
    assert "Traceback (most recent call last)" in text and "KeyError: 'config'" in text
    assert "in broken" in text and text.startswith("stylebench --no-progress models")


@pytest.mark.parametrize(
    ("args", "says"),
    [
        (["run", "--dim", "loudness"], "--dim must be one of"),
        (["run", "--model", "refrence"], "did you mean reference"),
        (["run", "--config", "/nonexistent/run.toml"], "config file /nonexistent/run.toml"),
        (["report", "/nonexistent/run"], "/nonexistent/run is not a stylebench run folder"),
        (["compare", "/nonexistent/a", "--alpha", "2"], "--alpha must be in (0, 1)"),
    ],
)
def test_user_errors_are_one_line_and_exit_2(args, says, capsys):
    code, err = cli(capsys, *args)
    assert code == 2 and says in err, err
    assert err.strip().splitlines() == [err.strip()] and err.startswith("stylebench: error: ")


def test_a_bad_flag_is_a_usage_error(capsys):
    code, err = cli(capsys, "run", "--limit", "many")
    assert code == 2 and "--limit" in err and "Traceback" not in err, err
    code, err = cli(capsys, "run", "--no-such-flag")
    assert code == 2 and "--no-such-flag" in err, err


def test_help_is_grouped_by_config_section(capsys):
    code = main(["run", "--help"])
    out = capsys.readouterr().out
    assert code == 0
    for section in ("Options:", "run settings:", "decode settings:", "measure settings:"):
        assert section in out, out
    assert out.index("--asr ") > out.index("measure settings:") > out.index("--temperature")
    assert "--judge-arg KEY=VALUE" in out and "--strict / --no-strict" in out
