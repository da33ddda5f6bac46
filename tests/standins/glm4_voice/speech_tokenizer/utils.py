"""Stand-in for speech_tokenizer/utils.py: extract_speech_token(model, feature_extractor, utts).

Returns, per utterance, a known token list: 12.5 tokens per second of audio (the tokenizer's
rate), token values derived from the file name so that different files differ.
"""

from __future__ import annotations

import zlib
from pathlib import Path

import soundfile as sf

CALLS: list[tuple] = []


def extract_speech_token(model, feature_extractor, utts):
    CALLS.append(("extract_speech_token", list(utts)))
    out = []
    for utt in utts:
        info = sf.info(str(utt))
        n = max(1, int(info.frames / info.samplerate * 12.5))
        base = zlib.crc32(Path(utt).name.encode()) % 1000
        out.append([(base + i) % 16384 for i in range(n)])
    return out
