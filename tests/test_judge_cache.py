"""The sqlite verdict cache: keys, what is never cached, threads, and ``judge_all``."""

from __future__ import annotations

import threading

from stylebench.metrics.judges.base import JudgeError, JudgeRequest, Verdict
from stylebench.metrics.judges.cache import JudgeCache, cache_key, judge_all

REQ = JudgeRequest("srd", "en", (("What is the capital of Canada?", "Ottawa."),))
DESC = {
    "backend": "openai",
    "model": "m",
    "prompts": {"srd": {"sha256": "a"}},
    "decode": {"temperature": 0.0},
}


class CountingStandIn:
    """Stand-in judge (no model): scripted answers per user text, counting every call."""

    name = "counting-standin"

    def __init__(self, answers: dict[str, Verdict | JudgeError], desc: dict | None = None) -> None:
        self.answers = answers
        self.calls: list[str] = []
        self.desc = desc or DESC

    def describe(self) -> dict:
        return self.desc

    def judge(self, req: JudgeRequest) -> Verdict:
        self.calls.append(req.turns[0][1])
        ans = self.answers[req.turns[0][1]]
        if isinstance(ans, JudgeError):
            raise ans
        return ans


def test_key_names_backend_model_prompt_decode_and_inputs():
    base = cache_key(DESC, REQ)
    assert base == cache_key(dict(DESC), JudgeRequest("srd", "en", REQ.turns))
    changed = [
        {**DESC, "backend": "transformers"},
        {**DESC, "model": "other"},
        {**DESC, "prompts": {"srd": {"sha256": "b"}}},
        {**DESC, "decode": {"temperature": 0.7}},
    ]
    assert len({base, *(cache_key(d, REQ) for d in changed)}) == 5
    assert cache_key(DESC, JudgeRequest("srd", "zh", REQ.turns)) != base
    assert (
        cache_key(DESC, JudgeRequest("srd", "en", (("What is the capital of Canada?", "Ottawa!"),)))
        != base
    )


def test_only_parseable_verdicts_are_stored(tmp_path):
    cache = JudgeCache(tmp_path / "c.sqlite")
    assert cache.put("k1", Verdict("relevant", 0.9, "ok", "{...}"))
    assert cache.put("k2", Verdict("irrelevant", reason="off topic"))
    assert not cache.put("k3", Verdict("unparseable", reason="empty reply"))
    assert cache.get("k1") == Verdict("relevant", 0.9, "ok", "{...}")
    assert cache.get("k3") is None and len(cache) == 2
    cache.close()
    again = JudgeCache(tmp_path / "c.sqlite")  # persists across processes/opens
    assert again.get("k2").label == "irrelevant"


def test_concurrent_threads(tmp_path):
    cache = JudgeCache(tmp_path / "c.sqlite")
    errors = []

    def work(t: int) -> None:
        try:
            for i in range(50):
                cache.put(f"{t}-{i}", Verdict("relevant", reason=f"{t}-{i}"))
                assert cache.get(f"{t}-{i}").reason == f"{t}-{i}"
        except Exception as exc:  # noqa: BLE001 - surfaced below
            errors.append(exc)

    threads = [threading.Thread(target=work, args=(t,)) for t in range(8)]
    for th in threads:
        th.start()
    for th in threads:
        th.join()
    assert not errors and len(cache) == 400


def test_judge_all_asks_only_misses_and_never_caches_failures(tmp_path):
    reqs = [JudgeRequest("srd", "en", (("q", a),)) for a in ("good", "bad", "junk", "down")]
    answers = {
        "good": Verdict("relevant", reason="x"),
        "bad": Verdict("irrelevant", reason="y"),
        "junk": Verdict("unparseable", reason="not JSON"),
        "down": JudgeError("endpoint unreachable"),
    }
    judge = CountingStandIn(answers)
    cache = JudgeCache(tmp_path / "c.sqlite")
    out, hits = judge_all(judge, reqs, cache)
    assert [getattr(v, "label", "error") for v in out] == [
        "relevant",
        "irrelevant",
        "unparseable",
        "error",
    ]
    assert hits == set() and len(cache) == 2
    out2, hits2 = judge_all(judge, reqs, cache)
    assert hits2 == {0, 1} and judge.calls[4:] == ["junk", "down"]  # misses asked again
    assert out2[0] == out[0]
    other = CountingStandIn(answers, {**DESC, "model": "another"})
    _, hits3 = judge_all(other, reqs, cache)
    assert hits3 == set() and len(other.calls) == 4  # another judge never reuses these
    _, none = judge_all(CountingStandIn(answers), reqs, None)
    assert none == set()
