"""Stand-in for llama_omni2/inference/run_cosy2_decoder.py: SpeechDecoder and load_wav."""

from __future__ import annotations

from pathlib import Path

import torch
from standins import tone

CALLS: list[tuple] = []


def load_wav(path, target_sr):
    return f"prompt:{Path(path).name}@{target_sr}"


class SpeechDecoder:
    def __init__(
        self,
        model_dir,
        device="cuda",
        hop_len=None,
        load_jit=False,
        load_trt=False,
        load_onnx=False,
    ):
        CALLS.append(("init", model_dir, device))

    def entry(self, generated_tokens, prompt_speech_16k, stream=False, speed=1.0):
        CALLS.append(("entry", generated_tokens.tolist(), prompt_speech_16k, stream))
        return torch.from_numpy(tone(24000)).view(1, -1)
