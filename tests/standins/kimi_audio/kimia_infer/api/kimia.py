"""Stand-in for kimia_infer/api/kimia.py: ``StandInKimiAudio`` under the official class name.

Same constructor and ``generate`` signature as the official ``KimiAudio`` (an unknown sampling
keyword raises TypeError); returns a known 24 kHz tone as a torch tensor and a fixed text.
"""

from __future__ import annotations

import copy

import torch
from standins import tone

from kimia_infer.api.prompt_manager import check_messages

CALLS: list[tuple] = []


class KimiAudio:
    """StandInKimiAudio."""

    def __init__(self, model_path: str, load_detokenizer: bool = True) -> None:
        CALLS.append(("init", model_path, load_detokenizer))

    def generate(
        self,
        chats: list[dict],
        output_type="text",
        audio_temperature=0.0,
        audio_top_k=5,
        text_temperature=0.0,
        text_top_k=5,
        audio_repetition_penalty=1.0,
        audio_repetition_window_size=64,
        text_repetition_penalty=1.0,
        text_repetition_window_size=16,
        max_new_tokens=-1,
    ):
        assert output_type in ("text", "both")
        check_messages(chats)
        sampling = {
            "audio_temperature": audio_temperature,
            "audio_top_k": audio_top_k,
            "text_temperature": text_temperature,
            "text_top_k": text_top_k,
            "audio_repetition_penalty": audio_repetition_penalty,
            "audio_repetition_window_size": audio_repetition_window_size,
            "text_repetition_penalty": text_repetition_penalty,
            "text_repetition_window_size": text_repetition_window_size,
        }
        CALLS.append(("generate", copy.deepcopy(chats), output_type, sampling))
        n = sum(1 for c in CALLS if c[0] == "generate")
        return torch.from_numpy(tone(24000)).view(1, -1), f" stand-in reply {n} "
