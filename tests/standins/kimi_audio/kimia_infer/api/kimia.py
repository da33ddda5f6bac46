"""Stand-in for kimia_infer/api/kimia.py: ``StandInKimiAudio`` under the official class name.

Same constructor and ``generate`` signature as the official ``KimiAudio`` (an unknown sampling
keyword raises TypeError); returns a known 24 kHz tone as a torch tensor and a fixed text.

The output budget is computed as the official ``generate`` does for ``output_type="both"``
(kimia_infer/api/kimia.py:239 at 2607d51: ``int(12.5 * 120)`` minus the prompt's length), and
the stand-in ``_generate_loop`` (same keyword names as the official one, kimia.py:249) runs
``REPLY_STEPS`` steps or stops at the budget. Its return follows the official loop: the audio
tokens after the ``kimia_text_audiodelaytokens`` delay, ending with an ``eod_ids`` token when
the audio stream finished, without one when the budget ran out. The prompt's length is a
stand-in count: 12.5 tokens per second of each audio message plus 2, and 1 per word plus 2
for each text.
"""

from __future__ import annotations

import copy

import soundfile as sf
import torch
from standins import tone

from kimia_infer.api.prompt_manager import check_messages

CALLS: list[tuple] = []
MSG_END, MEDIA_END = 151645, 151663  # stand-in ids of kimia_extra_tokens msg_end / media_end
REPLY_STEPS = 40  # how many steps the stand-in "model" wants for a reply (tests change it)


def prompt_length(chats: list[dict]) -> int:
    n = 0
    for m in chats:
        content = m["content"] if isinstance(m["content"], list) else [m["content"]]
        for item in content:
            if m["message_type"] in ("audio", "audio-text") and str(item).endswith(".wav"):
                n += int(12.5 * sf.info(str(item)).duration) + 2
            else:
                n += len(str(item).split()) + 2
    return n


class KimiAudio:
    """StandInKimiAudio."""

    def __init__(self, model_path: str, load_detokenizer: bool = True) -> None:
        CALLS.append(("init", model_path, load_detokenizer))
        self.kimia_text_audiodelaytokens = 6
        self.eod_ids = [MSG_END, MEDIA_END]

    def _generate_loop(self, audio_input_ids, text_input_ids, max_new_tokens, **kwargs):
        steps = min(REPLY_STEPS, max(max_new_tokens, 0))
        finished = REPLY_STEPS <= max_new_tokens
        delay = self.kimia_text_audiodelaytokens
        audio = [200000 + i for i in range(max(steps - delay, 0))]
        if finished and audio:
            audio[-1] = MSG_END
        return audio, [1, 2, 3]

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
        prompt = torch.zeros(1, prompt_length(chats), dtype=torch.long)
        budget = int(12.5 * 120) - prompt.shape[1] if output_type == "both" else max_new_tokens
        self._generate_loop(
            audio_input_ids=prompt,
            text_input_ids=prompt,
            max_new_tokens=budget,
            output_type=output_type,
            **sampling,
        )
        n = sum(1 for c in CALLS if c[0] == "generate")
        return torch.from_numpy(tone(24000)).view(1, -1), f" stand-in reply {n} "
