"""``qwen3-omni``: Qwen3-Omni Instruct (MoE thinker + talker + code2wav) through transformers.

Follows the QwenLM/Qwen3-Omni README ("Transformers Usage", "Usage Tips", "Setting for
Evaluation"):

- ``Qwen3OmniMoeForConditionalGeneration.from_pretrained(path, dtype="auto", device_map="auto")``,
  flash-attention 2 recommended (``attn=flash_attention_2``); only the ``-Instruct`` checkpoint
  has the talker (``-Thinking`` and ``-Captioner`` answer in text only and are refused here);
- no system prompt by default: the README's evaluation setting sets none, and its long
  audio-visual prompt is for video calls (``system_prompt=`` sends one, recorded);
- user turns are content lists ``[{"type": "audio", "audio": wav}]``; the chat template, the
  processor call and ``generate(**inputs, speaker=..., use_audio_in_video=False)`` as in the
  README, which writes the waveform with ``samplerate=24000``;
- voices are the config's ``talker_config.speaker_id`` names (``Ethan``, the default,
  ``Chelsie``, ``Aiden`` for the released checkpoint), matched case-insensitively as
  ``generate`` does.

Audio history: earlier user turns as audio, earlier replies as their text (the same form as the
Qwen2.5-Omni demo; the talker only ever speaks the current reply, and the model's own reply audio
is not an input form the README documents). Recorded in ``describe()["history"]``.

Decoding: the README's evaluation uses greedy decoding for Instruct, which is the run's default
(temperature 0); a temperature above 0 samples with the run's temperature and top_p. The thinker
stops at the config's ``<|im_end|>`` id (``generate``'s default is the 30B checkpoint's number).
The talker keeps the model's own sampling defaults, read from ``generate``'s signature and
recorded. torch is seeded before each call. Input audio is resampled to 16 kHz with scipy.
"""

from __future__ import annotations

from typing import Any

from stylebench.model_wrappers.hf.loading import HFSpec
from stylebench.model_wrappers.hf.qwen_omni import QwenOmniModel

SPEC = HFSpec(
    name="qwen3-omni",
    default_weights="Qwen/Qwen3-Omni-30B-A3B-Instruct",
    module="transformers.models.qwen3_omni_moe",
    model_class="Qwen3OmniMoeForConditionalGeneration",
    processor_class="Qwen3OmniMoeProcessor",
    min_transformers="4.57.1",  # the tested floor: make test-floor
)
OUTPUT_SR = 24000  # code2wav: 12.5 codes/s x 1920 samples per code
HISTORY = (
    "user turns as audio (16 kHz), earlier replies as their text; "
    "the model's own reply audio is not sent"
)


class Qwen3OmniModel(QwenOmniModel):
    """Qwen3-Omni Instruct via transformers: thinker text + talker speech, 24 kHz, batch size 1."""

    name = "qwen3-omni"
    spec = SPEC
    default_speaker = "Ethan"
    output_sr = OUTPUT_SR
    history = HISTORY
    thinker = (
        "run decode settings (temperature 0 = greedy; else temperature, top_p); "
        "stops at the config's im_end id"
    )
    no_talker = (
        "{path} has no talker (enable_audio_output is off: a -Thinking or -Captioner "
        "checkpoint?): this benchmark needs speech output, use {weights}"
    )
    voices_ignore_case = True  # generate() lower-cases the speaker name
    no_audio = "Qwen3-Omni returned no audio (is this the -Instruct checkpoint?)"

    def voices(self) -> list[str]:
        return sorted(self.model.config.talker_config.speaker_id or {})

    def generate_extra(self) -> dict[str, Any]:
        return {"return_audio": True, "thinker_eos_token_id": self.model.config.im_end_token_id}
