"""A reply spoken in another language than declared: the judge is told that the transcript it
reads is a translation, and requests without such a note keep their old keys."""

from __future__ import annotations

import json
from dataclasses import asdict

from stylebench.metrics.judges.base import JudgeRequest
from stylebench.metrics.judges.prompting import fence_data
from stylebench.records import Sample, TranscriptRecord, UserTurn
from stylebench.stages.judge import language_notes, plan_requests


def sample() -> Sample:
    turns = tuple(UserTurn(f"user turn {k}", f"u{k}.wav", 16000, "x") for k in (1, 2, 3))
    return Sample("s1", "v", "pitch", "intensify", "en", "v1", "c", turns)


def heard(spoken: str, p: float) -> dict:
    return {
        ("s1", k): TranscriptRecord(
            "s1",
            k,
            "ok",
            "fp",
            text=f"reply {k}",
            lang="en",
            spoken_lang=spoken if k == 2 else "en",
            declared_lang_p=p if k == 2 else 0.99,
        )
        for k in (1, 2, 3)
    }


def test_the_judge_is_told_when_a_reply_was_heard_in_another_language() -> None:
    s = sample()
    notes = language_notes([s], heard("zh", 0.001))
    assert list(notes) == [("s1", 2)] and "(zh)" in notes[("s1", 2)]
    inputs = {"s1": ("transcript", {1: "reply 1", 2: "reply 2", 3: "reply 3"})}
    plan = plan_requests([s], inputs, {"backend": "x"}, notes)
    srd, mrd = plan[("s1", 1)][1], plan[("s1", 0)][1]
    assert srd.notes == () and mrd.notes[1] and not mrd.notes[0] and not mrd.notes[2]
    data = json.loads(fence_data(mrd)[1])
    assert "note" in data["turns"][1] and "note" not in data["turns"][0]
    # judged on the model's text channel, the text shows its own language: no note
    plan_text = plan_requests([s], {"s1": ("text", inputs["s1"][1])}, {"backend": "x"}, notes)
    assert plan_text[("s1", 0)][1].notes == ()
    # an unsure language ID is no mismatch
    assert language_notes([s], heard("zh", 0.6)) == {}


def test_requests_without_notes_keep_their_keys() -> None:
    req = JudgeRequest("srd", "en", (("q", "a"),))
    old = {k: v for k, v in asdict(req).items() if k != "notes"}  # a request before notes existed
    assert req.fields() == old
    noted = JudgeRequest("srd", "en", (("q", "a"),), ("heard in zh",))
    assert noted.fields()["notes"] == ("heard in zh",)
