"""`stylebench models` and the one-line "not installed" path of `stylebench run`.

``NeedsMissingPackage`` (tests/worker_models/sbtest_models.py) is a test-only stand-in for a
real wrapper whose package is absent; every registered wrapper that reports "missing package"
here is also run through the CLI for real.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from stylebench import cli
from stylebench.model_wrappers import weights
from stylebench.model_wrappers.registry import MODELS, model_status
from stylebench.registry import LazyRegistry, MissingExtraError

HELPERS = Path(__file__).resolve().parent / "worker_models"
STATUSES = {"available", "missing package", "missing weights"}
FAST_RUN = ["--dim", "pitch", "--lang", "en", "--limit", "1", "--asr", "none", "--vad", "energy"]
FAST_RUN += ["--judge", "none"]
#: the CLI's error prefix, with or without the word "error"
PREFIX = re.compile(r"^stylebench: (error: )?")
MISSING = [name for name in MODELS if model_status(name)[0] == "missing package"]


def stylebench(*args: str, env: dict | None = None) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "stylebench.cli", "--no-progress", *args],
        capture_output=True,
        text=True,
        timeout=300,
        env=env,
    )


def parse(stdout: str) -> dict[str, str]:
    out = {}
    for line in stdout.splitlines():
        name, rest = line.split(None, 1)
        out[name] = next(s for s in sorted(STATUSES, key=len, reverse=True) if rest.startswith(s))
    return out


def test_models_lists_every_wrapper_with_a_status():
    r = stylebench("models")
    assert r.returncode == 0, r.stderr
    listed = parse(r.stdout)
    assert list(listed) == list(MODELS)
    assert listed["reference"] == listed["openai-audio"] == "available"
    # the same list, checked from inside a worker environment (here: this interpreter)
    w = stylebench("models", "--worker-python", sys.executable)
    assert w.returncode == 0, w.stderr
    assert parse(w.stdout) == listed


def test_status_helpers(tmp_path, monkeypatch):
    with pytest.raises(MissingExtraError) as err:
        weights.require_package("sbtest_absent_pkg.sub", "see docs/models.md#x (pip install y)")
    assert str(err.value) == (
        "sbtest_absent_pkg.sub is not installed (sbtest_absent_pkg missing): "
        "see docs/models.md#x (pip install y)"
    )
    assert weights.require_package("json", "-").dumps([]) == "[]"
    assert not weights.has_package("sbtest_absent_pkg.sub") and weights.has_package("json")
    # hub ids are looked up in the Hugging Face cache only, never downloaded
    monkeypatch.setenv("HF_HUB_CACHE", str(tmp_path / "hub"))
    status, detail = weights.weights_status("org/some-model")
    assert status == "missing weights" and "huggingface-cli download org/some-model" in detail
    snap = tmp_path / "hub" / "models--org--some-model" / "snapshots" / "abc123"
    snap.mkdir(parents=True)
    assert weights.weights_status("org/some-model")[0] == "missing weights"  # empty snapshot
    (snap / "config.json").write_text("{}")
    assert weights.weights_status("org/some-model") == (
        "available",
        f"org/some-model cached at {snap}",
    )
    assert weights.weights_status(str(snap))[0] == "available"
    assert weights.weights_status(str(tmp_path / "nope"))[0] == "missing weights"
    assert weights.is_local_path("./org/name") and weights.is_local_path("model-folder")
    assert not weights.is_local_path("org/some-model")  # a hub id, unless it exists here


def test_one_weights_folder_has_one_revision(tmp_path, monkeypatch):
    """Issue 9: the repo-based and transformers-based wrappers named one folder two ways."""
    from stylebench.model_wrappers.hf.loading import HFSpec, resolve_weights

    folder = tmp_path / "ckpt"
    folder.mkdir()
    (folder / "config.json").write_text('{"a": 1}')
    (folder / "model.safetensors").write_bytes(b"w" * (2 << 20))
    rev = weights.weights_revision(folder)
    assert rev.startswith("local:") and weights.weights_revision(str(folder)) == rev
    spec = HFSpec("m", "org/m", "json", "M", "P", "0")
    assert resolve_weights(spec, str(folder)).revision == rev  # the hf wrappers' record
    (folder / "config.json").write_text('{"a": 2}')  # same size, other content: another id
    assert weights.weights_revision(folder) != rev
    # a hub snapshot is its commit; a hub id is the commit its cached main points to
    monkeypatch.setenv("HF_HUB_CACHE", str(tmp_path / "hub"))
    snap = tmp_path / "hub" / "models--org--m" / "snapshots" / "c0ffee"
    snap.mkdir(parents=True)
    (snap.parent.parent / "refs").mkdir()
    (snap.parent.parent / "refs" / "main").write_text("c0ffee")
    assert weights.weights_revision(snap) == weights.weights_revision("org/m") == "c0ffee"
    assert weights.weights_revision("org/absent") == "unknown"


def test_model_status_uses_check_and_survives_a_broken_one(monkeypatch):
    class Fine:
        """A fine model."""

    class Checked:
        @classmethod
        def check(cls):
            return "missing weights", "no weights at /w"

    class Broken:
        @classmethod
        def check(cls):
            raise RuntimeError("boom")

    fake = {"fine": Fine, "checked": Checked, "broken": Broken}
    monkeypatch.setattr(MODELS, "load", fake.__getitem__)
    assert model_status("fine") == ("available", "A fine model.")
    assert model_status("checked") == ("missing weights", "no weights at /w")
    assert model_status("broken") == ("error", "check() failed: RuntimeError: boom")


def test_run_with_missing_package_is_one_line(small_set, tmp_path, monkeypatch, capsys):
    monkeypatch.syspath_prepend(str(HELPERS))
    fake = LazyRegistry("model", {"needs-pkg": "sbtest_models:NeedsMissingPackage"})
    monkeypatch.setattr("stylebench.model_wrappers.registry.MODELS", fake)
    args = ["--no-progress", "run", "--model", "needs-pkg", "--dialogues", str(small_set)]
    rc = cli.main([*args, "--out", str(tmp_path), *FAST_RUN])
    err = capsys.readouterr().err.strip()
    assert rc == 2 and "\n" not in err and "Traceback" not in err
    assert PREFIX.sub("", err) == (
        "sbtest_absent_pkg is not installed: "
        "see docs/models.md#kimi-audio (pip install sbtest-absent-pkg)"
    )


def test_run_in_worker_with_missing_package_is_one_line(small_set, tmp_path):
    env = {**os.environ, "PYTHONPATH": str(HELPERS)}
    r = stylebench(
        "run",
        "--model",
        "sbtest_models:NeedsMissingPackage",
        "--worker-python",
        sys.executable,
        "--dialogues",
        str(small_set),
        "--out",
        str(tmp_path),
        *FAST_RUN,
        env=env,
    )
    assert r.returncode == 2 and "Traceback" not in r.stderr
    line = r.stderr.strip()
    assert "\n" not in line and PREFIX.sub("", line).startswith(
        "sbtest_absent_pkg is not installed"
    )


@pytest.mark.parametrize("name", MISSING)
def test_registered_wrapper_without_its_package_is_one_line(name, small_set, tmp_path, capsys):
    """Every real wrapper whose package is absent here fails before any turn, in one line."""
    args = ["--no-progress", "run", "--model", name, "--dialogues", str(small_set)]
    rc = cli.main([*args, "--out", str(tmp_path), *FAST_RUN])
    err = capsys.readouterr().err.strip()
    assert rc != 0 and "\n" not in err and "Traceback" not in err, err
    assert "not installed" in err and "docs/models.md" in err, err
    if name == MISSING[0]:  # and once as a real process, the way a user meets it
        r = stylebench(*args[1:], "--out", str(tmp_path / "sub"), *FAST_RUN)
        assert r.returncode == 2 and "Traceback" not in r.stderr
        assert r.stderr.strip().splitlines() == [err], r.stderr


def test_gpu_smoke_script_reports_each_model(small_set, tmp_path):
    """scripts/gpu_smoke.sh on CPU: reference, a model whose package is missing (skipped), and
    a failing run (reference asked to run in a worker env, which it refuses) that does not stop
    the table."""
    script = Path(__file__).resolve().parents[1] / "scripts" / "gpu_smoke.sh"
    env = {
        **os.environ,
        "STYLEBENCH": f"{sys.executable} -m stylebench.cli",
        "SB_SMOKE_OUT": str(tmp_path / "smoke"),
        "SB_SMOKE_DIALOGUES": str(small_set),
        "SB_SMOKE_PYTHON": sys.executable,  # the tiny Qwen check: skipped here (no CUDA)
    }
    missing = MISSING[:1]
    r = subprocess.run(
        ["bash", str(script), "reference", *missing, "no-such-model"],
        capture_output=True,
        text=True,
        timeout=300,
        env=env,
    )
    assert r.returncode == 0, r.stderr
    rows = [ln.split("\t") for ln in (tmp_path / "smoke" / "smoke.tsv").read_text().splitlines()]
    table = {row[0]: row for row in rows[1:]}
    assert table["reference"][1:2] == ["ok"] and table["reference"][3] == "6/6", table
    assert table["no-such-model"][1] == "skipped"
    for name in missing:
        assert table[name][1] == "skipped" and "missing package" in table[name][4]
    assert "reference" in r.stdout and "turns_ok" in r.stdout  # the printed table
    assert table["tiny-qwen-omni@cuda"][1] == "skipped", table
    # a run that fails is reported with its error line, and the next model still runs; the
    # embedded models read the answer key, so they never run in a worker env
    env["SB_WORKER_PYTHON_REFERENCE"] = sys.executable
    env["SB_SMOKE_OUT"] = str(tmp_path / "smoke2")
    env["SB_SMOKE_TINY"] = "0"
    r = subprocess.run(
        ["bash", str(script), "reference", "no-such-model"],
        capture_output=True,
        text=True,
        timeout=300,
        env=env,
    )
    rows = [ln.split("\t") for ln in (tmp_path / "smoke2" / "smoke.tsv").read_text().splitlines()]
    assert rows[1][0] == "reference" and rows[1][1] == "run failed (exit 2)", rows
    assert "run in process only" in rows[1][4] and rows[2][0] == "no-such-model"
