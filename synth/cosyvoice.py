"""CosyVoice2 (FunAudioLLM/CosyVoice): zero-shot synthesis from a speaker prompt, and
instruction mode for emotion and style, at the model's own rate (24 kHz for CosyVoice2-0.5B).

Following the official inference code: ``CosyVoice2(model_dir, load_jit=False, load_trt=False,
fp16=...)`` loads a local folder or, for a hub id, downloads it through ModelScope;
``inference_zero_shot(text, prompt_text, prompt, stream=False)`` clones the prompt speaker and
``inference_instruct2(text, instruct_text, prompt, stream=False)`` adds a spoken-style
instruction. Both return a generator of ``{"tts_speech": tensor (1, T)}`` chunks, which are
concatenated. The repository changed how the prompt is passed: releases up to late 2025 take a
16 kHz ``(1, T)`` tensor named ``prompt_speech_16k`` and append ``<|endofprompt|>`` to the
instruction themselves; later ones take the prompt wav's path (``prompt_wav``) and expect the
instruction to end with ``<|endofprompt|>``. The installed API is detected from the method's
parameter names, so both work.

Voices are speaker prompts listed in a voices file (JSON list; paths relative to the file)::

    [{"id": "en-f1", "lang": "en", "prompt_wav": "voices/en_f1.wav",
      "prompt_text": "What the prompt recording says.", "instruct": ""}]

CosyVoice pins its own dependencies, so it usually runs in its own environment through
:mod:`stylebench.model_wrappers.worker.synth` (``--synth-arg python=/path/to/env/bin/python``).
``Style`` (rate, gain, pitch) is applied afterwards with FFmpeg, exactly as for espeak-ng.
"""

from __future__ import annotations

import inspect
import json
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from stylebench.errors import BadValue, MissingFile
from stylebench.registry import MissingExtraError
from stylebench.synth.base import Audio, Style, Voice, flag_arg

DEFAULT_MODEL = "iic/CosyVoice2-0.5B"
PROMPT_SR = 16000
END_OF_PROMPT = "<|endofprompt|>"
WEIGHTS_CONFIG = "cosyvoice2.yaml"  # the file CosyVoice2 reads first from its model folder
INSTALL_HINT = (
    "cosyvoice is not installed: clone FunAudioLLM/CosyVoice, pip install -r requirements.txt "
    "and put the clone and its third_party/Matcha-TTS on PYTHONPATH, or run it in that env with "
    "--synth-arg python=/path/to/env/bin/python (docs/synth.md)"
)


@dataclass(frozen=True)
class PromptVoice:
    """A speaker prompt: the voice users see, its recording's transcript, an optional style."""

    voice: Voice  # backend_voice = absolute path of the prompt wav
    prompt_text: str
    instruct: str = ""


def load_voices_file(path: Path | str) -> dict[str, PromptVoice]:
    """Read a voices file (see the module docstring) into ``{voice id: PromptVoice}``.

    Raises:
        MissingFile: the file or a prompt wav does not exist.
        BadValue: a folder, not JSON, malformed entries, duplicate ids, or an empty prompt text.
    """
    p = Path(path)
    if p.is_dir():
        raise BadValue(f"--synth-arg voices={p}: a folder; give the voices file (JSON) in it")
    if not p.is_file():
        raise MissingFile(f"--synth-arg voices={p}: voices file does not exist")
    try:
        entries = json.loads(p.read_text(encoding="utf-8"))
    except (ValueError, OSError) as exc:
        raise BadValue(f"voices file {p} is not readable JSON: {exc}") from None
    if not isinstance(entries, list) or not entries:
        raise BadValue(f"{p}: a voices file is a non-empty JSON list of voices")
    out: dict[str, PromptVoice] = {}
    for i, e in enumerate(entries):
        if not isinstance(e, dict):
            raise BadValue(f"{p}: voice {i} is not a JSON object")
        missing = [k for k in ("id", "lang", "prompt_wav", "prompt_text") if not e.get(k)]
        if missing:
            raise BadValue(f"{p}: voice {i} lacks {missing}")
        if e["id"] in out:
            raise BadValue(f"{p}: duplicate voice id {e['id']!r}")
        wav = (p.parent / e["prompt_wav"]).resolve()
        if not wav.is_file():
            raise MissingFile(f"{p}: prompt wav of voice {e['id']!r} not found: {wav}")
        voice = Voice(e["id"], e["lang"], str(wav), e.get("description", ""))
        out[e["id"]] = PromptVoice(voice, e["prompt_text"], e.get("instruct", ""))
    return out


def voices_by_lang(prompts: dict[str, PromptVoice]) -> dict[str, list[Voice]]:
    """The voices of a voices file grouped by language, in file order."""
    out: dict[str, list[Voice]] = {}
    for pv in prompts.values():
        out.setdefault(pv.voice.lang, []).append(pv.voice)
    return out


def load_prompt_16k(path: str | Path) -> Any:
    """The prompt wav as a mono float32 torch tensor of shape (1, T) at 16 kHz.

    Raises:
        AudioError: the prompt is not readable audio, or is silent or shorter than 0.2 s.
    """
    import torch

    from stylebench.audio import load_audio, resample

    wave, sr = load_audio(path)
    # resampled in float64, as the prompts have always been, so a prompt gives the same tensor
    mono = resample(wave.astype(np.float64), sr, PROMPT_SR)
    return torch.from_numpy(np.asarray(mono, dtype=np.float32)).unsqueeze(0)


class CosyVoice2Synth:
    """CosyVoice2 behind ``synthesize(text, voice, style) -> Audio``; the model loads lazily."""

    name = "cosyvoice2"

    def __init__(
        self,
        model: str = DEFAULT_MODEL,
        voices: str | None = None,
        instruct: str = "",
        fp16: bool | str = False,
    ) -> None:
        self.model = model
        self.instruct = instruct
        self.fp16 = flag_arg(self.name, "fp16", fp16)
        self.prompts = load_voices_file(voices) if voices else {}
        self._cosy: Any = None
        self._lock = threading.Lock()  # one model, one inference at a time

    def voices_for(self, lang: str) -> list[Voice]:
        out = voices_by_lang(self.prompts).get(lang, [])
        if not out:
            raise ValueError(
                f"cosyvoice2: the voices file has no voice for {lang!r} (it has "
                f"{', '.join(sorted(voices_by_lang(self.prompts))) or 'none'})"
            )
        return out

    def describe(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "model": self.model,
            "instruct": self.instruct,
            "fp16": self.fp16,
        }

    def check_installed(self) -> None:
        """The cosyvoice package can be imported in this process (the model itself loads with
        the first sentence), so a build without it stops before its first turn.

        Raises:
            MissingExtraError: it cannot, with how to install it or run it in its own env.
        """
        try:
            import cosyvoice  # noqa: F401
        except ImportError:
            raise MissingExtraError(INSTALL_HINT) from None

    def _load(self) -> Any:
        if self._cosy is None:
            try:
                from cosyvoice.cli.cosyvoice import CosyVoice2
            except ImportError:
                raise MissingExtraError(INSTALL_HINT) from None
            local = Path(self.model)
            if local.exists() and not (local / WEIGHTS_CONFIG).is_file():
                # CosyVoice2 would raise a bare ValueError; say which folder lacks the weights
                raise MissingExtraError(self._no_weights(f"{local} holds no {WEIGHTS_CONFIG}"))
            try:
                self._cosy = CosyVoice2(self.model, load_jit=False, load_trt=False, fp16=self.fp16)
            except ImportError as exc:  # a package CosyVoice imports while loading
                raise MissingExtraError(
                    f"CosyVoice2 needs a package that is not installed ({exc}); pip install -r "
                    "requirements.txt of the CosyVoice clone (docs/synth.md)"
                ) from exc
            except OSError as exc:
                # Missing weight files and an unreachable hub (download errors are OSErrors) mean
                # the weights are not here. Anything else (out of memory, a bug) is not a
                # download problem and propagates with its own type and message.
                first = (str(exc).splitlines() or [""])[0][:200]
                raise MissingExtraError(self._no_weights(f"{type(exc).__name__}: {first}")) from exc
        return self._cosy

    def _no_weights(self, why: str) -> str:
        return (
            f"CosyVoice2 weights {self.model!r} could not be loaded ({why}); download them "
            f"(modelscope download --model {DEFAULT_MODEL} --local_dir DIR) and pass "
            "--synth-arg model=DIR"
        )

    def synthesize(self, text: str, voice: Voice, style: Style = Style()) -> Audio:
        """Speak ``text`` in the prompt speaker ``voice``; instruction mode when one is set."""
        from stylebench.synth.ffmpeg import apply_style

        if not text.strip():
            raise ValueError("cosyvoice2: cannot synthesise empty text")
        if voice.id not in self.prompts:
            raise ValueError(
                f"cosyvoice2: no speaker prompt for voice {voice.id!r}; list it in the voices "
                f"file (known: {', '.join(sorted(self.prompts)) or 'none'})"
            )
        prompt = self.prompts[voice.id]
        instruct = self.instruct or prompt.instruct
        with self._lock:
            cosy = self._load()
            chunks = list(self._generate(cosy, text, prompt, instruct))
            sr = int(cosy.sample_rate)
        if not chunks:
            raise RuntimeError(f"cosyvoice2 returned no audio for {text[:60]!r}")
        wave = np.concatenate(
            [
                np.asarray(c["tts_speech"].detach().cpu().numpy(), np.float32).reshape(-1)
                for c in chunks
            ]
        )
        audio = Audio(wave, sr)
        return audio if style.is_neutral else apply_style(audio, style)

    @staticmethod
    def _generate(cosy: Any, text: str, prompt: PromptVoice, instruct: str) -> Any:
        fn = cosy.inference_instruct2 if instruct else cosy.inference_zero_shot
        params = inspect.signature(fn).parameters
        if "prompt_speech_16k" in params:  # releases up to late 2025: a 16 kHz tensor
            speech: Any = load_prompt_16k(prompt.voice.backend_voice)
            instr = instruct.removesuffix(END_OF_PROMPT)  # their frontend appends it
        else:  # later releases: the wav path; the instruction carries its end-of-prompt token
            speech = prompt.voice.backend_voice
            instr = instruct if instruct.endswith(END_OF_PROMPT) else instruct + END_OF_PROMPT
        if instruct:
            return fn(text, instr, speech, stream=False)
        return fn(text, prompt.prompt_text, speech, stream=False)
