"""Stand-in for mini-omni2's inference.py: ``StandInOmniInference`` under the official name.

``run_AT_batch_stream`` has the official signature (with ``save_path``), yields
``(audio_bytes, text)`` pairs, writes the reply to ``save_path`` at 24 kHz and returns the eight
token streams (text layer: ids 6..8, end-of-text 151936, padding). One step goes through the
stand-in ``litgpt.generate.base.next_token_image_batch``, with the one set of sampling settings
for every layer, as the official loop passes them.
"""

from __future__ import annotations

from pathlib import Path

import soundfile as sf
from litgpt.generate.base import next_token_image_batch
from standins import tone

CALLS: list[tuple] = []
_eot = 151936
_eoa = 4096


class _Tokenizer:
    def decode(self, ids):
        return " ".join(f"w{int(i)}" for i in ids)


class OmniInference:
    def __init__(self, ckpt_dir="./checkpoint", device="cuda:0"):
        CALLS.append(("init", ckpt_dir, device))
        self.text_tokenizer = _Tokenizer()

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
        save_path=None,
    ):
        assert Path(audio_path).exists(), f"audio file {audio_path} not found"
        CALLS.append(("run", audio_path, max_returned_tokens, temperature, top_k, top_p))
        # inference.py run_AT_batch_stream: one step of the official sampler, the same settings
        # for the audio and the text layers (inference.py:425-427 / 458-460)
        next_token_image_batch(
            None,
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
        yield (b"\x00\x00" * 10, "w6")
        streams = [[100 + i] * 20 for i in range(7)] + [[6, 7, 8, _eot, _eot + 1]]
        if save_path is not None:
            sf.write(save_path, tone(24000), 24000)
        return streams
