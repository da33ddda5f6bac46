"""Mistakes a person can make are user errors: one line naming the thing and the fix, exit 2, no
traceback and no internal-error log. Each case here ended in ``internal error ... please report
it`` (exit 1) or was accepted silently before (issue 34)."""

from __future__ import annotations

from pathlib import Path

import pytest

from stylebench.cli import main


@pytest.fixture(autouse=True)
def _own_cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("STYLEBENCH_CACHE", str(tmp_path / "cache"))


def cli(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str]:
    code = main(["--no-progress", *args])
    return code, capsys.readouterr().err


def one_line_user_error(code: int, err: str, tmp_path: Path, says: str) -> None:
    assert code == 2, err
    assert err.startswith("stylebench: error: ") and len(err.strip().splitlines()) == 1, err
    assert says in err, err
    assert "internal error" not in err and "Traceback" not in err
    assert not list((tmp_path / "cache").glob("errors/*.log")), "a user mistake wrote a bug log"


@pytest.mark.parametrize(
    ("args", "says"),
    [
        (["--synth", "espeak-ng", "--synth-arg", "voices=nope.json"], "built-in voices"),
        (["--langs", "xx"], "--langs: unknown"),
        (["--dims", "nonsense"], "--dims: unknown"),
        (["--emotions", "bored", "--dims", "emotion"], "--emotions: unknown"),
    ],
)
def test_build_dialogues_mistakes(args, says, tmp_path, capsys):
    code, err = cli(capsys, "build-dialogues", "--out", str(tmp_path / "set"), *args)
    one_line_user_error(code, err, tmp_path, says)
    assert not (tmp_path / "set").exists()


@pytest.mark.parametrize("flag", ["--per-cell", "--voices-per-lang", "--jobs"])
@pytest.mark.parametrize("value", ["-3", "0"])
def test_counts_below_one_are_refused(flag, value, tmp_path, capsys):
    code, err = cli(capsys, "build-dialogues", "--out", str(tmp_path / "set"), flag, value)
    assert code == 2 and flag in err and "Traceback" not in err, err
    assert not (tmp_path / "set").exists()


def test_build_dialogues_out_that_exists_or_cannot_be_made(tmp_path, capsys):
    (tmp_path / "afile").write_text("x")
    (tmp_path / "adir").mkdir()
    for name, says in (("afile", "already there"), ("adir", "already there")):
        code, err = cli(capsys, "build-dialogues", "--out", str(tmp_path / name))
        one_line_user_error(code, err, tmp_path, says)
    code, err = cli(capsys, "build-dialogues", "--out", "/proc/stylebench-set")
    one_line_user_error(code, err, tmp_path, "/proc")


@pytest.mark.parametrize(
    ("text", "suffix", "says"),
    [
        ("limit = [\n", ".toml", "is not valid TOML"),
        ('{"limit": ', ".json", "is not valid JSON"),
        ('limit = "one"\n', ".toml", "'limit' must be"),
        ('["limit"]\n', ".json", "must hold a table of settings"),
        ('[judge]\nmrd_threshold = "high"\n', ".toml", "'mrd_threshold' must be"),
    ],
)
def test_bad_config_files_name_the_file(text, suffix, says, tmp_path, capsys):
    path = tmp_path / f"run{suffix}"
    path.write_text(text)
    code, err = cli(capsys, "run", "--model", "reference", "--config", str(path))
    one_line_user_error(code, err, tmp_path, says)
    assert str(path) in err


@pytest.mark.parametrize(
    ("arg", "says"),
    [
        ("base_url=ftp://x", "base_url must start with http(s)://"),
        ("timeout_s=abc", "--model-arg timeout_s=abc must be a number"),
        ("retries=-1", "retries >= 0"),
        ("flavour=nope", "flavour must be one of"),
    ],
)
def test_bad_model_args_leave_no_run_folder(arg, says, small_set, tmp_path, capsys):
    out = tmp_path / "runs"
    code, err = cli(
        capsys,
        *("run", "--model", "openai-audio", "--model-arg", arg, "--dim", "pitch"),
        *("--dialogues", str(small_set), "--limit", "1", "--out", str(out), "--asr", "none"),
    )
    one_line_user_error(code, err, tmp_path, says)
    assert not out.exists() or not any(out.iterdir()), list(out.iterdir())


def test_run_out_that_cannot_be_made(small_set, tmp_path, capsys):
    code, err = cli(
        capsys,
        *("run", "--model", "neutral", "--dialogues", str(small_set), "--limit", "1"),
        *("--asr", "none", "--out", "/proc/stylebench-out"),
    )
    one_line_user_error(code, err, tmp_path, "cannot create the run folder")


def test_measure_names_what_is_wrong_with_each_file(tmp_path, capsys):
    (tmp_path / "adir").mkdir()
    (tmp_path / "empty.wav").write_bytes(b"")
    code = main(["measure", str(tmp_path / "adir"), str(tmp_path / "empty.wav"), "--asr", "none"])
    out = capsys.readouterr().out
    assert code == 0
    assert "is a folder, not an audio file" in out and "does not exist" not in out, out
    assert "audio file is empty" in out and "the model returned" not in out, out


def test_caption_eval_without_captions_names_the_fix(tmp_path, capsys, reference_run):
    code, err = cli(capsys, "caption-eval", str(reference_run[0].store.root))
    one_line_user_error(code, err, tmp_path, "has no ok captions")
