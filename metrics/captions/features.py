"""``features``: an offline, rule-based captioner built from the reply's measured features.

It writes a plain-language description of the reply's pitch, loudness and pace relative to the
speaker's own turn 1 (rule-based tagging from measurements, as caption data pipelines such as
ParaSpeechCaps tag pitch and rate). It needs no model and runs anywhere, which makes the probe
runnable offline; but it is built from the same measurements as the acoustic VSP, so its caption
VSP agrees with the acoustic VSP by construction (**circular**): every report that uses it says so.

Bands, on the change against turn 1 in just-noticeable units of each dimension (1 st, 1 dB, 5 %;
:func:`stylebench.metrics.dims.base.jnd`): below 1 "about the same", below 2.5 "slightly",
below 5 "clearly", below 9 "much", else "very much". Turn 1 is the reference ("as usual").
Captions are English or Mandarin, after the sample's language.
"""

from __future__ import annotations

from typing import Any

from stylebench.metrics.captions.base import CaptionRequest

VERSION = "1"
ACOUSTIC = ("pitch", "volume", "speed")
BANDS = (1.0, 2.5, 5.0, 9.0)  # JND multiples: same | slightly | clearly | much | very much
EN_WORDS = {
    "pitch": ("the pitch", "higher", "lower"),
    "volume": ("the loudness", "louder", "quieter"),
    "speed": ("the pace", "faster", "slower"),
}
EN_DEGREE = ("", "slightly ", "clearly ", "much ", "very much ")
ZH_WORDS = {
    "pitch": ("音高", "高", "低"),
    "volume": ("音量", "大", "小"),
    "speed": ("语速", "快", "慢"),
}
ZH_DEGREE = ("", "略{}", "明显{}", "{}得多", "非常{}")


def band(change_jnd: float) -> int:
    """0 (about the same) to 4 (very much) for a change of ``change_jnd`` JND units."""
    return sum(abs(change_jnd) >= b for b in BANDS)


def phrase(dim: str, change_jnd: float, lang: str) -> str:
    """One clause for one dimension, e.g. "the pitch is slightly higher" / "音高略高"."""
    level = band(change_jnd)
    if lang == "zh":
        noun, up, down = ZH_WORDS[dim]
        return (
            f"{noun}差不多"
            if level == 0
            else noun + ZH_DEGREE[level].format(up if change_jnd > 0 else down)
        )
    noun, up, down = EN_WORDS[dim]
    if level == 0:
        return f"{noun} is about the same"
    return f"{noun} is {EN_DEGREE[level]}{up if change_jnd > 0 else down}"


class FeaturesCaptioner:
    """Rule-based captions from ``CaptionRequest.values`` (this turn's per-dim scores) and
    ``turn1_values`` (turn 1's), both on each dimension's linear scale."""

    name = "features"

    def __init__(self, model: str | None = None) -> None:
        if model:
            raise ValueError("the features captioner takes no --caption-model")

    def caption(self, req: CaptionRequest) -> str:
        from stylebench.metrics.dims.base import dimension, jnd

        zh = req.lang == "zh"
        if req.turn == 1:
            return (
                "这是参考轮：音高如常；音量如常；语速如常。"
                if zh
                else (
                    "Reference turn: the pitch is as usual; the loudness is as usual; the pace is as usual."
                )
            )
        parts = []
        for d in ACOUSTIC:
            a, b = req.turn1_values.get(d), req.values.get(d)
            if a is None or b is None or a <= 0 or b <= 0:
                continue  # not measured: the caption says nothing about it
            parts.append(phrase(d, dimension(d).change(a, b) / jnd(d), req.lang))
        if not parts:
            raise ValueError("no pitch, level or rate measured for this reply or for turn 1")
        if zh:
            return "与第一轮相比，" + "；".join(parts) + "。"
        return "Compared with the speaker's first turn, " + "; ".join(parts) + "."

    def describe(self) -> dict[str, Any]:
        return {
            "backend": self.name,
            "model": f"rules-v{VERSION}",
            "bands_jnd": list(BANDS),
            "circular": True,
        }
