"""Stand-in for Freeze-Omni bin/inference.py: audioEncoderProcessor, decoder and the system role.

``decoder`` appends 0.25 s of 24 kHz tone per sentence to ``wav`` (as the official helper appends
codec segments) and records the sentence text and the number of hidden states it was given.
"""

from __future__ import annotations

import torch
from standins import tone

CALLS: list[tuple] = []


class audioEncoderProcessor:  # noqa: N801 - the official class name
    def __init__(self, chunk_size=16):
        self.CHUNK = 160 * 16

    def get_chunk_size(self):
        return self.CHUNK

    def reset(self):
        CALLS.append(("reset",))

    def process(self, audio):
        assert audio.shape[0] == self.CHUNK
        return torch.zeros(1, 19, 80)


def decoder(
    cur_hidden_state,
    pipeline,
    cur_text,
    tts,
    codec_chunk_size,
    codec_padding_size,
    decoder_topk,
    wav,
):
    CALLS.append(
        (
            "decoder",
            cur_text,
            len(cur_hidden_state),
            codec_chunk_size,
            codec_padding_size,
            decoder_topk,
        )
    )
    wav.append(torch.from_numpy(tone(24000, seconds=0.25)).view(1, -1))


def inference(pipeline, audio_processor, tts, configs):
    return pipeline.speech_dialogue(None, stat="pre", role="STAND-IN system role.")
