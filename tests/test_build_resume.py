"""build-dialogues is resumable: a build cut short (an exception, kill -9) and called again keeps
every turn it made, makes the rest, and writes the set an uninterrupted build writes; a turn the
synthesiser fails on is retried by the next call; a reused pool item is never twice in a cell in
one voice; progress says turns done / total and the time left."""

from __future__ import annotations

import io
import json
import os
import signal
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path

import pytest
from standins.texttone import ReadsTextTone, TextTone

from stylebench.dialogues.builder import (
    BuildIncomplete,
    BuildSpec,
    build_set,
    partial_folder,
    plan_samples,
)
from stylebench.dialogues.intelligibility import Checker, Unintelligible
from stylebench.dialogues.sets import load_set
from stylebench.errors import BadValue
from stylebench.synth.espeak import voices_for

SPEC = BuildSpec(dims=("pitch",), langs=("en",), per_cell=2, voices_per_lang=2, seed=4)
VOICES = {"en": voices_for("en")}
N_TURNS = 2 * 2 * 3  # directions x per_cell x turns


def files_of(root: Path) -> dict[str, bytes]:
    return {
        str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()
    }


def lines(path: Path) -> list[dict]:
    return [json.loads(x) for x in path.read_text().splitlines() if x.strip()]


@pytest.fixture(scope="module")
def uninterrupted(tmp_path_factory):
    out = tmp_path_factory.mktemp("whole") / "set"
    build_set(
        out, SPEC, TextTone(), VOICES, jobs=1, checker=Checker(ReadsTextTone(), quality=False)
    )
    return out


def test_a_build_cut_short_goes_on_and_writes_the_same_set(tmp_path, uninterrupted):
    out = tmp_path / "set"
    checker = Checker(ReadsTextTone(), quality=False)
    with pytest.raises(KeyboardInterrupt):
        build_set(out, SPEC, TextTone(stop_after=5), VOICES, jobs=1, checker=checker)
    assert not out.exists()  # nothing appears at --out before the set is whole
    work = partial_folder(out)
    kept = lines(work / "turns.jsonl")
    assert len(kept) == 5 and all(r["status"] == "ok" for r in kept)
    before = {r["audio"]: (work / r["audio"]).read_bytes() for r in kept}

    again = TextTone()
    card = build_set(out, SPEC, again, VOICES, jobs=1, checker=checker)
    assert len(again.calls) == N_TURNS - 5  # the five turns made are not made again
    assert files_of(out) == files_of(uninterrupted)  # manifest, wavs, cards, check records
    assert card["checksum"] == json.loads((uninterrupted / "set_card.json").read_text())["checksum"]
    assert not work.exists()  # the build folder goes once the set is written
    samples, _ = load_set(out)  # every wav is the one the manifest hashes
    assert len(samples) == 4 and before  # (the kept wavs are the set's: files_of above)


def test_kill_9_in_the_middle_then_the_same_command(tmp_path):
    """The CLI, killed with SIGKILL while it synthesises, then run again with the same
    arguments: the turns on record are kept and the set is the one a build in one go writes."""
    args = ["--synth", "espeak-ng", "--no-asr-check", "--per-cell", "3", "--langs", "en"]
    args += ["--dims", "pitch", "--jobs", "1"]
    cmd = [sys.executable, "-m", "stylebench.cli", "build-dialogues", *args]
    out, whole = tmp_path / "set", tmp_path / "whole"
    record = partial_folder(out) / "turns.jsonl"
    proc = subprocess.Popen([*cmd, "--out", str(out)], stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline and proc.poll() is None:
        if record.exists() and len(record.read_text().splitlines()) >= 6:
            break
        time.sleep(0.05)
    assert proc.poll() is None, proc.stderr.read() if proc.stderr else ""
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait()
    done = len([x for x in record.read_text().splitlines() if x.endswith("}")])
    assert 6 <= done < 18 and not out.exists()
    res = subprocess.run([*cmd, "--out", str(out)], capture_output=True, text=True, check=True)
    assert f"turns: {done}/18 turns ({done} done before)" in res.stderr  # progress, in a log
    assert f"{18 - done} computed" in res.stderr
    subprocess.run([*cmd, "--out", str(whole)], capture_output=True, check=True)
    assert files_of(out) == files_of(whole)


def test_a_turn_that_fails_stops_the_set_and_the_next_call_retries_it_alone(tmp_path):
    out = tmp_path / "set"
    bad = plan_samples(SPEC, VOICES)[1]["texts"][2]
    with pytest.raises(BuildIncomplete, match="run the same command again") as err:
        build_set(out, SPEC, TextTone(fail_on=bad), VOICES, jobs=1)
    assert "1 user turn(s) failed" in str(err.value) and "cannot say" in str(err.value)
    assert str(partial_folder(out)) in str(err.value) and not out.exists()
    again = TextTone()
    build_set(out, SPEC, again, VOICES, jobs=1)
    assert again.calls == [bad]
    assert len(load_set(out)[0]) == 4


def test_jobs_make_turns_on_threads_and_the_same_set(tmp_path, uninterrupted):
    out, synth = tmp_path / "set", TextTone()
    build_set(out, SPEC, synth, VOICES, jobs=3, checker=Checker(ReadsTextTone(), quality=False))
    assert len(synth.threads) >= 2 and "MainThread" not in synth.threads
    assert files_of(out) == files_of(uninterrupted)


def test_a_refused_set_says_where_its_turns_are_kept(tmp_path):
    target = plan_samples(SPEC, VOICES)[0]["texts"][1]
    checker = Checker(ReadsTextTone(garble=target), quality=False)  # in every voice
    with pytest.raises(Unintelligible) as err:
        build_set(tmp_path / "set", SPEC, TextTone(), VOICES, jobs=1, checker=checker)
    msg = str(err.value)
    assert target in msg and "banana orchestra umbrella" in msg and "kept in" in msg
    assert msg.count(" turn 2 ") == 1  # the planned voice's reading is the one named


# -- content: how a cell reuses its pool -----------------------------------------------------


def test_a_cell_past_its_pool_reuses_items_each_time_in_another_voice():
    spec = BuildSpec(dims=("speed",), langs=("en",), per_cell=300, voices_per_lang=4, seed=2)
    plans = plan_samples(spec, VOICES)
    cell = [p for p in plans if p["direction"] == "intensify"]
    uses = Counter(p["pool_id"] for p in cell)
    assert len(uses) == 120 and set(uses.values()) == {2, 3}  # 300 = 120 + 120 + 60
    voiced = Counter((p["pool_id"], p["voice"]) for p in cell)
    assert max(voiced.values()) == 1  # never an item twice in a cell in one voice
    assert set(Counter(p["voice"] for p in cell).values()) == {75}  # the voices stay balanced


def test_below_one_round_the_voices_are_the_ones_sets_were_planned_with():
    spec = BuildSpec(dims=("speed", "emotion"), langs=("en",), per_cell=6, voices_per_lang=4)
    names = [v.id for v in VOICES["en"][:4]]
    for p in plan_samples(spec, VOICES):
        assert p["voice"] == names[int(p["id"][-4:]) % 4]


def test_more_than_items_x_voices_is_refused_naming_the_cells():
    spec = BuildSpec(dims=("emotion",), langs=("en",), per_cell=360, voices_per_lang=4)
    with pytest.raises(BadValue) as err:
        plan_samples(spec, VOICES)
    msg = str(err.value)
    assert "--per-cell 360" in msg and "emotion/happy intensify en: 21 items x 4 voices = 84" in msg
    assert "the largest --per-cell these cells allow is 80" in msg
    plan_samples(BuildSpec(dims=("emotion",), langs=("en",), per_cell=80), VOICES)


def test_a_revoiced_sample_takes_no_voice_its_item_has_in_the_cell(tmp_path):
    """per_cell 121 over a pool of 120: item 0 of the cell is used twice (voices 0 and 1). When
    its first use cannot be read in voice 0 it moves to voice 2, not to voice 1."""
    from stylebench.dialogues import builder

    spec = BuildSpec(dims=("pitch",), langs=("en",), per_cell=121, voices_per_lang=3, seed=0)
    plans = [p for p in plan_samples(spec, VOICES) if p["direction"] == "intensify"]
    first, again = plans[0], plans[120]
    assert first["pool_id"] == again["pool_id"]
    names = [v.id for v in VOICES["en"][:3]]
    assert (first["voice"], again["voice"]) == (names[0], names[1])
    only = {first["id"], again["id"]}
    orig = builder.plan_samples
    with pytest.MonkeyPatch.context() as mp:  # the build speaks these two samples only
        mp.setattr(builder, "plan_samples", lambda s, v: [p for p in orig(s, v) if p["id"] in only])
        checker = Checker(ReadsTextTone(garble=first["texts"][0], voice=names[0]), quality=False)
        card = build_set(tmp_path / "s", spec, TextTone(), VOICES, jobs=1, checker=checker)
    voices = {s.id: s.voice for s in load_set(tmp_path / "s")[0]}
    assert voices == {first["id"]: names[2], again["id"]: names[1]}
    assert card["cells"][0]["same_voice_repeats"] == 0 and card["cells"][0]["items"] == 1


def test_the_card_states_the_reuse(tmp_path):
    spec = BuildSpec(dims=("pitch",), langs=("en",), per_cell=2, voices_per_lang=2)
    card = build_set(tmp_path / "s", spec, TextTone(), VOICES, jobs=1)
    assert "no item is spoken twice in one cell by the same voice" in card["reuse_rule"]
    assert {(c["items"], c["uses_max"], c["same_voice_repeats"]) for c in card["cells"]} == {
        (2, 1, 0)
    }
    md = (tmp_path / "s" / "SET_CARD.md").read_text()
    assert "| dim | direction | lang | n | items | uses per item |" in md
    assert "| pitch | intensify | en | 2 | 2 | 1 |" in md


# -- progress --------------------------------------------------------------------------------


class Clock:
    def __init__(self) -> None:
        self.t = 100.0

    def __call__(self) -> float:
        return self.t


def test_progress_lines_say_done_total_rate_and_time_left():
    from stylebench.pipeline.progress import LogBar

    out, clock = io.StringIO(), Clock()
    bar = LogBar("turns", 1000, "turn", 400, stream=out, every_s=60, clock=clock)
    for _ in range(10):  # 10 turns in 30 s: 3 s a turn
        clock.t += 3
        bar.update()
    clock.t += 31  # a minute since the first line: one more line
    bar.update()
    bar.close()
    got = out.getvalue().splitlines()
    assert got[0] == "turns: 400/1000 turns (400 done before)"
    # 11 computed in 61 s (the 400 found done do not count): 589 x 61 / 11 s left
    assert got[1] == "turns: 411/1000 turns (41.1%), 0.18 turns/s, 54m26s left"
    assert got[2] == "turns: 411/1000 turns, 11 computed in 1m01s"
    assert len(got) == 3


def test_the_reporter_draws_a_bar_on_a_terminal_and_lines_elsewhere():
    from stylebench.pipeline.progress import LogBar, reporter

    class Tty(io.StringIO):
        def isatty(self) -> bool:
            return True

    assert isinstance(reporter(io.StringIO()).bar("x", 3, "turn"), LogBar)
    assert not isinstance(reporter(Tty()).bar("x", 3, "turn"), LogBar)


# -- the flags -------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("flags", "message"),
    [
        (["--workers", "3"], "--workers: only with --executor ray"),
        (["--ray-address", "auto"], "--ray-address: only with --executor ray"),
        (["--executor", "ray", "--jobs", "2"], "--jobs sets this process's threads"),
        (["--executor", "ray", "--protocol", "persistence"], "a persistence set is built here"),
        (["--per-cell", "500", "--dims", "pitch"], "--per-cell 500 needs more content"),
    ],
)
def test_flags_that_would_do_nothing_are_refused(tmp_path, capsys, flags, message):
    from stylebench.cli import main

    small = ["--synth", "espeak-ng", "--no-asr-check", "--langs", "en", "--per-cell", "1"]
    code = main(["build-dialogues", "--out", str(tmp_path / "s"), *small, *flags])
    err = capsys.readouterr().err
    assert code == 2 and message in err, err
    assert not (tmp_path / "s").exists()
