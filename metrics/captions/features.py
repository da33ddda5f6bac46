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
BANDS = (1.0, 2.5, 5.0, 9.0)  # JND multiples: same | slightly | clearly | much | very much
EN_DEGREE = ("", "slightly ", "clearly ", "much ", "very much ")
ZH_DEGREE = ("", "略{}", "明显{}", "{}得多", "非常{}")


def caption_dims(dim: str = "") -> tuple[str, ...]:
    """The dims a rule-based caption describes, in caption order (pitch, level, rate): the acoustic
    dims that ``--dim all`` runs, plus ``dim`` (a sample's own) when it has caption words."""
    from stylebench.metrics.dims.base import in_order

    return tuple(
        d.name for d in in_order() if d.caption_en and d.acoustic and (d.in_all or d.name == dim)
    )


def band(change_jnd: float) -> int:
    """0 (about the same) to 4 (very much) for a change of ``change_jnd`` JND units."""
    return sum(abs(change_jnd) >= b for b in BANDS)


def phrase(dim: str, change_jnd: float, lang: str) -> str:
    """One clause for one dimension, e.g. "the pitch is slightly higher" / "音高略高"."""
    from stylebench.metrics.dims.base import dimension

    level = band(change_jnd)
    d = dimension(dim)
    if d.caption_en is None or d.caption_zh is None:
        raise ValueError(f"the rule-based captioner has no words for {dim}")
    if lang == "zh":
        noun, up, down = d.caption_zh
        return (
            f"{noun}差不多"
            if level == 0
            else noun + ZH_DEGREE[level].format(up if change_jnd > 0 else down)
        )
    noun, up, down = d.caption_en
    if level == 0:
        return f"{noun} is about the same"
    return f"{noun} is {EN_DEGREE[level]}{up if change_jnd > 0 else down}"


class FeaturesCaptioner:
    """Rule-based captions from ``CaptionRequest.values`` (this turn's per-dim scores) and
    ``turn1_values`` (turn 1's), both on each dimension's linear scale."""

    name = "features"

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
        for d in caption_dims(req.dim):
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
