"""``glm-4-voice``: GLM-4-Voice-9B with its speech tokenizer and flow + HiFT decoder.

Follows the official ``web_demo.py`` (``inference_fn``), ``model_server.py``
(``ModelWorker.generate_stream``) and ``flow_inference.py`` (``AudioDecoder.token2wav``):

- the user's wav becomes discrete tokens with the Whisper-based speech tokenizer
  (``speech_tokenizer.utils.extract_speech_token``), written as ``<|audio_N|>`` between
  ``<|begin_of_audio|>`` and ``<|end_of_audio|>``;
- the prompt is the fixed system prompt for speech input, then per turn
  ``<|user|>\\n{tokens}<|assistant|>streaming_transcription\\n``, and earlier completions in full;
- the model answers with interleaved text and audio tokens (13 text, then 26 audio, as the
  system prompt tells it) and stops at ``<|user|>``;
- audio tokens are decoded in growing blocks (25, 50, 100, 150, 200 tokens), each block
  conditioned on the earlier tokens and mels, as the demo streams them; 22.05 kHz.

The system prompt must be the exact string the model was trained with; it is read at run time
from the ``web_demo.py`` of the user's checkout (the branch for audio input), never copied here.

Audio history: earlier replies go back as the model's own completion (text and audio tokens),
kept in the reply's ``raw``; when that is absent (a record from elsewhere) the reply wav is
re-tokenised and interleaved with its text, 13:26, and the turn is flagged.
"""

from __future__ import annotations

import ast
import uuid
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from stylebench.model_wrappers.base import SpeechModel
from stylebench.model_wrappers.common import (
    HISTORY_OWN_AUDIO,
    audio_of,
    dialogue_pairs,
    seed_all,
    write_reply,
)
from stylebench.model_wrappers.decoding import DROP
from stylebench.model_wrappers.repo.turns import constant_str, prompt_in_checkout
from stylebench.model_wrappers.repo.upstream import (
    OFFICIAL,
    RUN,
    RepoSpec,
    Upstream,
    check_spec,
    loading_weights,
    require_local_dir,
    require_weights,
    select_cuda,
)
from stylebench.model_wrappers.weights import require_package, weights_revision
from stylebench.records import DecodeConfig, Turn

OUTPUT_SR = 22050
BLOCK_SIZES = (25, 50, 100, 150, 200)  # web_demo.py's streaming schedule
TEXT_PER_BLOCK, AUDIO_PER_BLOCK = 13, 26  # the interleave the system prompt asks for
#: the web demo's defaults
OFFICIAL_SAMPLING = {"temperature": 0.2, "top_p": 0.8, "max_new_tokens": 2000}
RUN_MAPPING = {"temperature": "temperature", "top_p": "top_p", "max_new_tokens": "max_new_tokens"}

SPEC = RepoSpec(
    name="glm-4-voice",
    repo_url="https://github.com/THUDM/GLM-4-Voice",
    import_name="speech_tokenizer.utils",
    install=(
        "git clone --recurse-submodules https://github.com/THUDM/GLM-4-Voice && pip install -r "
        "GLM-4-Voice/requirements.txt, then --model-arg repo=/path/to/GLM-4-Voice"
    ),
    weights="THUDM/glm-4-voice-9b",
    output_sr=OUTPUT_SR,
    official_sampling=OFFICIAL_SAMPLING,
    run_mapping=RUN_MAPPING,
    # model_server.py calls transformers' generate with temperature and top_p and no do_sample,
    # so whether it samples is the checkpoint's generation_config's say: set it either way
    greedy={"do_sample": False, "temperature": DROP, "top_p": DROP},
    sampled={"do_sample": True},
    history_kind=HISTORY_OWN_AUDIO,
    history="audio: earlier turns as their speech tokens and the model's own "
    "interleaved completions (re-tokenised reply + text when the completion is absent)",
)


class GLM4VoiceModel(SpeechModel):
    """GLM-4-Voice-9B (THUDM / zai-org), official tokenizer + flow/HiFT decoder path."""

    name = "glm-4-voice"

    def __init__(
        self,
        path: str = SPEC.weights,
        repo: str | None = None,
        tokenizer: str = "THUDM/glm-4-voice-tokenizer",
        decoder: str | None = None,
        device: str = "cuda",
        sampling: str = OFFICIAL,
    ) -> None:
        # web_demo.py puts these two folders on the path before importing the decoder
        self.code = Upstream(SPEC, repo, sampling, ("", "cosyvoice", "third_party/Matcha-TTS"))
        flow = require_package("flow_inference", SPEC.hint())
        whisper_vq = require_package("speech_tokenizer.modeling_whisper", SPEC.hint())
        transformers = require_package("transformers", SPEC.hint())
        self.system_prompt = speech_system_prompt(self.code.repo)
        self.decoder_dir = require_local_dir(
            decoder,
            "the GLM-4-Voice decoder folder (config.yaml, flow.pt, hift.pt)",
            "git clone https://huggingface.co/THUDM/glm-4-voice-decoder and pass "
            "--model-arg decoder=/path/to/glm-4-voice-decoder",
        )
        self.weights = require_weights(path, SPEC)
        self.tokenizer_path = tokenizer
        self.device = device
        select_cuda(device)  # flow_inference / speech_tokenizer helpers use the current GPU
        self.extract_speech_token = self.code.module.extract_speech_token
        with loading_weights(SPEC, self.weights):
            self.glm = transformers.AutoModel.from_pretrained(
                self.weights, trust_remote_code=True, device_map={"": device}
            ).eval()
            self.glm_tokenizer = transformers.AutoTokenizer.from_pretrained(
                self.weights, trust_remote_code=True
            )
        self.audio_decoder = flow.AudioDecoder(
            config_path=str(self.decoder_dir / "config.yaml"),
            flow_ckpt_path=str(self.decoder_dir / "flow.pt"),
            hift_ckpt_path=str(self.decoder_dir / "hift.pt"),
            device=device,
        )
        with loading_weights(SPEC, tokenizer):
            self.whisper = whisper_vq.WhisperVQEncoder.from_pretrained(tokenizer).eval().to(device)
            self.feature_extractor = transformers.WhisperFeatureExtractor.from_pretrained(tokenizer)
        self.audio_offset = self.glm_tokenizer.convert_tokens_to_ids("<|audio_0|>")
        self.end_token_id = self.glm_tokenizer.convert_tokens_to_ids("<|user|>")

    @classmethod
    def check(cls) -> tuple[str, str]:
        return check_spec(SPEC)

    def describe(self) -> dict[str, Any]:
        return self.code.describe(
            self.weights,
            tokenizer=self.tokenizer_path,
            tokenizer_revision=weights_revision(self.tokenizer_path),
            decoder_revision=weights_revision(self.decoder_dir),
            decoder_blocks=list(BLOCK_SIZES),
            audio_sampling=self.audio_sampling(),
        )

    def audio_sampling(self) -> str:
        """How the audio tokens are sampled: as the text tokens, always.

        Text and audio tokens are one interleaved stream from a single ``generate`` call
        (model_server.py:95-103 at eb00ce9; web_demo.py:162 splits it by token id afterwards),
        so whatever the text gets, the audio tokens get too.
        """
        if self.code.sampling_mode == RUN:
            return (
                "the run's settings, for text and audio tokens alike (one interleaved stream): "
                "sampling=run at temperature 0 decodes the audio tokens greedily too"
            )
        return "the web demo's temperature 0.2 / top_p 0.8, for text and audio tokens alike"

    def speech_tokens(self, wav: str) -> list[int]:
        tokens = list(self.extract_speech_token(self.whisper, self.feature_extractor, [wav])[0])
        if not tokens:
            raise RuntimeError(f"the speech tokenizer extracted no tokens from {Path(wav).name}")
        return [int(t) for t in tokens]

    def user_block(self, wav: str) -> str:
        body = "".join(f"<|audio_{t}|>" for t in self.speech_tokens(wav))
        return "<|begin_of_audio|>" + body + "<|end_of_audio|>"

    def completion_of(self, reply: Turn) -> tuple[str, bool]:
        """An earlier reply as the completion string the model produced; (text, was_rebuilt)."""
        stored = reply.raw.get("glm4_completion")
        if isinstance(stored, str) and stored:
            return stored, False
        text_ids = list(self.glm_tokenizer.encode(reply.text, add_special_tokens=False))
        audio_ids = [self.audio_offset + t for t in self.speech_tokens(audio_of(reply))]
        ids: list[int] = []
        while text_ids or audio_ids:
            ids += text_ids[:TEXT_PER_BLOCK] + audio_ids[:AUDIO_PER_BLOCK]
            text_ids, audio_ids = text_ids[TEXT_PER_BLOCK:], audio_ids[AUDIO_PER_BLOCK:]
        return self.glm_tokenizer.decode(ids, spaces_between_special_tokens=False), True

    def prompt(self, history: Sequence[Turn], user_turn: Turn) -> tuple[str, bool]:
        """The full prompt string and whether any earlier completion had to be rebuilt."""
        rebuilt = False
        text = f"<|system|>\n{self.system_prompt}"
        for user, reply in dialogue_pairs(history):
            completion, was_rebuilt = self.completion_of(reply)
            rebuilt = rebuilt or was_rebuilt
            text += f"<|user|>\n{self.user_block(user.audio)}<|assistant|>streaming_transcription\n"
            text = (text + completion).strip()
        text += (
            f"<|user|>\n{self.user_block(audio_of(user_turn))}"
            "<|assistant|>streaming_transcription\n"
        )
        return text, rebuilt

    def decode_settings(self, decode: DecodeConfig) -> dict[str, Any]:
        return self.code.sampling(decode)

    def respond(self, history: Sequence[Turn], user_turn: Turn, decode: DecodeConfig) -> Turn:
        import torch

        prompt, rebuilt = self.prompt(history, user_turn)
        sampling = self.code.sampling(decode)
        seed_all(decode.seed)
        inputs = self.glm_tokenizer([prompt], return_tensors="pt").to(self.device)
        with torch.inference_mode():
            out = self.glm.generate(**inputs, **sampling)
        new_ids = [int(t) for t in out[0][inputs["input_ids"].shape[1] :].tolist()]
        completion, text_ids, audio = [], [], []
        for token in new_ids:
            if token == self.end_token_id:
                break
            completion.append(token)
            (audio if token >= self.audio_offset else text_ids).append(token)
        if not audio:
            raise RuntimeError("GLM-4-Voice produced no audio tokens")
        wave = self.decode_audio([t - self.audio_offset for t in audio])
        path, _ = write_reply(wave, OUTPUT_SR, self.name)
        raw = {
            "glm4_completion": self.glm_tokenizer.decode(
                completion, spaces_between_special_tokens=False
            ),
            "sampling": sampling,
            "n_audio_tokens": len(audio),
            "history_rebuilt": rebuilt,
        }
        text = self.glm_tokenizer.decode(text_ids, skip_special_tokens=True).strip()
        return Turn("assistant", text, str(path), OUTPUT_SR, raw=raw)

    def decode_audio(self, tokens: list[int]) -> Any:
        """Speech tokens -> waveform, block by block as web_demo.py streams them."""
        import torch

        dev = self.device
        prompt_token = torch.zeros(1, 0, dtype=torch.int64, device=dev)
        prompt_feat = torch.zeros(1, 0, 80, device=dev)
        session, mels, pieces, pos, block = str(uuid.uuid4()), [], [], 0, 0
        while pos < len(tokens):
            size = BLOCK_SIZES[min(block, len(BLOCK_SIZES) - 1)]
            chunk = torch.tensor(tokens[pos : pos + size], device=dev).unsqueeze(0)
            pos, block = pos + chunk.shape[1], block + 1
            if mels:
                prompt_feat = torch.cat(mels, dim=-1).transpose(1, 2)
            speech, mel = self.audio_decoder.token2wav(
                chunk,
                uuid=session,
                prompt_token=prompt_token,
                prompt_feat=prompt_feat,
                finalize=pos >= len(tokens),
            )
            pieces.append(speech.squeeze())
            mels.append(mel)
            prompt_token = torch.cat((prompt_token, chunk), dim=-1)
        return torch.cat(pieces, dim=-1)


def speech_system_prompt(repo: Path | None) -> str:
    """The system prompt web_demo.py uses for speech input, read from the user's checkout."""

    def pick(node: ast.AST) -> str | None:
        # the `if input_mode == "audio":` branch assigns the prompt for speech input
        if not (isinstance(node, ast.If) and isinstance(node.test, ast.Compare)):
            return None
        test = node.test
        if not (isinstance(test.left, ast.Name) and test.left.id == "input_mode"):
            return None
        if constant_str(test.comparators[0] if test.comparators else None) != "audio":
            return None
        for stmt in node.body:
            if isinstance(stmt, ast.Assign) and any(
                isinstance(t, ast.Name) and t.id == "system_prompt" for t in stmt.targets
            ):
                return constant_str(stmt.value)
        return None

    return prompt_in_checkout(
        repo, "web_demo.py", pick, spec=SPEC, what="speech-input system prompt"
    )
