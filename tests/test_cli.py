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
