"""Captioner evaluation as StyleInstructCaps defines it (Chandra et al., 2026, sections 4.1-4.4),
with our own prompts (``prompts/meta_v1.txt``, ``hallucination_v1.txt``, ``ifa_v1.txt``) and an LLM
judge over the OpenAI-compatible API (:class:`SicJudge`, sharing the relevance judge's client).

- **meta-score**: the judge's 1-10 agreement of a caption with the reply's metadata, averaged.
  The metadata comes from what we know of each reply (:func:`reply_metadata`: dimension,
  instructed direction, turn, measured pitch/level/rate bands against turn 1, language, voice),
  not from an external corpus.
- **hallucination**: a 0-10 score (lower is better) and a severity ``Low``/``Medium``/``High``;
  reported as the mean score and the share of captions per severity (the paper's Low/Mid/High).
- **IFA**: the mean 1-10 instruction-following score and the IFA success rate, the share of
  captions judged ``Success`` (a ``Partial Success`` does not count).
- **format families** of unseen instructions (``prompts/unseen_v1.json``, ours): slot/tag
  schemas, strict JSON, lexical and length constraints, rating scales, personas; IFA per family.

Every judge reply is parsed strictly (exactly the JSON keys asked for, values in range); anything
else is ``unparseable``, counted and left out of the means, never scored 0.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from stylebench.metrics.captions.base import builtin_text
from stylebench.metrics.judges.base import JudgeError
from stylebench.metrics.judges.openai_api import OpenAIJudge
from stylebench.metrics.judges.prompting import fence_json, fill, parse_prompt, strict_object

SEVERITIES = ("Low", "Medium", "High")
OUTCOMES = ("Success", "Partial Success", "Failure")
TASKS = {
    "meta": (("score", "reason"), (1, 10)),
    "hallucination": (("score", "severity", "reason"), (0, 10)),
    "ifa": (("outcome", "score", "reason"), (1, 10)),
}


@dataclass(frozen=True)
class SicResult:
    """One judged caption; ``ok`` False means unparseable (``reason`` says why)."""

    task: str
    ok: bool
    score: int | None = None
    label: str = ""  # severity (hallucination) or outcome (ifa)
    reason: str = ""


def parse(task: str, text: str | None) -> SicResult:
    keys, (lo, hi) = TASKS[task]
    obj, why = strict_object(text, keys)
    if obj is None:
        return SicResult(task, False, reason=why)
    s = obj["score"]
    if isinstance(s, bool) or not isinstance(s, int) or not lo <= s <= hi:
        return SicResult(
            task, False, reason=f"score must be an integer in [{lo}, {hi}], got {str(s)[:20]!r}"
        )
    label = str(obj.get("severity", obj.get("outcome", "")))
    allowed = SEVERITIES if task == "hallucination" else OUTCOMES if task == "ifa" else ("",)
    if label not in allowed or not isinstance(obj["reason"], str):
        return SicResult(task, False, reason=f"label must be one of {allowed} and reason a string")
    return SicResult(task, True, s, label, obj["reason"][:500])


def reply_metadata(
    sample: Any, turn: int, values: Mapping[str, float], turn1: Mapping[str, float]
) -> dict[str, Any]:
    """What we know of one reply: the request and the measured bands against turn 1."""
    from stylebench.metrics.captions.features import caption_dims, phrase
    from stylebench.metrics.dims.base import dimension, jnd

    meta: dict[str, Any] = {
        "language": sample.lang,
        "voice": sample.voice,
        "turn": turn,
        "requested": "none (first turn)" if turn == 1 else f"{sample.direction} {sample.dim}",
    }
    if sample.emotion:
        meta["emotion"] = sample.emotion
    for d in caption_dims(sample.dim):
        a, b = turn1.get(d), values.get(d)
        if a and b and turn > 1:
            meta[f"measured_{d}"] = (
                phrase(d, dimension(d).change(a, b) / jnd(d), "en") + " (against turn 1)"
            )
    return meta


def unseen_instructions() -> dict[str, list[str]]:
    """Our unseen instructions by format family."""
    return json.loads(builtin_text("unseen_v1.json"))["families"]


class SicJudge(OpenAIJudge):
    """The three StyleInstructCaps judgements over an OpenAI-compatible endpoint."""

    what = "captioner-evaluation judge"

    def __init__(self, model: str | None = None, url: str | None = None, **kw: Any) -> None:
        super().__init__(model, url, **kw)
        self.task_prompts = {
            t: parse_prompt(builtin_text(f"{t}_v1.txt"), t, f"{t}_v1.txt", f"builtin:{t}_v1.txt")
            for t in TASKS
        }

    def messages_for(self, task: str, context: Mapping[str, Any], caption: str) -> Any:
        key = "instruction" if task == "ifa" else "metadata"
        begin, data, end = fence_json(
            {key: context if task != "ifa" else context["instruction"], "caption": caption},
            "EVALUATION",
        )
        return fill(self.task_prompts[task], {"fence_begin": begin, "data": data, "fence_end": end})

    def judge_task(
        self, task: str, items: Sequence[tuple[Mapping[str, Any], str]]
    ) -> list[SicResult | JudgeError]:
        replies = self.complete_many([self.messages_for(task, c, cap) for c, cap in items])
        return [r if isinstance(r, JudgeError) else parse(task, r) for r in replies]

    def describe(self) -> dict[str, Any]:
        d = super().describe()
        d["prompts"] = {
            t: {"name": p.name, "sha256": p.sha256} for t, p in self.task_prompts.items()
        }
        return d


def _mean(xs: list[int]) -> float | None:
    return round(sum(xs) / len(xs), 3) if xs else None


def summarise(results: Sequence[SicResult | JudgeError]) -> dict[str, Any]:
    """Means and shares over the parsed results of one task (failures and unparseable counted)."""
    ok = [r for r in results if isinstance(r, SicResult) and r.ok]
    out: dict[str, Any] = {
        "n": len(results),
        "n_ok": len(ok),
        "n_unparseable": sum(isinstance(r, SicResult) and not r.ok for r in results),
        "n_error": sum(isinstance(r, JudgeError) for r in results),
        "mean_score": _mean([r.score for r in ok if r.score is not None]),
    }
    task = ok[0].task if ok else ""
    if task == "hallucination":
        out["severity_pct"] = {
            s: round(100.0 * sum(r.label == s for r in ok) / len(ok), 2) for s in SEVERITIES
        }
    if task == "ifa":
        out["success_rate"] = round(100.0 * sum(r.label == "Success" for r in ok) / len(ok), 2)
    return out


def ifa_by_family(
    results: Mapping[str, Sequence[SicResult | JudgeError]],
) -> dict[str, dict[str, Any]]:
    """IFA summary per format family (``{family: results}``)."""
    return {fam: summarise(rs) for fam, rs in sorted(results.items())}
