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

from collections.abc import Sequence
from typing import Any

from stylebench.model_wrappers import _hf_common as hf
from stylebench.model_wrappers.base import SpeechModel
from stylebench.records import DecodeConfig, Turn

SPEC = hf.HFSpec(
    name="qwen2.5-omni",
    default_weights="Qwen/Qwen2.5-Omni-7B",
    module="transformers.models.qwen2_5_omni",
    model_class="Qwen2_5OmniForConditionalGeneration",
    processor_class="Qwen2_5OmniProcessor",
    min_transformers="4.57",
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


class Qwen25OmniModel(SpeechModel):
    """Qwen2.5-Omni via transformers: thinker text + talker speech, 24 kHz, batch size 1."""

    name = "qwen2.5-omni"

    def __init__(
        self,
        path: str = SPEC.default_weights,
        device: str = "auto",
        dtype: str = "auto",
        speaker: str = "Chelsie",
        attn: str = "auto",
        processor: str = "auto",
        system_prompt: str | None = None,
        talker_max_new_tokens: str | int | None = None,
    ) -> None:
        self.talker_max = hf.optional_int(talker_max_new_tokens, "talker_max_new_tokens")
        self.system_prompt = CARD_SYSTEM_PROMPT if system_prompt is None else system_prompt
        hf.require_packages(SPEC)  # cheap checks first: a wrong path fails in a second
        self.weights = hf.resolve_weights(SPEC, path)
        torch, transformers = hf.import_transformers(SPEC)
        kwargs, move_to = hf.loader_kwargs(torch, device, dtype, attn)
        cls = getattr(transformers, SPEC.model_class)
        model = hf.from_pretrained(SPEC, cls, self.weights.folder, **kwargs)
        self.model = (model.to(move_to) if move_to else model).eval()
        if not getattr(self.model, "has_talker", False):
            raise ValueError(
                f"{path} was loaded without its talker (enable_audio_output is off in its "
                "config): this benchmark needs the model's speech output"
            )
        voices = sorted(getattr(self.model, "speaker_map", {}))
        if speaker not in voices:
            raise ValueError(f"--model-arg speaker={speaker!r}: this checkpoint has {voices}")
        self.speaker = speaker
        self.processor, self.processor_mode = hf.load_processor(
            SPEC, transformers, self.weights.folder, processor
        )
        self.transformers_version = transformers.__version__
        self.requested = {"device": device, "dtype": dtype, "attn": attn}

    @classmethod
    def check(cls) -> tuple[str, str]:
        return hf.check(SPEC)

    def _talker(self) -> dict[str, Any]:
        cfg = self.model.config.talker_config
        # generate()'s default stop ids are the 7B checkpoint's numbers; the config holds the
        # same ones (codec pad, codec end) for every checkpoint, so they are taken from there
        overrides: dict[str, Any] = {
            "talker_eos_token_id": [cfg.tts_codec_pad_token_id, cfg.tts_codec_end_token_id]
        }
        if self.talker_max is not None:
            overrides["talker_max_new_tokens"] = self.talker_max
        return hf.talker_settings(self.model.generate, overrides)

    def describe(self) -> dict[str, Any]:
        cfg = self.model.config
        return {
            "name": self.name,
            "weights": self.weights.source,
            "revision": self.weights.revision,
            "code": f"transformers {self.transformers_version} {SPEC.model_class}",
            "processor": self.processor_mode,
            "requested": self.requested,
            "dtype": str(self.model.dtype).replace("torch.", ""),
            "attn_implementation": getattr(cfg.thinker_config, "_attn_implementation", None),
            "speaker": self.speaker,
            "system_prompt": self.system_prompt,
            "history": HISTORY,
            "use_audio_in_video": False,
            "thinker": "run decode settings (temperature 0 = greedy; else temperature, top_p)",
            "talker": self._talker(),
            "seeded": "torch.manual_seed(decode.seed) before each turn",
            "output_sr": OUTPUT_SR,
        }

    def respond(self, history: Sequence[Turn], user_turn: Turn, decode: DecodeConfig) -> Turn:
        import torch

        msgs, wavs = hf.conversation(history, user_turn, self.system_prompt)
        inputs = hf.model_inputs(self.processor, msgs, wavs, self.model)
        n_prompt = int(inputs["input_ids"].shape[1])
        torch.manual_seed(decode.seed)
        sequences, wave = self.model.generate(
            **inputs,
            speaker=self.speaker,
            use_audio_in_video=False,
            **hf.thinker_sampling(decode),
            **self._talker(),
        )
        text = hf.decode_text(self.processor, sequences, n_prompt)
        path, stats = hf.write_reply(wave, OUTPUT_SR, self.name)
        raw = {"prompt_tokens": n_prompt, "audio_inputs": len(wavs), **stats}
        return Turn("assistant", text, str(path), OUTPUT_SR, raw=raw)
