"""The ``vllm`` judge: the missing-package route, and its batching against a named stand-in.

vLLM cannot be installed beside stylebench's torch/transformers (and needs a GPU), so the engine
is replaced by ``StandInVLLM``, a module with the two names the judge uses (``LLM``,
``SamplingParams``) that records what it is asked and answers scripted text.
"""

from __future__ import annotations

import sys
import types

import pytest

from stylebench.metrics.judges.base import JudgeError, JudgeRequest
from stylebench.metrics.judges.vllm_engine import VLLMJudge
from stylebench.registry import MissingExtraError

REQS = [
    JudgeRequest("srd", "en", (("What is the capital of Canada?", "Ottawa."),)),
    JudgeRequest("srd", "en", (("What is the capital of Canada?", "Green tea is nice."),)),
    JudgeRequest("srd", "zh", (("一年有多少天？", "三百六十五天。"),)),
]


def stand_in_vllm(replies: list[str], fail: bool = False) -> types.ModuleType:
    """Stand-in for the ``vllm`` package (NOT vLLM): records calls, returns ``replies``."""
    mod = types.ModuleType("vllm")
    mod.calls = []

    class SamplingParams:
        def __init__(self, **kw):
            self.kw = kw

    class LLM:
        def __init__(self, **kw):
            mod.calls.append(("LLM", kw))

        def chat(self, conversations, sampling_params, use_tqdm):
            mod.calls.append(("chat", conversations, sampling_params.kw))
            if fail:
                raise RuntimeError("CUDA out of memory (stand-in)")
            out = types.SimpleNamespace
            return [out(outputs=[out(text=r)]) for r in replies[: len(conversations)]]

    mod.LLM, mod.SamplingParams = LLM, SamplingParams
    return mod


def test_missing_vllm_names_the_http_route(monkeypatch):
    monkeypatch.setitem(sys.modules, "vllm", None)  # import vllm -> ImportError
    j = VLLMJudge("Qwen/Qwen3-4B-Instruct-2507")
    assert j.describe()["backend"] == "vllm"  # building and describing need no vllm
    with pytest.raises(
        MissingExtraError, match="vllm serve.*--judge openai.*separate environment"
    ) as ei:
        j.judge(REQS[0])
    assert "\n" not in str(ei.value)  # one line: the CLI prints it as is


def test_one_batched_chat_call_with_decode_settings(monkeypatch):
    replies = [
        '{"label": "relevant", "reason": "answers"}',
        '{"label": "irrelevant", "reason": "off topic"}',
        "I think it is relevant",
    ]
    fake = stand_in_vllm(replies)
    monkeypatch.setitem(sys.modules, "vllm", fake)
    j = VLLMJudge("some/model", max_new_tokens=64, seed=3, max_model_len=4096)
    out = j.judge_many(REQS)
    assert [v.label for v in out] == ["relevant", "irrelevant", "unparseable"]
    (kind, init), (_, convs, params) = fake.calls
    assert kind == "LLM" and init["model"] == "some/model" and init["max_model_len"] == 4096
    assert params == {"temperature": 0.0, "max_tokens": 64, "seed": 3}
    assert len(convs) == 3 and [m["role"] for m in convs[0]] == ["system", "user"]
    assert "Green tea is nice." in convs[1][1]["content"]
    assert j.judge(REQS[0]).label == "relevant"
    assert sum(c[0] == "LLM" for c in fake.calls) == 1  # the engine is built once


def test_engine_failure_becomes_judge_errors(monkeypatch):
    monkeypatch.setitem(sys.modules, "vllm", stand_in_vllm([], fail=True))
    out = VLLMJudge("m").judge_many(REQS[:2])
    assert all(isinstance(v, JudgeError) and "out of memory" in str(v) for v in out)
    with pytest.raises(JudgeError):
        VLLMJudge("m").judge(REQS[0])
