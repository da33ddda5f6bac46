"""An empty reply is answered ``irrelevant`` once, for every backend, without asking it.

``unparseable`` is for judge replies that cannot be parsed; a reply (transcript) that is empty
says nothing, so it answers nothing. The LLM backends here point at nothing that could answer
(a closed port, packages blocked): if any of them were asked, the test would see an error.
"""

from __future__ import annotations

import sys

import pytest

from stylebench.metrics.judges.base import JudgeRequest, Verdict, empty_reply_verdict
from stylebench.metrics.judges.cache import JudgeCache, judge_all
from stylebench.metrics.judges.hf import TransformersJudge
from stylebench.metrics.judges.openai_api import OpenAIJudge
from stylebench.metrics.judges.vllm_engine import VLLMJudge
from stylebench.scoring.relevance import relevance_score

Q = ("What is the capital of Canada?", "Louder, please.", "Now slower.")
SRD_EMPTY = JudgeRequest("srd", "en", ((Q[0], ""),))
SRD_BLANK = JudgeRequest("srd", "en", ((Q[0], " \n\t"),))
MRD_EMPTY_T1 = JudgeRequest("mrd", "zh", ((Q[0], ""), (Q[1], "渥太华。"), (Q[2], "渥太华。")))
MRD_EMPTY_T3 = JudgeRequest("mrd", "en", ((Q[0], "Ottawa."), (Q[1], "OTTAWA."), (Q[2], "")))
EMPTY = [SRD_EMPTY, SRD_BLANK, MRD_EMPTY_T1, MRD_EMPTY_T3]


class NeverAskedStandIn:
    """Stand-in judge (no model) that fails the test when it is asked anything."""

    name = "never-asked-standin"

    def describe(self) -> dict:
        return {"backend": "standin", "model": "none"}

    def judge(self, req: JudgeRequest) -> Verdict:
        raise AssertionError(f"the backend was asked about an empty reply: {req}")


def test_the_shared_rule():
    assert empty_reply_verdict(JudgeRequest("srd", "en", ((Q[0], "Ottawa."),))) is None
    v = empty_reply_verdict(SRD_EMPTY)
    assert v == Verdict("irrelevant", 0.0, "empty reply")
    assert empty_reply_verdict(MRD_EMPTY_T1).reason == "empty reply (turn 1)"
    assert empty_reply_verdict(MRD_EMPTY_T3).label == "irrelevant"


def test_judge_all_gives_it_without_asking_or_caching(tmp_path):
    cache = JudgeCache(tmp_path / "c.sqlite")
    out, hits = judge_all(NeverAskedStandIn(), EMPTY, cache)
    assert [v.label for v in out] == ["irrelevant"] * 4
    assert all(v.reason.startswith("empty reply") for v in out)
    assert hits == set() and len(cache) == 0  # given, not cached and not a cache hit
    out, _ = judge_all(NeverAskedStandIn(), EMPTY, None)
    assert [v.label for v in out] == ["irrelevant"] * 4


def _llm_backends(monkeypatch: pytest.MonkeyPatch) -> list:
    for blocked in ("vllm", "transformers", "torch"):  # asking them would raise ImportError
        monkeypatch.setitem(sys.modules, blocked, None)
    return [
        OpenAIJudge("m", "http://127.0.0.1:9", retries=0, timeout_s=2.0),  # port 9: nobody
        VLLMJudge("m"),
        TransformersJudge("/nonexistent/model"),
    ]


def test_every_llm_backend_gets_the_same_verdict(monkeypatch):
    for judge in _llm_backends(monkeypatch):
        out, _ = judge_all(judge, EMPTY)
        assert all(isinstance(v, Verdict) for v in out), (judge.name, out)
        assert [(v.label, v.reason[:11]) for v in out] == [("irrelevant", "empty reply")] * 4


def test_relevance_counts_an_empty_reply_as_judged_irrelevant_not_unparseable():
    ok = JudgeRequest("srd", "en", ((Q[0], "Ottawa."),))

    class OttawaStandIn(NeverAskedStandIn):
        def judge(self, req: JudgeRequest) -> Verdict:
            assert req == ok
            return Verdict("relevant", reason="names the capital")

    out, _ = judge_all(OttawaStandIn(), [ok, SRD_EMPTY])
    score = relevance_score("srd", {"a": out[0].label, "b": out[1].label}, n_boot=10)
    assert (score.n_judged, score.n_relevant, score.n_unparseable) == (2, 1, 0)
    assert score.rate == 50.0
