"""Shared fixtures, and the rules for using them.

How the suite runs: ``make test`` runs pytest with pytest-xdist, one worker process per core
(``-n auto``), each test file on one worker (``--dist loadfile``), so a file's module fixtures are
built once; the files go out longest first (``pytest_collection_modifyitems`` below). ``pytest tests/test_x.py`` alone runs in one process as before. Every worker has its
own session: its own cache (``isolated_cache``), scratch folder and temporary folders, so no two
workers write to one folder, and session fixtures are per worker unless they are *shared* below.

Shared fixtures (expensive inputs, computed once per test session, READ-ONLY):

- ``small_set`` (session, shared by all workers): 2 samples per (dim, direction, lang), 2 voices
  per language, spoken by espeak-ng; a folder.
- ``calibration_comparison`` (session, shared by all workers): a neutral run on ``small_set``
  (every acoustic dim, English, 1 sample per cell), reference and shuffled beside it, and their
  comparison (``tests/calibration_runs.py``); a folder, read by ``load_comparison``.
- ``reference_run`` (session, per worker): one finished run (reference, volume, en, 2 samples,
  stand-in ASR and judge), as ``(RunResult, judge calls)``.
- ``chromium_path`` (session): Debian's chromium for Playwright.

Rules:

- Read-only: a test never writes into a shared folder. A test that changes one copies it first
  (``shutil.copytree(small_set, tmp_path / "set")``; a run: ``standins.judge.copy_of(res,
  tmp_path)``). Each worker checks, when its session ends, that every shared folder it used is as
  it was built (every path, size and modification time) and reports an error naming the paths
  that changed.
- A test or fixture writes only under its own ``tmp_path`` / ``tmp_path_factory`` folders, never
  in the repository, the user's cache or a fixed path; a test server binds port 0.
- A new expensive input that several test files read (a set, a run folder, a model folder): build
  it with :func:`shared_folder` in a session fixture here. ``build(path)`` writes a new folder
  at ``path``; the first worker that asks builds it under a file lock in the folder all workers of
  the session share, the others wait for that build and read the same folder. A build that failed
  is tried again by the next worker that asks (and fails the same way, with its own traceback).
- A model that is loaded in many tests is loaded once per process (a session or module fixture
  that the tests share, or the package's own per-process reuse), never at import time.
"""

from __future__ import annotations

import fcntl
import json
import os
import shutil
from collections.abc import Callable
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]

#: read-only fixture folders this worker used, and their state as built
_SHARED: dict[Path, dict[str, list[int]]] = {}


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """The test files longest first (``tests/file_costs.json``, written by
    ``scripts/test_costs.py`` from a measured run; a file not listed counts as 0 s), each file's
    tests in their own order. pytest-xdist hands ``--dist loadfile`` work out in this order with
    ``--no-loadscope-reorder`` (the Makefile), so the files taken last are short ones and the
    workers end together; what a test checks does not depend on it."""
    path = Path(__file__).with_name("file_costs.json")
    longest_files_first(items, json.loads(path.read_text(encoding="utf-8")))


def longest_files_first(items: list, costs: dict[str, float]) -> None:
    """Sort ``items`` (anything with a ``nodeid``) in place: files by ``costs`` (seconds; not
    listed: 0), longest first; ties and each file's tests in the order they came."""
    first: dict[str, int] = {}
    for k, item in enumerate(items):
        first.setdefault(item.nodeid.split("::")[0], k)

    def key(item: pytest.Item) -> tuple[float, int]:
        name = item.nodeid.split("::")[0]
        return (-float(costs.get(name, 0.0)), first[name])

    items.sort(key=key)


def _tool_missing() -> list[str]:
    return [t for t in ("espeak-ng", "ffmpeg") if shutil.which(t) is None]


def _state(folder: Path) -> dict[str, list[int]]:
    """Every path under ``folder`` with its size and modification time (a folder: -1, mtime)."""
    out = {}
    for p in sorted(folder.rglob("*")):
        st = p.lstat()
        out[str(p.relative_to(folder))] = [-1 if p.is_dir() else st.st_size, st.st_mtime_ns]
    return out


def shared_folder(
    tmp_path_factory: pytest.TempPathFactory, name: str, build: Callable[[Path], object]
) -> Path:
    """A folder built once per test session, whichever worker asks first (see the module
    docstring): ``build(path)`` must create ``path``; the folder is read-only afterwards."""
    root = tmp_path_factory.getbasetemp()
    if os.environ.get("PYTEST_XDIST_WORKER"):
        root = root.parent  # the session's folder, above every worker's own
    root = root / "shared"
    root.mkdir(exist_ok=True)
    out, done = root / name, root / f"{name}.built.json"
    with open(root / f"{name}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # released when the file is closed
        if not done.exists():
            if out.exists():  # what a failed build left
                shutil.rmtree(out)
            build(out)
            done.write_text(json.dumps(_state(out)), encoding="utf-8")
    _SHARED[out] = json.loads(done.read_text(encoding="utf-8"))
    return out


@pytest.fixture(scope="session", autouse=True)
def shared_folders_unchanged():
    """At the end of the session, every read-only fixture folder this worker used (each shared
    folder, the ``reference_run`` folder) is as it was built."""
    yield
    changed = {}
    for folder, built in _SHARED.items():
        now = _state(folder)
        diff = sorted(k for k in built.keys() | now.keys() if built.get(k) != now.get(k))
        if diff:
            changed[str(folder)] = diff[:10]
    assert not changed, (
        f"a test wrote into a shared, read-only fixture folder (copy it first): {changed}"
    )


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


def _build_small_set(out: Path) -> None:
    from stylebench.dialogues.builder import BuildSpec, build_set
    from stylebench.synth.espeak import EspeakSynth, voices_for

    spec = BuildSpec(per_cell=2, voices_per_lang=2, seed=1)
    build_set(out, spec, EspeakSynth(), {lang: voices_for(lang) for lang in spec.langs})


@pytest.fixture(scope="session")
def small_set(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """2 samples per (dim, direction, lang), 2 voices per language, built with espeak-ng
    (shared by all workers, read-only)."""
    missing = _tool_missing()
    if missing:
        pytest.fail(f"system tools missing: {missing}; run `make setup`")
    return shared_folder(tmp_path_factory, "small-set", _build_small_set)


# -- the judge stand-ins (tests/standins/judge.py): NOT Whisper, NOT an LLM judge -------------
@pytest.fixture
def standins(monkeypatch, tmp_path):
    """Register the stand-in judge and route transcription through the stand-in ASR."""
    from standins.judge import install_standins

    install_standins(monkeypatch, tmp_path)


@pytest.fixture(scope="session")
def calibration_comparison(small_set, tmp_path_factory) -> Path:
    """Three calibration runs and their comparison (tests/calibration_runs.py), built once per
    session for all workers; read-only (copy the folder before comparing again in it)."""
    from calibration_runs import build_comparison

    return shared_folder(
        tmp_path_factory, "calibration-comparison", lambda out: build_comparison(out, small_set)
    )


@pytest.fixture(scope="session")
def reference_run(small_set, tmp_path_factory):
    """One finished run (reference, volume, en, 2 samples, stand-in judge), built once per
    worker; read-only (``standins.judge.copy_of`` before appending to it)."""
    from standins.judge import OverlapJudgeStandIn, cfg_for, install_standins

    from stylebench.commands.runs import run

    root = tmp_path_factory.mktemp("judge-base")
    with pytest.MonkeyPatch.context() as mp:
        install_standins(mp, root)
        res = run(cfg_for(small_set, root), progress=False)
    _SHARED[res.store.root] = _state(res.store.root)  # read-only: checked at the end
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
