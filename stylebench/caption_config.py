"""The captioning probe's settings (stages caption and caption_judge; docs/captioning.md).

A sub-config of :class:`stylebench.config.RunConfig` (section ``caption``), in its own module so
that ``config.py`` stays small. Every field is a command-line flag of ``run`` and ``score``.
"""

from __future__ import annotations

from dataclasses import dataclass

from stylebench.options import check_choices, option

CAPTIONERS = ("none", "features", "openai", "transformers")
CAPTION_JUDGES = ("lexicon", "openai")


@dataclass(frozen=True)
class CaptionConfig:
    """Who describes each reply's speaking style, and who compares consecutive captions."""

    captioner: str = option(
        "none",
        "speaking-style captioner of every reply: none, features (offline, rule-based from the measured features: circular with acoustic VSP), openai (a served audio LLM), transformers (in process)",
        choices=CAPTIONERS,
    )
    caption_model: str | None = option(
        None, "captioner model: served model name, hub id or local path"
    )
    caption_url: str | None = option(
        None, "captioner's OpenAI-compatible base URL, e.g. http://127.0.0.1:8001/v1"
    )
    caption_prompt: str | None = option(
        None,
        "folder with your <dim>.txt caption instructions (pitch.txt, volume.txt, speed.txt, emotion.txt)",
        metavar="DIR",
    )
    caption_args: dict[str, str] = option(
        {},
        "captioner option, e.g. concurrency=4, timeout_s=120 (repeatable)",
        flag="--caption-arg",
        kind="kv",
    )
    caption_judge: str = option(
        "lexicon",
        "compares consecutive captions: lexicon (offline ordinal words, en + zh) or openai (an LLM)",
        choices=CAPTION_JUDGES,
    )
    caption_judge_model: str | None = option(None, "LLM caption judge: served model name")
    caption_judge_url: str | None = option(None, "LLM caption judge's OpenAI-compatible base URL")
    caption_judge_prompt: str | None = option(
        None, "your caption-comparison prompt file", metavar="PATH"
    )
    caption_judge_args: dict[str, str] = option(
        {},
        "caption judge option, e.g. concurrency=4 (repeatable)",
        flag="--caption-judge-arg",
        kind="kv",
    )

    def __post_init__(self) -> None:
        check_choices(self)
