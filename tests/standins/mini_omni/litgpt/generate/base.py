"""Stand-in for mini-omni's litgpt/generate/base.py: ``sample`` and ``next_token_batch``.

As in the official file, ``next_token_batch`` passes the one set of keyword arguments it gets
to ``sample`` for each of the seven audio layers (logits 4160 wide: 4096 SNAC codes + 64
special tokens) and then for the text layer (152000 wide), looking ``sample`` up in this
module. The stand-in records what each ``sample`` call received and returns the argmax.
"""

from __future__ import annotations

import torch

CALLS: list[tuple] = []
AUDIO_WIDTH, TEXT_WIDTH = 4096 + 64, 151936 + 64


def sample(logits, temperature=1.0, top_k=None, top_p=1.0):
    CALLS.append(("sample", int(logits.shape[-1]), temperature, top_k, top_p))
    return torch.argmax(logits[0, -1], dim=-1, keepdim=True)


def next_token_batch(model, audio_features, input_ids, whisper_lens, task, input_pos, **kwargs):
    audio = [sample(torch.zeros(1, 1, AUDIO_WIDTH), **kwargs) for _ in range(7)]
    return audio, sample(torch.zeros(1, 1, TEXT_WIDTH), **kwargs)
