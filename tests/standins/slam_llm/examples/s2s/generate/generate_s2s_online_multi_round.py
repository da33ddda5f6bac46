"""Stand-in for examples/s2s/generate/generate_s2s_online_multi_round.py: generate_from_wav.

Same signature as the official function; returns a 22.05 kHz tone, a reply text, the assistant
history piece (" ASSISTANT: " + text) and a stand-in "Whisper transcript" of the user's audio.
"""

from __future__ import annotations

from pathlib import Path

import torch
from standins import tone

CALLS: list[dict] = []


def generate_from_wav(
    wav_path,
    model,
    dataset_config,
    decode_config,
    logger,
    device,
    model_config,
    tone_dir,
    audio_prompt_path=None,
    output_text_only=False,
    history="",
    layer_shift=None,
):
    assert Path(wav_path).is_file()
    n = len(CALLS) + 1
    CALLS.append(
        {
            "wav": wav_path,
            "history": history,
            "prompt": dataset_config.prompt,
            "decode": dict(decode_config),
            "tone_dir": tone_dir,
            "audio_prompt": audio_prompt_path,
            "layer_shift": getattr(layer_shift, "__name__", None),
            "output_text_only": output_text_only,
        }
    )
    if hasattr(model, "generate"):  # the official call (line 131): model.generate(**batch, **dc)
        model.generate(**decode_config)
    text = f"reply {n} "
    audio = torch.from_numpy(tone(22050)).view(1, -1)
    return audio, text, " ASSISTANT: " + text, f" heard {n} "
