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

from collections.abc import Sequence
from typing import Any

from stylebench.model_wrappers import _hf_common as hf
from stylebench.model_wrappers.base import SpeechModel
from stylebench.records import DecodeConfig, Turn

SPEC = hf.HFSpec(
    name="qwen3-omni",
    default_weights="Qwen/Qwen3-Omni-30B-A3B-Instruct",
    module="transformers.models.qwen3_omni_moe",
    model_class="Qwen3OmniMoeForConditionalGeneration",
    processor_class="Qwen3OmniMoeProcessor",
    min_transformers="4.57",
)
OUTPUT_SR = 24000  # code2wav: 12.5 codes/s x 1920 samples per code
HISTORY = (
    "user turns as audio (16 kHz), earlier replies as their text; "
    "the model's own reply audio is not sent"
)


class Qwen3OmniModel(SpeechModel):
    """Qwen3-Omni Instruct via transformers: thinker text + talker speech, 24 kHz, batch size 1."""

    name = "qwen3-omni"

    def __init__(
        self,
        path: str = SPEC.default_weights,
        device: str = "auto",
        dtype: str = "auto",
        speaker: str = "Ethan",
        attn: str = "auto",
        processor: str = "auto",
        system_prompt: str | None = None,
        talker_max_new_tokens: str | int | None = None,
    ) -> None:
        self.talker_max = hf.optional_int(talker_max_new_tokens, "talker_max_new_tokens")
        self.system_prompt = system_prompt or None
        hf.require_packages(SPEC)  # cheap checks first: a wrong path fails in a second
        self.weights = hf.resolve_weights(SPEC, path)
        torch, transformers = hf.import_transformers(SPEC)
        kwargs, move_to = hf.loader_kwargs(torch, device, dtype, attn)
        cls = getattr(transformers, SPEC.model_class)
        model = hf.from_pretrained(SPEC, cls, self.weights.folder, **kwargs)
        self.model = (model.to(move_to) if move_to else model).eval()
        if not getattr(self.model, "has_talker", False):
            raise ValueError(
                f"{path} has no talker (enable_audio_output is off: a -Thinking or -Captioner "
                f"checkpoint?): this benchmark needs speech output, use {SPEC.default_weights}"
            )
        voices = sorted(self.model.config.talker_config.speaker_id or {})
        if speaker.lower() not in voices:
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
        overrides: dict[str, Any] = {}
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
            "thinker": "run decode settings (temperature 0 = greedy; else temperature, top_p); "
            "stops at the config's im_end id",
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
            return_audio=True,
            thinker_eos_token_id=self.model.config.im_end_token_id,
            **hf.thinker_sampling(decode),
            **self._talker(),
        )
        if wave is None:
            raise RuntimeError("Qwen3-Omni returned no audio (is this the -Instruct checkpoint?)")
        text = hf.decode_text(self.processor, sequences, n_prompt)
        path, stats = hf.write_reply(wave, OUTPUT_SR, self.name)
        raw = {"prompt_tokens": n_prompt, "audio_inputs": len(wavs), **stats}
        return Turn("assistant", text, str(path), OUTPUT_SR, raw=raw)
