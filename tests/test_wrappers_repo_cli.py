"""The repo-based wrappers without their packages: one install line, and their status.

No stand-in is used: these run where the official code is absent, torch or not.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest


def test_llama_omni2_unit_parsing():
    from stylebench.model_wrappers.repo.llama_omni2 import unit_list

    assert unit_list("<12><7> 30") == [12, 7, 30]
    assert unit_list([[1, 2], [3]]) == [1, 2, 3]
    assert unit_list(np.array([4, 5])) == [4, 5]


# ---------------------------------------------------------------- missing package / weights ---
@pytest.fixture(scope="module")
def tiny_set(tmp_path_factory) -> Path:
    """Two pitch samples in English (espeak-ng, a few seconds): enough for `stylebench run`."""
    from stylebench.dialogues.builder import BuildSpec, build_set
    from stylebench.synth.espeak import EspeakSynth, voices_for

    out = tmp_path_factory.mktemp("sets") / "tiny"
    spec = BuildSpec(dims=("pitch",), langs=("en",), per_cell=1, voices_per_lang=1, seed=1)
    build_set(out, spec, EspeakSynth(), {"en": voices_for("en")})
    return out


@pytest.mark.parametrize(
    ("model", "hint"),
    [
        ("kimi-audio", "git clone https://github.com/MoonshotAI/Kimi-Audio"),
        ("glm-4-voice", "git clone --recurse-submodules https://github.com/THUDM/GLM-4-Voice"),
        ("mini-omni", "git clone https://github.com/gpt-omni/mini-omni"),
        ("freeze-omni", "git clone https://github.com/VITA-MLLM/Freeze-Omni"),
    ],
)
def test_cli_run_without_the_package_prints_one_install_line(model, hint, tiny_set, tmp_path):
    cmd = [sys.executable, "-m", "stylebench.cli", "--no-progress", "run", "--model", model]
    cmd += ["--dim", "pitch", "--dialogues", str(tiny_set), "--out", str(tmp_path / "runs")]
    done = subprocess.run(cmd, capture_output=True, text=True, cwd=tmp_path, timeout=120)
    assert done.returncode == 2, done.stderr
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("stylebench: "), done.stderr
    assert hint in lines[0] and f"docs/models.md#{model}" in lines[0]
    assert "Traceback" not in done.stderr + done.stdout


def test_models_lists_every_repo_wrapper_with_its_status(capsys):
    from stylebench.cli import main

    assert main(["models"]) == 0
    rows = {line.split()[0]: line for line in capsys.readouterr().out.splitlines()}
    for name in (
        "kimi-audio",
        "glm-4-voice",
        "mini-omni",
        "mini-omni2",
        "slam-omni",
        "freeze-omni",
        "baichuan-omni-1.5",
        "llama-omni2",
    ):
        assert "missing package" in rows[name] and "git clone" in rows[name], rows[name]
    # transformers is importable here, the checkpoint is not cached
    assert "missing weights" in rows["minicpm-o-2.6"] or "available" in rows["minicpm-o-2.6"]
