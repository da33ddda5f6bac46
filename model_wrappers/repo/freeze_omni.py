"""``freeze-omni``: Freeze-Omni (VITA-MLLM) on a frozen Qwen2-7B-Instruct, 24 kHz speech.

Follows the official ``bin/inference.py`` (``inference``) and, for later turns, ``bin/server.py``
(``send_pcm`` / ``generate``):

- ``models.pipeline.inferencePipeline(args)`` with ``model_path``, ``llm_path``, ``top_k``,
  ``top_p``, ``temperature``; ``models.decoder.llm2tts.llm2TTS(model_path)``;
  ``bin.inference.audioEncoderProcessor`` for 16 kHz fbank chunks;
- ``speech_dialogue(None, stat="pre", role=...)`` sets the system role; the user's audio is fed
  chunk by chunk (``stat`` ``sl`` then ``cl``); ``stat="ss"`` starts speaking; text and hidden
  states come back until ``stat`` returns to ``sl``; each sentence is synthesised with the
  repository's ``bin.inference.decoder`` helper (``codec_chunk_size`` 40, padding 10, top-k 2).

The system role is the one ``bin/inference.py`` passes, read from the user's checkout.

History kind: text only. Like the official server, the dialogue's KV cache after a reply is the
starting state of the next user turn (encoder and adapter caches reset); that cache holds the
user's speech features and the model's own *text* tokens, never its reply audio, so the model
does not hear itself. The state lives in this process; when it is missing (a run resumed in a
new process) earlier turns are replayed: their user audio is fed again and the replies
regenerated (not the recorded ones; they may differ), and the turn is flagged
``history_replayed``.
"""

from __future__ import annotations

import ast
import copy
import math
from argparse import Namespace
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
from stylebench.model_wrappers.repo.turns import StateCache, constant_str, prompt_in_checkout
from stylebench.model_wrappers.repo.upstream import (
    OFFICIAL,
    RepoSpec,
    Upstream,
    check_spec,
    require_local_dir,
    use_cuda_device,
)
from stylebench.model_wrappers.weights import require_package, weights_revision
from stylebench.records import DecodeConfig, Turn

OUTPUT_SR = 24000
INPUT_SR = 16000
#: scripts/run_inference.sh and the README quick start; 128 text tokens is bin/inference.py's cap
OFFICIAL_SAMPLING = {"top_k": 20, "top_p": 0.8, "temperature": 0.8, "max_new_tokens": 128}
RUN_MAPPING = {"temperature": "temperature", "top_p": "top_p", "max_new_tokens": "max_new_tokens"}
SPEC = RepoSpec(
    name="freeze-omni",
    repo_url="https://github.com/VITA-MLLM/Freeze-Omni",
    import_name="models.pipeline",
    install=(
        "git clone https://github.com/VITA-MLLM/Freeze-Omni && pip install -r "
        "Freeze-Omni/requirements.txt, then --model-arg repo=/path/to/Freeze-Omni"
    ),
    weights="VITA-MLLM/Freeze-Omni",
    local_weights=True,
    output_sr=OUTPUT_SR,
    official_sampling=OFFICIAL_SAMPLING,
    run_mapping=RUN_MAPPING,
    # audioLLM._post_decode divides the logits by the temperature (0 gives NaN) and always
    # draws with torch.multinomial: top_k 1 leaves one candidate, so the draw is the argmax
    greedy={"temperature": 1.0, "top_k": 1, "top_p": 0.0},
    history_kind=HISTORY_TEXT,
    history="own text only: the KV cache carried from turn to turn (as the official server "
    "does) holds the user's speech features and the model's own text tokens; its reply audio "
    "is never heard. After a restart earlier replies are regenerated, not the recorded ones "
    "(flagged history_replayed)",
)
CODEC = {"codec_chunk_size": 40, "codec_padding_size": 10, "decoder_topk": 2}
SENTENCE_ENDS = ("。", "：", "？", "！", ".", "?", "!", "\n")  # where bin/inference.py synthesises


class FreezeOmniModel(SpeechModel):
    """Freeze-Omni (VITA-MLLM), official pipeline + llm2TTS path, KV-cache history."""

    name = "freeze-omni"

    def __init__(
        self,
        path: str | None = None,
        llm_path: str | None = None,
        repo: str | None = None,
        device: str = "cuda",
        sampling: str = OFFICIAL,
    ) -> None:
        self.code = Upstream(SPEC, repo, sampling)
        llm2tts = require_package("models.decoder.llm2tts", SPEC.hint())
        self.demo = require_package("bin.inference", SPEC.hint())
        self.ckpt = require_local_dir(
            path,
            "the Freeze-Omni checkpoints folder",
            "huggingface-cli download VITA-MLLM/Freeze-Omni --local-dir /f, then "
            "--model-arg path=/f/checkpoints",
        )
        self.llm = require_local_dir(
            llm_path,
            "the Qwen2-7B-Instruct folder",
            "huggingface-cli download Qwen/Qwen2-7B-Instruct --local-dir /q, then "
            "--model-arg llm_path=/q",
        )
        self.role = system_role(self.code.repo)
        use_cuda_device(device)  # the pipeline places everything on the current CUDA device
        self.weights = str(self.ckpt)
        self.args = Namespace(model_path=str(self.ckpt), llm_path=str(self.llm), **_sampler())
        self.pipeline = self.code.module.inferencePipeline(self.args)
        self.tts = llm2tts.llm2TTS(str(self.ckpt))
        self.chunker = self.demo.audioEncoderProcessor()
        self.states = StateCache(size=2)

    @classmethod
    def check(cls) -> tuple[str, str]:
        return check_spec(SPEC)

    def describe(self) -> dict[str, Any]:
        return self.code.describe(
            self.weights, llm=str(self.llm), llm_revision=weights_revision(self.llm), codec=CODEC
        )

    def decode_settings(self, decode: DecodeConfig) -> dict[str, Any]:
        return self.code.sampling(decode)

    def respond(self, history: Sequence[Turn], user_turn: Turn, decode: DecodeConfig) -> Turn:
        import torch

        sampling = self.code.sampling(decode)
        for key in ("top_k", "top_p", "temperature"):  # speech_dialogue reads them from args
            setattr(self.args, key, sampling[key])
        pairs = dialogue_pairs(history)
        seed_all(decode.seed)
        state = self.states.get(pairs[-1][1].audio) if pairs else None
        replayed = bool(pairs) and state is None
        if state is None:
            state = self.pipeline.speech_dialogue(None, stat="pre", role=self.role)
            for user, _ in pairs:  # rebuild the dialogue state the official server would hold
                state, _, _ = self.turn(state, user.audio, sampling["max_new_tokens"], False)
        state, text, pieces = self.turn(
            state, audio_of(user_turn), sampling["max_new_tokens"], True
        )
        if not pieces:
            raise RuntimeError("Freeze-Omni produced no speech for this turn")
        path, _ = write_reply(torch.cat(pieces, -1), OUTPUT_SR, self.name)
        self.states.put(path, state)
        raw = {"sampling": sampling, "history_replayed": replayed}
        return Turn("assistant", text.strip(), str(path), OUTPUT_SR, raw=raw)

    def turn(self, state: dict, wav: str, max_tokens: int, speak: bool) -> tuple[dict, str, list]:
        """Listen to ``wav`` from ``state``, then generate; returns (state, text, wav pieces)."""
        outputs = self.listen(self.continue_from(state), wav)
        outputs.update(adapter_cache=None, encoder_cache=None, pe_index=0, stat="ss")
        outputs = self.pipeline.speech_dialogue(None, **outputs)
        if outputs.get("stat") != "cs":  # the model chose not to speak
            return outputs, "", []
        hidden, pieces, whole, last, current = [outputs["hidden_state"]], [], "", "", ""
        while len(outputs["past_tokens"]) <= max_tokens:
            del outputs["text"], outputs["hidden_state"]
            outputs = self.pipeline.speech_dialogue(None, **outputs)
            if outputs["stat"] != "cs":
                break
            hidden.append(outputs["hidden_state"])
            new = outputs["text"][len(last) :]
            whole, current = whole + new, current + new
            after_digit = new.endswith(".") and last[-1:].isdigit()
            if new.endswith(SENTENCE_ENDS) and not after_digit:
                if speak:
                    self.synthesise(hidden, current, pieces)
                hidden, current = [], ""
            last = outputs["text"]
        if hidden and speak:
            self.synthesise(hidden, current, pieces)
        return outputs, whole, pieces

    def continue_from(self, state: dict) -> dict:
        """The server's reset between turns: keep the KV cache, drop per-utterance caches.

        A deep copy, as the server makes: the cached state must survive a retried turn.
        """
        outputs = copy.deepcopy(state)
        outputs.update(adapter_cache=None, encoder_cache=None, pe_index=0, stat="sl", last_id=None)
        for key in ("text", "hidden_state", "past_tokens"):
            outputs.pop(key, None)
        return outputs

    def listen(self, outputs: dict, wav_path: str) -> dict:
        import torch

        from stylebench.audio import load_audio

        wave, _ = load_audio(wav_path, target_sr=INPUT_SR)
        size = self.chunker.get_chunk_size()
        padded = torch.zeros(math.ceil(len(wave) / size) * size)
        padded[: len(wave)] = torch.from_numpy(wave)
        for start in range(0, padded.shape[0], size):
            fbank = self.chunker.process(padded[start : start + size])
            outputs = self.pipeline.speech_dialogue(fbank, **outputs)
            outputs["stat"] = "cl"
        self.chunker.reset()
        return outputs

    def synthesise(self, hidden: list, text: str, pieces: list) -> None:
        self.demo.decoder(
            hidden,
            self.pipeline,
            text,
            self.tts,
            CODEC["codec_chunk_size"],
            CODEC["codec_padding_size"],
            CODEC["decoder_topk"],
            pieces,
        )


def _sampler() -> dict[str, Any]:
    return {k: OFFICIAL_SAMPLING[k] for k in ("top_k", "top_p", "temperature")}


def system_role(repo: Path | None) -> str:
    """The system role bin/inference.py sets (``speech_dialogue(..., role=...)``)."""

    def pick(node: ast.AST) -> str | None:
        if isinstance(node, ast.Call):
            for kw in node.keywords:
                if kw.arg == "role":
                    return constant_str(kw.value)
        return None

    return prompt_in_checkout(repo, "bin/inference.py", pick, spec=SPEC, what="system role")
