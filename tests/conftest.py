"""Shared fixtures: an isolated cache and a small dialogue set built once per session."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]


def _tool_missing() -> list[str]:
    return [t for t in ("espeak-ng", "ffmpeg") if shutil.which(t) is None]


@pytest.fixture(scope="session", autouse=True)
def isolated_cache(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Dialogue sets go to a fresh cache; the joined offline Whisper model is shared (read-only)."""
    root = tmp_path_factory.mktemp("cache")
    user_models = (
        Path(os.environ.get("STYLEBENCH_CACHE") or Path.home() / ".cache" / "stylebench") / "models"
    )
    user_models.mkdir(parents=True, exist_ok=True)
    (root / "models").symlink_to(user_models, target_is_directory=True)
    old = os.environ.get("STYLEBENCH_CACHE")
    os.environ["STYLEBENCH_CACHE"] = str(root)
    os.environ["STYLEBENCH_SCRATCH"] = str(root / "scratch")
    yield root
    if old is None:
        os.environ.pop("STYLEBENCH_CACHE", None)
    else:
        os.environ["STYLEBENCH_CACHE"] = old


@pytest.fixture(autouse=True)
def fresh_judges():
    """Each test builds its own judges: make_judge reuses a judge per process and settings, and
    tests swap judge classes and encoders for stand-ins."""
    from stylebench.stages import gate

    gate._BUILT.clear()
    yield
    gate._BUILT.clear()


@pytest.fixture(scope="session")
def small_set(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """2 samples per (dim, direction, lang), 2 voices per language, built with espeak-ng."""
    missing = _tool_missing()
    if missing:
        pytest.fail(f"system tools missing: {missing}; run `make setup`")
    from stylebench.dialogues.builder import BuildSpec, build_set
    from stylebench.synth.espeak import EspeakSynth, voices_for

    out = tmp_path_factory.mktemp("sets") / "small"
    spec = BuildSpec(per_cell=2, voices_per_lang=2, seed=1)
    build_set(out, spec, EspeakSynth(), {lang: voices_for(lang) for lang in spec.langs})
    return out


# -- the judge stand-ins (tests/standins/judge.py): NOT Whisper, NOT an LLM judge -------------
@pytest.fixture
def standins(monkeypatch, tmp_path):
    """Register the stand-in judge and route transcription through the stand-in ASR."""
    from standins.judge import install_standins

    install_standins(monkeypatch, tmp_path)


@pytest.fixture(scope="module")
def reference_run(small_set, tmp_path_factory):
    """One finished run (reference, volume, en, 2 samples, stand-in judge), built once."""
    from standins.judge import OverlapJudgeStandIn, cfg_for, install_standins

    from stylebench.commands.runs import run

    root = tmp_path_factory.mktemp("judge-base")
    with pytest.MonkeyPatch.context() as mp:
        install_standins(mp, root)
        res = run(cfg_for(small_set, root), progress=False)
        return res, OverlapJudgeStandIn.calls


@pytest.fixture(scope="session")
def chromium_path() -> str:
    """Debian's chromium for Playwright (no `playwright install`), as the listening-test test uses."""
    chromium = shutil.which("chromium") or shutil.which("chromium-browser")
    try:
        import playwright.sync_api  # noqa: F401
    except ImportError:
        pytest.fail("playwright is not installed: pip install -e '.[dev]'")
    if chromium is None:
        pytest.fail("chromium is not installed: apt-get install chromium (or run `make setup`)")
    return chromium
