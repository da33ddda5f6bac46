"""Stand-in for GLM-4-Voice's flow_inference.py: AudioDecoder and its token2wav.

token2wav returns 2 mel frames and 512 samples of 22.05 kHz tone per token (the real decoder's
hop is about that size), and records what it was given.
"""

from __future__ import annotations

import torch
from standins import tone

CALLS: list[dict] = []


class AudioDecoder:
    """StandInAudioDecoder."""

    def __init__(self, config_path, flow_ckpt_path, hift_ckpt_path, device="cuda"):
        CALLS.append({"init": (config_path, flow_ckpt_path, hift_ckpt_path, device)})

    def token2wav(
        self,
        token,
        uuid,
        prompt_token=None,
        prompt_feat=None,
        embedding=None,
        finalize=False,
    ):
        n = token.shape[1]
        CALLS.append(
            {
                "n_tokens": n,
                "uuid": uuid,
                "prompt_token_len": prompt_token.shape[1],
                "prompt_feat_shape": tuple(prompt_feat.shape),
                "finalize": finalize,
            }
        )
        speech = torch.from_numpy(tone(22050, seconds=n * 512 / 22050)).view(1, -1)
        mel = torch.zeros(1, 80, 2 * n)
        return speech, mel
