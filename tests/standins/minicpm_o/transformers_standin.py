"""Stand-in for the transformers entry points MiniCPM-o 2.6 is loaded through (remote code).

``StandInMiniCPMO`` has the official ``init_tts``, ``get_sys_prompt`` and ``chat`` signatures
(MiniCPM-o-2_6 modeling_minicpmo.py). ``chat`` checks messages as the official one does: the
first role is user or system, content items are str or numpy audio; with generate_audio it
writes a 24 kHz tone to ``output_audio_path`` and returns an object with ``text``,
``audio_wav`` and ``sampling_rate``.
"""

from __future__ import annotations

import copy
from types import SimpleNamespace

import numpy as np
import soundfile as sf
from standins import tone

CALLS: list[tuple] = []


class _TTS:
    def float(self):
        CALLS.append(("tts.float",))
        return self


class StandInMiniCPMO:
    def __init__(self):
        self.tts = None

    def eval(self):
        return self

    def to(self, device):
        CALLS.append(("to", device))
        return self

    def init_tts(self):
        CALLS.append(("init_tts",))
        self.tts = _TTS()

    def get_sys_prompt(self, ref_audio=None, mode="default", language="zh"):
        CALLS.append(
            ("get_sys_prompt", None if ref_audio is None else ref_audio.shape, mode, language)
        )
        if ref_audio is not None:
            assert isinstance(ref_audio, np.ndarray)
            return {
                "role": "user",
                "content": ["STAND-IN clone prefix", ref_audio, f"STAND-IN {mode}"],
            }
        return {"role": "user", "content": ["STAND-IN default voice", f"STAND-IN {mode}"]}

    def chat(
        self,
        image=None,
        msgs=None,
        tokenizer=None,
        max_new_tokens=2048,
        sampling=True,
        use_tts_template=False,
        generate_audio=False,
        output_audio_path=None,
        **kwargs,
    ):
        assert msgs[0]["role"] in ("user", "system")
        for m in msgs:
            assert m["role"] in ("system", "user", "assistant")
            content = [m["content"]] if isinstance(m["content"], str) else m["content"]
            for c in content:
                assert isinstance(c, (str, np.ndarray)), type(c)
                if isinstance(c, np.ndarray):
                    assert c.ndim == 1 and c.dtype == np.float32
        CALLS.append(
            (
                "chat",
                copy.deepcopy(msgs),
                max_new_tokens,
                sampling,
                use_tts_template,
                generate_audio,
                output_audio_path,
                dict(kwargs),
            )
        )
        wav = tone(24000)
        if generate_audio and output_audio_path:
            sf.write(output_audio_path, wav, 24000)
        n = len([c for c in CALLS if c[0] == "chat"])
        return SimpleNamespace(text=f"stand-in answer {n}", audio_wav=wav, sampling_rate=24000)


class AutoModel:
    @staticmethod
    def from_pretrained(path, trust_remote_code=False, attn_implementation=None, torch_dtype=None):
        assert trust_remote_code
        CALLS.append(("AutoModel", path, attn_implementation, str(torch_dtype)))
        return StandInMiniCPMO()


class AutoTokenizer:
    @staticmethod
    def from_pretrained(path, trust_remote_code=False):
        assert trust_remote_code
        return object()
