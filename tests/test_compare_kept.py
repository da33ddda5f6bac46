"""A compared run's scores kept in the cache root (stylebench/compare/kept.py): read back the same
as computed, never read when anything they come from changed, bounded, and off with 0."""

from __future__ import annotations

import dataclasses
import math
import os
import shutil
import sys
from pathlib import Path
from typing import Any

import pytest

from stylebench.compare import kept
from stylebench.compare.load import computed_scores, load_run
from stylebench.records import RESPONSES


@pytest.fixture
def runs(calibration_comparison, tmp_path) -> list[Path]:
    """A copy of the three calibration runs (a test may append to them)."""
    out = tmp_path / "runs"
    shutil.copytree(calibration_comparison, out, ignore=shutil.ignore_patterns("cmp"))
    return sorted(p.parent for p in out.glob("*/manifest.json"))


@pytest.fixture(autouse=True)
def own_folder(monkeypatch, tmp_path) -> Path:
    """Each test keeps its copies in its own folder (the session's cache holds the copies the
    calibration comparison kept when it was built)."""
    where = tmp_path / "kept"
    monkeypatch.setattr(kept, "folder", lambda: where)
    return where


@pytest.fixture
def scorings(monkeypatch) -> list[Path]:
    """The runs scored from their records (not read from a kept copy), in order."""
    from stylebench.commands import runs as runs_mod

    calls: list[Path] = []
    real = runs_mod.score_stored

    def counted(run, **kw):
        calls.append(Path(run.store.root))
        return real(run, **kw)

    monkeypatch.setattr(runs_mod, "score_stored", counted)
    return calls


def same(a: Any, b: Any, where: str = "") -> None:
    """``a`` and ``b`` are equal all the way down (NaN equals NaN; dataclasses field by field,
    each of the same type)."""
    assert type(a) is type(b), f"{where}: {type(a).__name__} != {type(b).__name__}"
    if dataclasses.is_dataclass(a) and not isinstance(a, type):
        for f in dataclasses.fields(a):
            same(getattr(a, f.name), getattr(b, f.name), f"{where}.{f.name}")
    elif isinstance(a, dict):
        assert list(a) == list(b), f"{where}: keys differ"
        for k in a:
            same(a[k], b[k], f"{where}[{k!r}]")
    elif isinstance(a, list | tuple):
        assert len(a) == len(b), f"{where}: lengths differ"
        for i, (x, y) in enumerate(zip(a, b, strict=True)):
            same(x, y, f"{where}[{i}]")
    elif isinstance(a, float) and math.isnan(a):
        assert math.isnan(b), where
    else:
        assert a == b, f"{where}: {a!r} != {b!r}"


def kept_files() -> list[Path]:
    return sorted(kept.folder().glob("*.pickle"))


def test_a_second_load_reads_the_kept_copy_and_it_equals_the_computed_run(runs, scorings):
    first = [load_run(d) for d in runs]
    assert scorings == runs and len(kept_files()) == len(runs)
    again = [load_run(d) for d in runs]
    assert scorings == runs, "the second load scored the records again"
    for a, b in zip(first, again, strict=True):
        same(a, b, a.label)
        assert b.scored.records.of(RESPONSES), "no replies kept"
        # the samples are the set's own (shared by every run of the set), not copies
        assert all(x is y for x, y in zip(a.scored.samples, b.scored.samples, strict=True))
        # a record read back is laid out as one built by its class (no larger instance dict)
        rec = next(iter(b.scored.records.of(RESPONSES).values()))
        built = dataclasses.replace(rec)
        assert sys.getsizeof(rec.__dict__) == sys.getsizeof(built.__dict__)


def test_a_comparison_is_byte_identical_kept_or_not_read_here_or_in_workers(
    runs, scorings, tmp_path, monkeypatch
):
    """Three ways to read the runs give the same files: from the records in this process
    (keeping off), in worker processes that keep copies (a first comparison), and from those
    copies (a second one)."""
    from stylebench.compare.command import compare_command

    monkeypatch.setattr(kept, "PARALLEL_MIN_BYTES", 0)  # these runs are small
    monkeypatch.setenv("STYLEBENCH_COMPARE_KEPT_MB", "0")
    compare_command(runs, out=tmp_path / "off", n_boot=50)
    assert scorings == runs and not kept_files()
    monkeypatch.delenv("STYLEBENCH_COMPARE_KEPT_MB")
    compare_command(runs, out=tmp_path / "a", n_boot=50)
    assert scorings == runs, "the first comparison read the runs here, not in workers"
    assert len(kept_files()) == len(runs)
    compare_command(runs, out=tmp_path / "b", n_boot=50)
    assert scorings == runs, "the second comparison scored records again"
    files = {
        x: sorted(p.relative_to(tmp_path / x) for p in (tmp_path / x).rglob("*"))
        for x in ("off", "a", "b")
    }
    assert files["off"] == files["a"] == files["b"] and len(files["a"]) > 5
    for rel in files["a"]:
        if (tmp_path / "a" / rel).is_file():
            data = (tmp_path / "a" / rel).read_bytes()
            assert data == (tmp_path / "off" / rel).read_bytes(), rel
            assert data == (tmp_path / "b" / rel).read_bytes(), rel


def test_workers_keep_the_missing_copies_and_leave_a_bad_run_to_the_caller(runs, scorings):
    from stylebench.errors import MissingFile

    load_run(runs[0])  # kept here: not handed to a worker
    bad = runs[0].parent / "not-a-run"
    bad.mkdir()
    assert (
        kept.keep_in_parallel([*runs, bad], computed_scores, workers=2, min_bytes=0)
        == len(runs) - 1
    )
    assert kept.keep_in_parallel(runs, computed_scores, workers=2, min_bytes=0) == 0  # all kept now
    assert scorings == [runs[0]]
    for d in runs:
        load_run(d)
    assert scorings == [runs[0]], "a copy a worker kept was not read"
    with pytest.raises(MissingFile, match="not a stylebench run folder"):
        load_run(bad)


def test_one_worker_small_runs_or_keeping_off_read_nothing_ahead(runs, scorings, monkeypatch):
    assert kept.keep_in_parallel(runs, computed_scores, workers=1, min_bytes=0) == 0
    size = sum(
        p.stat().st_size for d in runs for p in d.glob("*.jsonl") if p.name != "timings.jsonl"
    )
    assert (
        kept.keep_in_parallel(runs, computed_scores, workers=2, min_bytes=size + 1) == 0
    )  # not worth a worker
    monkeypatch.setenv("STYLEBENCH_COMPARE_KEPT_MB", "0")
    assert kept.keep_in_parallel(runs, computed_scores, workers=2, min_bytes=0) == 0
    assert not kept_files()
    monkeypatch.delenv("STYLEBENCH_COMPARE_KEPT_MB")
    assert kept.keep_in_parallel(runs, computed_scores, workers=2, min_bytes=size) == len(
        runs
    )  # just enough


def test_a_record_appended_to_a_run_is_scored_not_read_from_the_copy(runs, scorings):
    from stylebench.store import RunStore

    d = runs[0]
    before = load_run(d)
    store = RunStore(d)
    key, rec = min(before.scored.records.of(RESPONSES).items())
    store.append("respond", dataclasses.replace(rec, text="a changed reply text"))
    after = load_run(d)
    assert scorings == [d, d]
    assert after.scored.records.of(RESPONSES)[key].text == "a changed reply text"
    assert load_run(d).scored.records.of(RESPONSES)[key].text == "a changed reply text"
    assert scorings == [d, d], "the new copy was not read"


@pytest.mark.parametrize("change", ["program", "cpu", "ratings", "timings"])
def test_what_names_a_copy(runs, scorings, monkeypatch, change):
    d = runs[0]
    load_run(d)
    if change == "program":
        monkeypatch.setattr(kept, "program_digest", lambda: "another program")
    elif change == "cpu":  # a cache root on a network disk, read by a machine with other flags
        kept.program_digest.cache_clear()
        monkeypatch.setattr(kept, "machine_identity", lambda: "x86_64\0Linux\0fpu sse2")
    elif change == "ratings":
        (d / "ratings_summary.json").write_text("{}", encoding="utf-8")
    else:  # scoring never reads the timings: a copy stays current
        with open(d / "timings.jsonl", "a", encoding="utf-8") as fh:
            fh.write("{}\n")
    load_run(d)
    if change == "cpu":
        kept.program_digest.cache_clear()  # the digest of this machine again, for later tests
    assert scorings == ([d] if change == "timings" else [d, d])


def test_the_program_digest_covers_every_package_folder_and_every_byte(tmp_path):
    import stylebench.dialogues
    import stylebench.metrics
    import stylebench.model_wrappers
    import stylebench.synth

    folders = kept.package_folders()
    for mod in (
        stylebench,
        stylebench.metrics,
        stylebench.synth,
        stylebench.dialogues,
        stylebench.model_wrappers,
    ):
        assert Path(mod.__file__).parent.resolve() in folders, mod.__name__
    tree = tmp_path / "pkg"
    (tree / "sub" / "__pycache__").mkdir(parents=True)
    (tree / "sub" / "a.py").write_text("x = 1\n", encoding="utf-8")
    (tree / "data.json").write_text("{}", encoding="utf-8")
    before = kept.tree_digest([tree])
    (tree / "sub" / "__pycache__" / "a.pyc").write_bytes(b"compiled")
    assert kept.tree_digest([tree]) == before  # compiled files are not the program
    (tree / "data.json").write_text("{ }", encoding="utf-8")
    assert kept.tree_digest([tree]) != before
    (tree / "data.json").write_text("{}", encoding="utf-8")
    (tree / "sub" / "a.py").rename(tree / "sub" / "b.py")
    assert kept.tree_digest([tree]) != before  # a file's name is part of it


@pytest.mark.parametrize(
    "damage",
    [b"", b"junk", kept.FORMAT + b" 0000\n", "truncated"],
    ids=["empty", "junk", "another key", "truncated"],
)
def test_a_copy_that_cannot_be_read_is_computed_and_replaced(runs, scorings, damage):
    d = runs[0]
    load_run(d)
    (path,) = kept_files()
    if damage == "truncated":
        data = path.read_bytes()
        path.write_bytes(data[: len(data) // 2])
    else:
        path.write_bytes(damage)
    load_run(d)
    assert scorings == [d, d]
    load_run(d)
    assert scorings == [d, d], "the replaced copy was not read"


def test_a_copy_naming_a_sample_the_run_lacks_is_not_used(runs, scorings):
    """A copy whose samples are not the opened run's (it cannot happen under its own key, but
    a copy is checked, not trusted blindly) is computed again."""
    from stylebench.commands.runs import open_stored

    d = runs[0]
    load_run(d)
    run = open_stored(d)
    name = kept.key(run)
    fewer = dataclasses.replace(run, samples=run.samples[:1])
    assert kept.open_kept().read(name, fewer) is None


def test_zero_turns_keeping_off_and_bad_values_are_refused(runs, scorings, monkeypatch):
    d = runs[0]
    monkeypatch.setenv("STYLEBENCH_COMPARE_KEPT_MB", "0")
    load_run(d)
    load_run(d)
    assert scorings == [d, d] and not kept_files()
    from stylebench.errors import BadValue

    for bad in ("lots", "-1"):
        monkeypatch.setenv("STYLEBENCH_COMPARE_KEPT_MB", bad)
        with pytest.raises(BadValue, match="STYLEBENCH_COMPARE_KEPT_MB"):  # a one-line error
            kept.limit_bytes()


def test_the_bound_removes_the_least_recently_used_copies(tmp_path):
    store = kept.KeptScores(tmp_path, limit=250)
    for i, name in enumerate(("old", "mid", "new")):
        p = store.path(name)
        p.write_bytes(b"x" * 100)
        os.utime(p, (1000 + i, 1000 + i))
    store.prune()
    assert sorted(p.stem for p in tmp_path.glob("*.pickle")) == ["mid", "new"]


def test_an_unwritable_cache_costs_only_the_reuse(runs, scorings, monkeypatch, tmp_path):
    blocked = tmp_path / "file"
    blocked.write_text("not a folder", encoding="utf-8")
    monkeypatch.setattr(kept, "folder", lambda: blocked / "kept")
    d = runs[0]
    a, b = load_run(d), load_run(d)
    assert scorings == [d, d]
    same(a, b)


def test_a_run_that_does_not_pickle_leaves_no_file(runs, own_folder):
    from stylebench.commands.runs import open_stored

    run = open_stored(runs[0])
    store = kept.KeptScores(own_folder, limit=1 << 30)
    store.write("x" * 64, run, lambda: None, 0)  # a function defined here does not pickle
    assert own_folder.is_dir() and not list(own_folder.iterdir())


def _worker_dies(run):
    """A worker lost while it reads (killed, out of memory)."""
    os._exit(3)


def test_a_lost_worker_is_reported_and_the_runs_are_read_here(runs, scorings, caplog):
    with caplog.at_level("WARNING", logger="stylebench.compare.kept"):
        kept.keep_in_parallel(runs, _worker_dies, workers=2, min_bytes=0)
    assert "a worker reading runs ahead of the comparison stopped" in caplog.text
    assert "BrokenProcessPool" in caplog.text
    assert not kept_files() and scorings == []
    for d in runs:
        load_run(d)
    assert scorings == runs  # read here instead
