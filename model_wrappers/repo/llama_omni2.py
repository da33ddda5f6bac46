"""``llama-omni2``: LLaMA-Omni2 (ictnlp) with its CosyVoice 2 flow-matching decoder, 24 kHz.

Follows the official ``llama_omni2/inference/run_llama_omni2.py`` (``load_pretrained_model``,
``MultiturnSpeechDataset``, ``eval_model``) and ``run_cosy2_decoder.py`` (``SpeechDecoder``):

- the model is ``Omni2Speech2SQwen2ForCausalLM`` with ``config.tts_tokenizer`` set to the
  checkpoint's ``tts_tokenizer`` folder, bf16; the tokenizer is the slow one;
- the dialogue is a chat-template conversation whose user turns are the ``<speech>`` placeholder
  (its id replaced by ``SPEECH_TOKEN_INDEX``) with one 128-bin Whisper log-mel per user turn, and
  whose assistant turns are the reply texts;
- ``model.generate(input_ids, speech=..., speech_lengths=..., do_sample=..., temperature=...,
  top_p=..., top_k=..., num_beams=1, max_new_tokens=256, use_cache=True, pad_token_id=...)``
  returns the text ids and the speech units;
- units become speech with ``SpeechDecoder(model_dir).entry(units, prompt_speech_16k)``, the
  speaker prompt being the repository's ``prompt_en.wav`` or ``prompt_zh.wav`` (chosen from the
  reply's script, or ``--model-arg prompt_lang=en|zh``).

Audio history: user turns as audio, earlier replies as their text, as in the official multi-turn
format (``MultiturnSpeechDataset``). The English-only checkpoints do not answer in Chinese.
"""

from __future__ import annotations

import os
import re
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from stylebench.model_wrappers.base import SpeechModel
from stylebench.model_wrappers.common import (
    HISTORY_TEXT,
    audio_of,
    dialogue_pairs,
    seed_all,
    write_reply,
)
from stylebench.model_wrappers.repo.turns import has_han
from stylebench.model_wrappers.repo.upstream import (
    OFFICIAL,
    RepoSpec,
    Upstream,
    arg_choice,
    check_spec,
    loading_weights,
    require_local_dir,
)
from stylebench.model_wrappers.weights import require_package, weights_revision
from stylebench.records import DecodeConfig, Turn
from stylebench.registry import MissingExtraError

SUBDIRS = ("", "third_party/Matcha-TTS")  # run_cosy2_decoder.py imports cosyvoice and matcha
OUTPUT_SR = 24000  # run_cosy2_decoder.py saves at 24 kHz
N_MELS = 128  # Whisper-large-v3 features
#: run_llama_omni2.py's defaults as the README runs it (--temperature 0: greedy)
OFFICIAL_SAMPLING = {"temperature": 0.0, "top_p": None, "top_k": None, "max_new_tokens": 256}
RUN_MAPPING = {"temperature": "temperature", "top_p": "top_p", "max_new_tokens": "max_new_tokens"}
SPEC = RepoSpec(
    name="llama-omni2",
    repo_url="https://github.com/ictnlp/LLaMA-Omni2",
    import_name="llama_omni2.model",
    install=(
        "git clone https://github.com/ictnlp/LLaMA-Omni2 && pip install -e LLaMA-Omni2, "
        "then --model-arg repo=/path/to/LLaMA-Omni2"
    ),
    weights="ICTNLP/LLaMA-Omni2-7B-Bilingual",
    local_weights=True,
    output_sr=OUTPUT_SR,
    official_sampling=OFFICIAL_SAMPLING,
    run_mapping=RUN_MAPPING,
    greedy={"temperature": 0.0, "top_p": None},  # respond() turns 0 into do_sample=False
    history_kind=HISTORY_TEXT,
    history="user turns as audio (Whisper log-mels), earlier replies as text "
    "(the official multi-turn format)",
)


class LlamaOmni2Model(SpeechModel):
    """LLaMA-Omni2 (ictnlp), official inference + CosyVoice 2 decoder path."""

    name = "llama-omni2"

    def __init__(
        self,
        path: str | None = None,
        decoder: str | None = None,
        repo: str | None = None,
        speech_encoder: str | None = None,
        prompt_lang: str = "auto",
        device: str = "cuda",
        sampling: str = OFFICIAL,
    ) -> None:
        self.prompt_lang = arg_choice(prompt_lang, "prompt_lang", ("auto", "en", "zh"))
        self.code = Upstream(SPEC, repo, sampling, SUBDIRS)
        constants = require_package("llama_omni2.constants", SPEC.hint())
        cosy = require_package("llama_omni2.inference.run_cosy2_decoder", SPEC.hint())
        self.whisper = require_package("whisper", SPEC.hint())
        transformers = require_package("transformers", SPEC.hint())
        torch = require_package("torch", SPEC.hint())
        self.decoder_dir = require_local_dir(
            decoder,
            "the CosyVoice 2 decoder folder",
            "huggingface-cli download ICTNLP/cosy2_decoder --local-dir /d, then "
            "--model-arg decoder=/d",
        )
        self.weights = str(
            require_local_dir(
                path,
                "the LLaMA-Omni2 checkpoint folder (its config names tts_tokenizer inside it)",
                f"huggingface-cli download {SPEC.weights} --local-dir /m, then --model-arg path=/m",
            )
        )
        self.device = device
        self.speech_token = constants.DEFAULT_SPEECH_TOKEN
        self.speech_index = constants.SPEECH_TOKEN_INDEX
        with loading_weights(SPEC, self.weights):
            config = transformers.AutoConfig.from_pretrained(self.weights)
            config.tts_tokenizer = os.path.join(self.weights, "tts_tokenizer")
            self.speech_encoder = speech_encoder_path(
                speech_encoder, getattr(config, "speech_encoder", None), self.checkout()
            )
            config.speech_encoder = self.speech_encoder
            self.tokenizer = transformers.AutoTokenizer.from_pretrained(
                self.weights, use_fast=False
            )
            self.model = self.code.module.Omni2Speech2SQwen2ForCausalLM.from_pretrained(
                self.weights, config=config, torch_dtype=torch.bfloat16
            ).to(device)
        self.decoder = cosy.SpeechDecoder(model_dir=str(self.decoder_dir), device=device)
        prompts = Path(cosy.__file__).parent
        self.speaker = {
            lang: cosy.load_wav(str(prompts / f"prompt_{lang}.wav"), 16000) for lang in ("en", "zh")
        }

    @classmethod
    def check(cls) -> tuple[str, str]:
        return check_spec(SPEC)

    def checkout(self) -> Path | None:
        """The LLaMA-Omni2 checkout: ``repo=``, else the one ``llama_omni2`` is imported from."""
        if self.code.repo is not None:
            return self.code.repo
        origin = getattr(self.code.module, "__file__", None)  # <root>/llama_omni2/model/...
        return Path(origin).resolve().parents[2] if origin else None

    def describe(self) -> dict[str, Any]:
        return self.code.describe(
            self.weights,
            decoder=str(self.decoder_dir),
            decoder_revision=weights_revision(self.decoder_dir),
            speech_encoder=self.speech_encoder,
            prompt_lang=self.prompt_lang,
        )

    def conversation(self, history: Sequence[Turn], user_turn: Turn) -> tuple[list, list[str]]:
        """Chat messages and the user wavs, in the order their features are consumed."""
        messages, wavs = [], []
        for user, reply in dialogue_pairs(history):
            messages += [
                {"role": "user", "content": self.speech_token},
                {"role": "assistant", "content": reply.text},
            ]
            wavs.append(user.audio)
        messages.append({"role": "user", "content": self.speech_token})
        wavs.append(audio_of(user_turn))
        return messages, wavs

    def inputs(self, messages: list, wavs: list[str]) -> tuple[Any, Any, Any]:
        import torch

        ids = self.tokenizer.apply_chat_template(
            messages, add_generation_prompt=True, return_tensors="pt"
        )
        ids = (ids["input_ids"] if hasattr(ids, "keys") else ids)[0].clone()
        ids[ids == self.tokenizer.convert_tokens_to_ids(self.speech_token)] = self.speech_index
        mels = []
        for wav in wavs:
            audio = self.whisper.pad_or_trim(self.whisper.load_audio(wav))
            mels.append(self.whisper.log_mel_spectrogram(audio, n_mels=N_MELS).permute(1, 0))
        speech = torch.nn.utils.rnn.pad_sequence(mels, batch_first=True, padding_value=0)
        lengths = torch.LongTensor([len(m) for m in mels])
        return ids.unsqueeze(0), speech, lengths

    def decode_settings(self, decode: DecodeConfig) -> dict[str, Any]:
        return self.code.sampling(decode)

    def respond(self, history: Sequence[Turn], user_turn: Turn, decode: DecodeConfig) -> Turn:
        import torch

        messages, wavs = self.conversation(history, user_turn)
        input_ids, speech, lengths = self.inputs(messages, wavs)
        sampling = self.code.sampling(decode)
        temperature = sampling["temperature"] or 0.0
        seed_all(decode.seed)
        with torch.inference_mode():
            output_ids, units = self.model.generate(
                input_ids.to(self.device),
                speech=speech.to(dtype=torch.bfloat16, device=self.device),
                speech_lengths=lengths.to(self.device),
                do_sample=temperature > 0,
                temperature=temperature if temperature > 0 else None,
                top_p=sampling["top_p"],
                top_k=sampling["top_k"],
                num_beams=1,
                max_new_tokens=sampling["max_new_tokens"],
                use_cache=True,
                pad_token_id=self.tokenizer.pad_token_id,
            )
        text = self.tokenizer.batch_decode(output_ids, skip_special_tokens=True)[0].strip()
        unit_ids = unit_list(units)
        if not unit_ids:
            raise RuntimeError("LLaMA-Omni2 produced no speech units")
        lang = self.prompt_lang if self.prompt_lang != "auto" else ("zh" if has_han(text) else "en")
        wave = self.decoder.entry(
            torch.LongTensor(unit_ids).to(self.device), self.speaker[lang], stream=False
        )
        path, _ = write_reply(wave, OUTPUT_SR, self.name)
        raw = {"sampling": sampling, "speaker_prompt": lang, "n_units": len(unit_ids)}
        return Turn("assistant", text, str(path), OUTPUT_SR, raw=raw)


def unit_list(units: Any) -> list[int]:
    """Speech units as ints, whatever container generate returned (string, list or tensor)."""
    if isinstance(units, str):
        return [int(x) for x in re.findall(r"\d+", units)]
    if hasattr(units, "tolist"):
        units = units.tolist()
    flat: list[int] = []
    stack = [units]
    while stack:
        item = stack.pop()
        if isinstance(item, (list, tuple)):
            stack.extend(reversed(item))
        elif isinstance(item, str):
            flat += [int(x) for x in re.findall(r"\d+", item)]
        else:
            flat.append(int(item))
    return flat


def speech_encoder_path(given: str | None, configured: str | None, checkout: Path | None) -> str:
    """The Whisper-large-v3 file the model loads, as an absolute path that exists.

    ``speech_encoder=`` wins; else the checkpoint config's path (``models/speech_encoder/
    large-v3.pt``, where the README's ``whisper.load_model("large-v3", download_root=
    "models/speech_encoder/")`` puts it), which is relative to the checkout, not to the
    runner's working directory. Missing: the one-line error naming the argument.
    """
    name = given or configured or "models/speech_encoder/large-v3.pt"
    p = Path(name).expanduser()
    if not p.is_absolute() and not given and checkout is not None:
        p = checkout / p
    if not p.is_file():
        raise MissingExtraError(
            f"llama-omni2: no Whisper-large-v3 at {p}: download it as the README says "
            "(whisper.load_model('large-v3', download_root='models/speech_encoder/') in the "
            "checkout) or pass --model-arg speech_encoder=/path/to/large-v3.pt"
        )
    return str(p.resolve())
