"""The run store: append-only records, fingerprint-filtered reads, torn lines, the folder lock."""

from __future__ import annotations

import json
import multiprocessing as mp
from dataclasses import dataclass
from typing import ClassVar

import pytest

from stylebench.pipeline.stage import Unit, run_stage
from stylebench.records import FeatureRecord, RecordError, RecordKind, RespondRecord, Status
from stylebench.store import RunFolderBusy, RunStore


def rec(sid: str, turn: int, status: str = "ok", fp: str = "f", text: str = "") -> RespondRecord:
    return RespondRecord(
        sid, turn, status, fp, text=text, error="boom" if status == "error" else ""
    )


def want(*keys, fp="f"):
    return {k: fp for k in keys}


def test_append_and_latest_wins(tmp_path):
    st = RunStore(tmp_path)
    st.append("respond", rec("a", 1, "error"))
    st.append("respond", rec("a", 1, "ok", text="second"))
    st.append("respond", rec("a", 2, "ok"))
    got = st.load("respond", want(("a", 1), ("a", 2)))
    assert got[("a", 1)].text == "second" and got[("a", 1)].status == "ok"
    assert len(got) == 2
    text = st.stage_path("respond").read_text(encoding="utf-8")
    assert text.count("\n") == 3 and "\n\n" not in text  # one line per record, nothing else


def test_audio_paths_stay_inside_the_run_folder(tmp_path):
    st = RunStore(tmp_path)
    assert st.audio_path("a/../b c", 2) == tmp_path / "audio" / "a_.._b_c_t2.wav"
    assert st.audio_path("s", 1, "-x") == tmp_path / "audio" / "s_t1-x.wav"


def test_ok_is_not_superseded_by_later_error_of_same_fp(tmp_path):
    st = RunStore(tmp_path)
    st.append("respond", rec("a", 1, "ok", text="keep"))
    st.append("respond", rec("a", 1, "error"))
    assert st.load("respond", want(("a", 1)))[("a", 1)].text == "keep"


def test_torn_last_line_is_dropped_and_next_append_is_clean(tmp_path):
    st = RunStore(tmp_path)
    st.append("respond", rec("a", 1))
    with open(st.stage_path("respond"), "a", encoding="utf-8") as fh:
        fh.write('{"sample_id": "a", "turn": 2, "status": "o')  # killed mid-write
    keys = want(("a", 1), ("a", 2), ("a", 3))
    assert set(st.load("respond", keys)) == {("a", 1)}
    st.append("respond", rec("a", 3))
    lines = st.stage_path("respond").read_text().splitlines()
    assert json.loads(lines[-1])["turn"] == 3
    assert set(st.load("respond", keys)) == {("a", 1), ("a", 3)}


def test_every_read_is_filtered_by_the_expected_fingerprint(tmp_path):
    st = RunStore(tmp_path)
    st.append("respond", rec("a", 1, fp="old", text="other configuration"))
    st.append("respond", rec("a", 2, fp="new"))
    assert set(st.load("respond", {("a", 1): "new", ("a", 2): "new"})) == {("a", 2)}
    assert st.load("respond", {("a", 1): "old"})[("a", 1)].text == "other configuration"
    # a newer error of another configuration never hides, nor is hidden by, this one's ok
    st.append("respond", rec("a", 2, "error", fp="other"))
    assert st.load("respond", {("a", 2): "new"})[("a", 2)].status == "ok"
    assert st.index("respond", [("a", 2)]).keys() == {(("a", 2), "new"), (("a", 2), "other")}
    with pytest.raises(TypeError):
        st.load("respond")  # there is no unfiltered read


def test_hostile_values_are_refused_before_they_are_stored(tmp_path):
    st = RunStore(tmp_path)
    with pytest.raises(RecordError, match="must be str"):
        st.append("respond", RespondRecord("a", 1, "ok", "f", text=12345))  # type: ignore[arg-type]
    with pytest.raises(RecordError, match="finite"):
        st.append("features", FeatureRecord("a", 1, "ok", "f", values={"spm": float("nan")}))
    assert not st.stage_path("respond").exists() and not st.stage_path("features").exists()


def test_a_stored_record_that_no_longer_loads_becomes_an_error_record(tmp_path):
    st = RunStore(tmp_path)
    path = st.stage_path("respond")
    path.write_text(
        '{"sample_id": "a", "turn": 1, "status": "ok", "fp": "f", "text": 42}\n'
        '{"sample_id": "a", "turn": 2, "status": "ok", "fp": "f", "text": "x", "elapsed_s": NaN}\n'
        '{"sample_id": "a", "turn": 3, "status": "ok", "fp": "f", "text": "fine"}\n',
        encoding="utf-8",
    )
    got = st.load("respond", want(("a", 1), ("a", 2), ("a", 3)))
    assert got[("a", 1)].status == "error" and "text must be str" in got[("a", 1)].error
    assert got[("a", 2)].status == "error" and "finite" in got[("a", 2)].error
    assert got[("a", 3)].status == "ok"


def test_manifest_roundtrip_and_missing(tmp_path):
    st = RunStore(tmp_path / "run")
    with pytest.raises(FileNotFoundError, match="stylebench run"):
        st.read_manifest()
    st.write_manifest({"a": 1})
    assert st.read_manifest() == {"a": 1}


def _hold(root, ready, release):
    with RunStore(root).lock("stylebench run --model x"):
        ready.set()
        release.wait(30)


def test_a_second_process_is_refused_naming_the_holder(tmp_path):
    ctx = mp.get_context("spawn")
    ready, release = ctx.Event(), ctx.Event()
    holder = ctx.Process(target=_hold, args=(tmp_path, ready, release))
    holder.start()
    try:
        assert ready.wait(60)
        with pytest.raises(RunFolderBusy, match=rf"pid {holder.pid} .*stylebench run --model x"):
            with RunStore(tmp_path).lock("stylebench run"):
                pass
    finally:
        release.set()
        holder.join(30)
    with RunStore(tmp_path).lock("stylebench run"):  # released when the holder exits
        pass
    with RunStore(tmp_path / "new" / "run").lock("stylebench run"):  # makes the folder
        assert (tmp_path / "new" / "run" / ".lock").is_file()


def test_reading_skips_what_is_not_a_record_and_goes_on(tmp_path):
    st = RunStore(tmp_path)
    st.append("respond", rec("a", 1, "ok", text="keep"))
    st.append("respond", rec("a", 1, "error"))  # ignored: ok of the same fingerprint stays
    with open(st.stage_path("respond"), "a", encoding="utf-8") as fh:
        fh.write(
            '\n[1, 2]\n7\n{"sample_id": "a"}\n{"sample_id": "a", "turn": "x", "status": "ok", "fp": "f"}\n\n'
        )
    st.append("respond", rec("b", 2, "ok", text="after the junk"))
    got = st.load("respond", want(("a", 0), ("a", 1), ("a", 2), ("b", 2)))
    assert set(got) == {("a", 1), ("b", 2)}  # a malformed turn matches no key, not even turn 0
    assert got[("a", 1)].text == "keep" and got[("b", 2)].text == "after the junk"


def test_records_and_folders_are_frozen_and_created(tmp_path):
    import dataclasses

    from stylebench.scoring.cells import Thresholds, TurnScore

    for obj, name in (
        (rec("a", 1), "text"),
        (Thresholds(), "pitch_st"),
        (TurnScore("s", "pitch", "intensify", "en", 1, 100.0), "value"),
    ):
        with pytest.raises(dataclasses.FrozenInstanceError):
            setattr(obj, name, None)
    st = RunStore(tmp_path / "out" / "deep" / "run")
    st.write_manifest({"a": "é"})
    assert st.read_manifest() == {"a": "é"}


# -- a stage's own record kind, declared outside stylebench.records ---------------------------


@dataclass(frozen=True)
class TallyRecord:
    """A record type no built-in stage has (as a stage module would declare it)."""

    sample_id: str
    turn: int
    status: Status
    fp: str
    count: int = 0
    error: str = ""
    stage: str = "tally"
    elapsed_s: float = 0.0


TALLY = RecordKind("tally", TallyRecord)


class TallyStage:
    records: ClassVar[RecordKind[TallyRecord]] = TALLY
    name: ClassVar[str] = TALLY.name
    errors: ClassVar[tuple[type[BaseException], ...]] = (ValueError,)
    unit: ClassVar[str] = "reply"

    def __init__(self, fail: bool) -> None:
        self.fail, self.computed = fail, []

    def plan(self) -> list[Unit]:
        return [Unit(f"s/{t}", {("s", t): f"fp{t}"}) for t in (1, 2)]

    def compute(self, unit, done):
        ((key, fp),) = unit.fps.items()
        self.computed.append(key)
        if self.fail and key[1] == 2:
            raise ValueError("no count for turn 2")
        yield TallyRecord(*key, "ok", fp, count=10 * key[1])


def test_a_stage_with_its_own_record_kind_runs_stores_and_reloads_typed(tmp_path):
    st = RunStore(tmp_path)
    first = run_stage(st, TallyStage(fail=True))
    assert first.counts == {"ok": 1, "error": 1, "skipped": 0}
    err = first.records[("s", 2)]
    assert type(err) is TallyRecord and err.status == "error" and "no count" in err.error
    again = TallyStage(fail=False)
    second = run_stage(st, again)
    assert again.computed == [("s", 2)]  # the ok record is reused, the error retried
    loaded = st.load(TALLY, {("s", 1): "fp1", ("s", 2): "fp2"})
    assert {k: (type(r), r.count) for k, r in loaded.items()} == {
        ("s", 1): (TallyRecord, 10),
        ("s", 2): (TallyRecord, 20),
    }
    assert second.records == loaded
    # a stored line that no longer makes a record becomes an error record of the stage's type
    with open(st.stage_path("tally"), "a", encoding="utf-8") as fh:
        fh.write(
            json.dumps({"sample_id": "s", "turn": 3, "fp": "fp3", "status": "ok", "count": "x"})
        )
        fh.write("\n")
    bad = st.load(TALLY, {("s", 3): "fp3"})[("s", 3)]
    assert type(bad) is TallyRecord and bad.status == "error" and "unreadable" in bad.error
    # a name alone finds only the built-in kinds, and says what to pass instead
    with pytest.raises(
        KeyError, match="no built-in record kind 'tally'; pass the stage's RecordKind"
    ):
        st.load("tally", {("s", 1): "fp1"})


def test_spoiled_nested_values_are_refused_on_read_and_write(tmp_path):
    """Empty containers and feature values of finite numbers by text skip the JSON round trip
    (read 43K times a run): every other nested value is still checked."""
    st = RunStore(tmp_path)
    st.stage_path("features").write_text(
        '{"sample_id": "a", "turn": 1, "status": "ok", "fp": "f", "values": {"x": NaN}}\n'
        '{"sample_id": "a", "turn": 2, "status": "ok", "fp": "f", "values": {"x": {"y": 1}}}\n'
        '{"sample_id": "a", "turn": 3, "status": "ok", "fp": "f", "values": {"x": 1.5}, '
        '"raw": {"k": Infinity}}\n'
        '{"sample_id": "a", "turn": 4, "status": "ok", "fp": "f", "raw": {"k": [1e999]}}\n'
        '{"sample_id": "a", "turn": 5, "status": "ok", "fp": "f", "raw": {"k": 1'
        + "0"
        * 300
        + "e9}}\n"
        '{"sample_id": "b", "turn": 1, "status": "ok", "fp": "f", "values": {"x": 1.5, "n": 2}, '
        '"flags": [], "raw": {}}\n',
        encoding="utf-8",
    )
    st.stage_path("transcribe").write_text(
        '{"sample_id": "a", "turn": 1, "status": "ok", "fp": "f", "words": [["w", NaN, 1.0]]}\n',
        encoding="utf-8",
    )
    keys = want(("a", 1), ("a", 2), ("a", 3), ("a", 4), ("a", 5), ("b", 1))
    got = st.load("features", keys)
    assert "values['x'] must be finite" in got[("a", 1)].error
    assert "values['x'] must be a number, got dict" in got[("a", 2)].error
    for turn in (3, 4, 5):  # Infinity, and numbers past the float range (json.loads: inf)
        assert "raw is not plain JSON" in got[("a", turn)].error
    assert got[("b", 1)].status == "ok" and got[("b", 1)].values == {"x": 1.5, "n": 2}
    heard = st.load("transcribe", want(("a", 1)))[("a", 1)]
    assert heard.status == "error" and "words is not plain JSON" in heard.error
    with pytest.raises(RecordError, match="values is not plain JSON"):
        st.append("features", FeatureRecord("a", 1, "ok", "f", values={(1, 2): 1.0}))  # type: ignore[dict-item]
