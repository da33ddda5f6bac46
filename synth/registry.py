"""Synthesiser registry (lazy names)."""

from stylebench.registry import LazyRegistry

SYNTHESIZERS = LazyRegistry.from_pairs(
    "synthesizer",
    [
        ("espeak-ng", "stylebench.synth.espeak:EspeakSynth"),
        ("cosyvoice2", "stylebench.synth.cosyvoice:CosyVoice2Synth"),
    ],
)
