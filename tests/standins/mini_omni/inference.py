"""Stand-in for mini-omni's inference.py: ``StandInOmniInference`` under the official name.

``run_AT_batch_stream`` has the official signature, yields int16 audio chunks as bytes while it
"streams", and returns the eight token streams: seven SNAC layers of 20 codes, then the text
layer (ids 1..5, the end-of-text id 151936, padding).
One step goes through the stand-in ``litgpt.generate.base.next_token_batch``, with the one set of
sampling settings for every layer, as the official loop passes them.
"""

from __future__ import annotations

from pathlib import Path

import torch
from litgpt.generate.base import next_token_batch
from standins import tone

CALLS: list[tuple] = []
_eot = 151936
_eoa = 4096


class _Tokenizer:
    def decode(self, ids):
        return " ".join(f"w{int(i)}" for i in ids)


class _Snac:
    def decode(self, codes):
        CALLS.append(("snac.decode", [tuple(c.shape) for c in codes]))
        return torch.from_numpy(tone(24000)).view(1, 1, -1)


class OmniInference:
    def __init__(self, ckpt_dir="./checkpoint", device="cuda:0"):
        CALLS.append(("init", ckpt_dir, device))
        self.text_tokenizer = _Tokenizer()
        self.snacmodel = _Snac()

    def run_AT_batch_stream(
        self,
        audio_path,
        stream_stride=4,
        max_returned_tokens=2048,
        temperature=0.9,
        top_k=1,
        top_p=1.0,
        eos_id_a=_eoa,
        eos_id_t=_eot,
    ):
        assert Path(audio_path).exists(), f"audio file {audio_path} not found"
        CALLS.append(("run", audio_path, max_returned_tokens, temperature, top_k, top_p))
        # inference.py run_AT_batch_stream: one step of the official sampler, the same settings
        # for the audio and the text layers (inference.py:425-427 / 458-460)
        next_token_batch(
            None,
            None,
            [],
            None,
            None,
            input_pos=None,
            temperature=temperature,
            top_k=top_k,
            top_p=top_p,
        )
        yield b"\x00\x00" * 10
        streams = [[100 + i] * 20 for i in range(7)] + [[1, 2, 3, 4, 5, _eot, _eot + 1]]
        return streams
