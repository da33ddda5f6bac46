from __future__ import annotations

import json

from stylebench.records import RespondRecord
from stylebench.store import RunStore


def rec(sid: str, turn: int, status: str = "ok", fp: str = "f", text: str = "") -> RespondRecord:
    return RespondRecord(
        sid, turn, status, fp, text=text, error="boom" if status == "error" else ""
    )


def test_append_and_latest_wins(tmp_path):
    st = RunStore(tmp_path)
    st.append("respond", rec("a", 1, "error"))
    st.append("respond", rec("a", 1, "ok", text="second"))
    st.append("respond", rec("a", 2, "ok"))
    got = st.load("respond")
    assert got[("a", 1)].text == "second" and got[("a", 1)].status == "ok"
    assert len(got) == 2


def test_ok_is_not_superseded_by_later_error_of_same_fp(tmp_path):
    st = RunStore(tmp_path)
    st.append("respond", rec("a", 1, "ok", text="keep"))
    st.append("respond", rec("a", 1, "error"))
    assert st.load("respond")[("a", 1)].text == "keep"


def test_torn_last_line_is_dropped_and_next_append_is_clean(tmp_path):
    st = RunStore(tmp_path)
    st.append("respond", rec("a", 1))
    with open(st.stage_path("respond"), "a", encoding="utf-8") as fh:
        fh.write('{"sample_id": "a", "turn": 2, "status": "o')  # killed mid-write
    assert set(st.load("respond")) == {("a", 1)}
    st.append("respond", rec("a", 3))
    lines = st.stage_path("respond").read_text().splitlines()
    assert json.loads(lines[-1])["turn"] == 3
    assert set(st.load("respond")) == {("a", 1), ("a", 3)}


def test_fingerprint_filter(tmp_path):
    st = RunStore(tmp_path)
    st.append("respond", rec("a", 1, fp="old"))
    st.append("respond", rec("a", 2, fp="new"))
    assert set(st.load("respond", "new")) == {("a", 2)}
    assert set(st.load("respond", {("a", 1): "old"})) == {("a", 1)}


def test_manifest_roundtrip_and_missing(tmp_path):
    st = RunStore(tmp_path / "run")
    try:
        st.read_manifest()
    except FileNotFoundError as exc:
        assert "stylebench run" in str(exc)
    else:
        raise AssertionError("expected FileNotFoundError")
    st.write_manifest({"a": 1})
    assert st.read_manifest() == {"a": 1}
