"""``qwen2.5-omni``: Qwen2.5-Omni (thinker + talker + token2wav) through its transformers classes.

Follows the QwenLM/Qwen2.5-Omni README and model card ("Quickstart", "Usage Tips"):

- ``Qwen2_5OmniForConditionalGeneration.from_pretrained(path, dtype="auto", device_map="auto")``,
  flash-attention 2 optional (``attn=flash_attention_2``); ``spk_dict.pt`` in the checkpoint holds
  the voices (``Chelsie``, the default, and ``Ethan``);
- the system message must be the card's fixed sentence for the talker to speak as intended (the
  README's "Prompt for audio output"; transformers warns when it is changed), so it is sent
  unless ``system_prompt=`` overrides it, and it is recorded;
- user turns are content lists ``[{"type": "audio", "audio": wav}]``;
  ``processor.apply_chat_template(..., add_generation_prompt=True, tokenize=False)``, then
  ``processor(text=..., audio=[16 kHz arrays], return_tensors="pt", padding=True)``, cast to the
  model's device and dtype;
- ``model.generate(**inputs, speaker=..., use_audio_in_video=False)`` returns the text ids and
  a 24 kHz waveform (the README writes it with ``samplerate=24000``).

Audio history: earlier user turns as audio, earlier replies as their text, as the official
``web_demo.py`` (``format_history``) builds multi-turn conversations; the model's own reply audio
is not an input form it documents, so it is not sent. Recorded in ``describe()["history"]``.

Decoding: the thinker takes the run's settings (temperature 0 = greedy, else sampling with
temperature and top_p; ``max_new_tokens``); the talker keeps the model's own sampling defaults
(read from ``generate``'s signature and recorded), with its stop ids taken from the checkpoint's
config. torch is seeded before each call (talker sampling and token2wav noise depend on it).
Input audio is resampled to 16 kHz with scipy's polyphase filter (stylebench.audio) rather than
librosa as qwen-omni-utils does; the two differ only in filter design.
"""

from __future__ import annotations

from typing import Any

from stylebench.model_wrappers.hf.loading import HFSpec
from stylebench.model_wrappers.hf.qwen_omni import QwenOmniModel

SPEC = HFSpec(
    name="qwen2.5-omni",
    default_weights="Qwen/Qwen2.5-Omni-7B",
    module="transformers.models.qwen2_5_omni",
    model_class="Qwen2_5OmniForConditionalGeneration",
    processor_class="Qwen2_5OmniProcessor",
    min_transformers="4.57.1",  # the tested floor: make test-floor
)
OUTPUT_SR = 24000
#: Quoted from the model card, not written here: the talker was trained behind this exact text
#: and the README says audio output may not work as expected under any other system prompt.
CARD_SYSTEM_PROMPT = (
    "You are Qwen, a virtual human developed by the Qwen Team, Alibaba Group, capable of "
    "perceiving auditory and visual inputs, as well as generating text and speech."
)
HISTORY = (
    "user turns as audio (16 kHz), earlier replies as their text (official web_demo.py "
    "format_history); the model's own reply audio is not sent"
)


class Qwen25OmniModel(QwenOmniModel):
    """Qwen2.5-Omni via transformers: thinker text + talker speech, 24 kHz, batch size 1."""

    name = "qwen2.5-omni"
    spec = SPEC
    default_speaker = "Chelsie"
    output_sr = OUTPUT_SR
    history = HISTORY
    thinker = "run decode settings (temperature 0 = greedy; else temperature, top_p)"
    default_system_prompt = CARD_SYSTEM_PROMPT
    no_talker = (
        "{path} was loaded without its talker (enable_audio_output is off in its config): this "
        "benchmark needs the model's speech output"
    )

    def voices(self) -> list[str]:
        return sorted(getattr(self.model, "speaker_map", {}))

    def talker_overrides(self) -> dict[str, Any]:
        cfg = self.model.config.talker_config
        # generate()'s default stop ids are the 7B checkpoint's numbers; the config holds the
        # same ones (codec pad, codec end) for every checkpoint, so they are taken from there
        return {"talker_eos_token_id": [cfg.tts_codec_pad_token_id, cfg.tts_codec_end_token_id]}
