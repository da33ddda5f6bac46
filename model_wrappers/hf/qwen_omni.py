"""The wrapper class Qwen2.5-Omni and Qwen3-Omni share: load, describe, answer a turn.

Both checkpoints are a thinker (text) plus a talker (speech) behind one transformers class, with
the same loader arguments, processor, conversation form and ``generate(**inputs, speaker=...,
use_audio_in_video=False)`` call. A subclass names its :class:`~.loading.HFSpec` and fills in
what differs: the default voice and system prompt, where the checkpoint lists its voices, the
talker's stop ids, and the extra ``generate`` arguments its README uses.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, ClassVar

from stylebench.errors import BadValue
from stylebench.model_wrappers.base import SpeechModel
from stylebench.model_wrappers.common import HISTORY_TEXT, write_reply
from stylebench.model_wrappers.hf import loading as hf
from stylebench.model_wrappers.hf.turns import (
    conversation,
    decode_text,
    model_inputs,
    optional_int,
    talker_settings,
    thinker_sampling,
)
from stylebench.records import DecodeConfig, Turn


class QwenOmniModel(SpeechModel):
    """A Qwen omni checkpoint via transformers: thinker text + talker speech, batch size 1.

    ``path`` defaults to ``spec.default_weights`` and ``speaker`` to ``default_speaker``.
    """

    spec: ClassVar[hf.HFSpec]
    default_speaker: ClassVar[str]
    output_sr: ClassVar[int]
    #: how earlier turns reach the model, for ``describe()["history"]``
    history: ClassVar[str]
    #: how the thinker decodes, for ``describe()["thinker"]``
    thinker: ClassVar[str]
    #: the ValueError for a checkpoint without a talker; ``{path}`` and ``{weights}`` filled in
    no_talker: ClassVar[str]
    #: voices are matched case-insensitively (as Qwen3-Omni's ``generate`` does)
    voices_ignore_case: ClassVar[bool] = False
    #: the RuntimeError when ``generate`` returns no waveform; None: no check
    no_audio: ClassVar[str | None] = None
    #: the system prompt sent when ``system_prompt`` is not given (an empty one sends none)
    default_system_prompt: ClassVar[str | None] = None

    def __init__(
        self,
        path: str | None = None,
        device: str = "auto",
        dtype: str = "auto",
        speaker: str | None = None,
        attn: str = "auto",
        processor: str = "auto",
        system_prompt: str | None = None,
        talker_max_new_tokens: str | int | None = None,
    ) -> None:
        spec = self.spec
        path = spec.default_weights if path is None else path
        speaker = self.default_speaker if speaker is None else speaker
        self.talker_max = optional_int(talker_max_new_tokens, "talker_max_new_tokens")
        self.system_prompt = (
            self.default_system_prompt if system_prompt is None else (system_prompt or None)
        )
        hf.require_packages(spec)  # cheap checks first: a wrong path fails in a second
        self.weights = hf.resolve_weights(spec, path)
        torch, transformers = hf.import_transformers(spec)
        kwargs, move_to = hf.loader_kwargs(torch, device, dtype, attn)
        cls = getattr(transformers, spec.model_class)
        model = hf.from_pretrained(spec, cls, self.weights.folder, **kwargs)
        self.model = (model.to(move_to) if move_to else model).eval()
        if not getattr(self.model, "has_talker", False):
            raise ValueError(self.no_talker.format(path=path, weights=spec.default_weights))
        voices = self.voices()
        if (speaker.lower() if self.voices_ignore_case else speaker) not in voices:
            raise BadValue(f"--model-arg speaker={speaker!r}: this checkpoint has {voices}")
        self.speaker = speaker
        self.processor, self.processor_mode = hf.load_processor(
            spec, transformers, self.weights.folder, processor
        )
        self.transformers_version = transformers.__version__
        self.requested = {"device": device, "dtype": dtype, "attn": attn}

    # -- what a subclass fills in ------------------------------------------------------------
    def voices(self) -> list[str]:
        """The checkpoint's voice names, sorted."""
        raise NotImplementedError

    def talker_overrides(self) -> dict[str, Any]:
        """Talker arguments that replace ``generate``'s defaults (before talker_max_new_tokens)."""
        return {}

    def generate_extra(self) -> dict[str, Any]:
        """``generate`` arguments beyond inputs, speaker, thinker and talker settings."""
        return {}

    # -- shared ------------------------------------------------------------------------------
    @classmethod
    def check(cls) -> tuple[str, str]:
        return hf.check(cls.spec)

    def _talker(self) -> dict[str, Any]:
        overrides = self.talker_overrides()
        if self.talker_max is not None:
            overrides["talker_max_new_tokens"] = self.talker_max
        return talker_settings(self.model.generate, overrides)

    def describe(self) -> dict[str, Any]:
        cfg = self.model.config
        return {
            "name": self.name,
            "weights": self.weights.source,
            "revision": self.weights.revision,
            "code": f"transformers {self.transformers_version} {self.spec.model_class}",
            "processor": self.processor_mode,
            "requested": self.requested,
            "dtype": str(self.model.dtype).replace("torch.", ""),
            "attn_implementation": getattr(cfg.thinker_config, "_attn_implementation", None),
            "speaker": self.speaker,
            "system_prompt": self.system_prompt,
            "history": self.history,
            "history_kind": HISTORY_TEXT,
            "use_audio_in_video": False,
            "thinker": self.thinker,
            "talker": self._talker(),
            "seeded": "torch.manual_seed(decode.seed) before each turn",
            "output_sr": self.output_sr,
        }

    def decode_settings(self, decode: DecodeConfig) -> dict[str, Any]:
        return thinker_sampling(decode)

    def respond(self, history: Sequence[Turn], user_turn: Turn, decode: DecodeConfig) -> Turn:
        import torch

        msgs, wavs = conversation(history, user_turn, self.system_prompt)
        inputs = model_inputs(self.processor, msgs, wavs, self.model)
        n_prompt = int(inputs["input_ids"].shape[1])
        torch.manual_seed(decode.seed)
        sequences, wave = self.model.generate(
            **inputs,
            speaker=self.speaker,
            use_audio_in_video=False,
            **self.generate_extra(),
            **thinker_sampling(decode),
            **self._talker(),
        )
        if wave is None and self.no_audio is not None:
            raise RuntimeError(self.no_audio)
        text = decode_text(self.processor, sequences, n_prompt)
        path, stats = write_reply(wave, self.output_sr, self.name)
        raw = {"prompt_tokens": n_prompt, "audio_inputs": len(wavs), **stats}
        return Turn("assistant", text, str(path), self.output_sr, raw=raw)
