"""Speech recognition: transcript types and flags (``transcript``), the Whisper backends
(``backends``, registered below by name) and the offline model folders they load (``offline``)."""

from stylebench.registry import LazyRegistry

#: ``--asr``: backend name -> its class (imported on first use)
ASR_BACKENDS = LazyRegistry.from_pairs(
    "ASR backend",
    [
        ("faster-whisper", "stylebench.metrics.asr.backends:FasterWhisperASR"),
        ("openai-whisper", "stylebench.metrics.asr.backends:OpenAIWhisperASR"),
    ],
)
