"""``minicpm-o-2.6``: MiniCPM-o 2.6 through transformers remote code (openbmb/MiniCPM-o-2_6).

Follows the model card and the OpenBMB/MiniCPM-o README ("Speech Conversation"):

- ``AutoModel.from_pretrained(path, trust_remote_code=True, attn_implementation="sdpa",
  torch_dtype=torch.bfloat16)``, ``init_tts()`` and ``tts.float()``;
- the system message comes from ``model.get_sys_prompt(ref_audio=..., mode=..., language=...)``
  (modes ``audio_assistant``: speak as an assistant in the reference voice; ``audio_roleplay``:
  also role-play the reference speaker; ``default``: the plain speech-assistant prompt);
- audio is a numpy array at 16 kHz inside a message's ``content`` list;
- ``model.chat(msgs=..., tokenizer=..., sampling=True, max_new_tokens=128,
  use_tts_template=True, generate_audio=True, temperature=0.3, output_audio_path=...)`` writes
  the reply wav (24 kHz) and returns an object with ``.text``.

Audio history: user turns as audio, earlier replies as their text. This is the README's
multi-turn recipe (it appends the assistant reply as a message; the reply's audio is not an
input the chat template takes for the assistant role).

Input audio is resampled to 16 kHz with scipy's polyphase filter (stylebench.audio) rather than
librosa's, which the README uses; the two differ only in filter design.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from typing import Any

from stylebench.audio import sha256_file
from stylebench.model_wrappers.base import SpeechModel
from stylebench.model_wrappers.common import (
    HISTORY_TEXT,
    audio_of,
    dialogue_pairs,
    scratch_wav,
    seed_all,
)
from stylebench.model_wrappers.decoding import DROP
from stylebench.model_wrappers.repo.upstream import (
    OFFICIAL,
    RepoSpec,
    Upstream,
    arg_choice,
    check_spec,
    loading_weights,
    require_weights,
    select_cuda,
)
from stylebench.model_wrappers.weights import require_package
from stylebench.records import DecodeConfig, Turn

INPUT_SR = 16000
MODES = ("audio_assistant", "audio_roleplay", "default")
#: the README's speech-conversation call (chat() adds top_p 0.8, top_k 100, rep. penalty 1.05)
OFFICIAL_SAMPLING = {"sampling": True, "temperature": 0.3, "max_new_tokens": 128}
RUN_MAPPING = {"temperature": "temperature", "max_new_tokens": "max_new_tokens"}
SPEC = RepoSpec(
    name="minicpm-o-2.6",
    repo_url="https://github.com/OpenBMB/MiniCPM-o",
    import_name="transformers",
    install=(
        "pip install 'stylebench[minicpm-o]' (transformers==4.44.2 and the model card's pins) "
        "beside torch/torchaudio 2.2-2.3"
    ),
    weights="openbmb/MiniCPM-o-2_6",
    output_sr="as returned by chat() (24 kHz for the 2.6 vocoder)",
    official_sampling=OFFICIAL_SAMPLING,
    run_mapping=RUN_MAPPING,
    # chat(sampling=True) builds {top_p, top_k, temperature, do_sample: True, repetition_penalty}
    # and overwrites those keys from its kwargs: do_sample=False there is greedy search
    greedy={"do_sample": False, "temperature": DROP},
    history_kind=HISTORY_TEXT,
    history="user turns as audio (16 kHz arrays), earlier replies as text "
    "(the README's multi-turn recipe)",
)
log = logging.getLogger(__name__)


class MiniCPMOModel(SpeechModel):
    """MiniCPM-o 2.6 (OpenBMB), transformers remote code, model.chat with generate_audio."""

    name = "minicpm-o-2.6"

    def __init__(
        self,
        path: str = SPEC.weights,
        mode: str = "audio_assistant",
        ref_audio: str | None = None,
        language: str = "en",
        device: str = "cuda",
        attn: str = "sdpa",
        sampling: str = OFFICIAL,
    ) -> None:
        self.mode = arg_choice(mode, "mode", MODES)
        self.language = arg_choice(language, "language", ("en", "zh"))
        self.code = Upstream(SPEC, None, sampling)
        transformers = self.code.module
        torch = require_package("torch", SPEC.hint())
        self.weights = require_weights(path, SPEC)
        self.ref_audio_path = ref_audio
        ref = _load_16k(ref_audio) if ref_audio else None
        self.transformers_version = getattr(transformers, "__version__", "unknown")
        # the code that runs is the checkpoint's, not a checkout whose commit could be read
        self.code.code_revision = (
            f"transformers {self.transformers_version} + the checkpoint's remote code"
        )
        if not self.transformers_version.startswith("4.44"):
            log.warning(
                "MiniCPM-o 2.6's remote code is documented with transformers 4.44.2, found %s; "
                "a worker env with the model card's versions is safer",
                self.transformers_version,
            )
        # the remote code's init_tts builds its vocoder with Vocos(...).to("cuda") (the
        # checkpoint's modeling_minicpmo.py, initialize_vocos): the *current* GPU, so cuda:N
        # is made current first, as the repo wrappers do
        select_cuda(device)
        with loading_weights(SPEC, self.weights):
            self.model = (
                transformers.AutoModel.from_pretrained(
                    self.weights,
                    trust_remote_code=True,
                    attn_implementation=attn,
                    torch_dtype=torch.bfloat16,
                )
                .eval()
                .to(device)
            )
            self.tokenizer = transformers.AutoTokenizer.from_pretrained(
                self.weights, trust_remote_code=True
            )
        self.model.init_tts()
        self.model.tts.float()
        self.sys_msg = self.model.get_sys_prompt(ref_audio=ref, mode=self.mode, language=language)

    @classmethod
    def check(cls) -> tuple[str, str]:
        return check_spec(SPEC)

    def describe(self) -> dict[str, Any]:
        ref = self.ref_audio_path
        return self.code.describe(
            self.weights,
            mode=self.mode,
            language=self.language,
            ref_audio=ref,
            ref_audio_sha256=sha256_file(ref) if ref else None,
        )

    def messages(self, history: Sequence[Turn], user_turn: Turn) -> list[dict[str, Any]]:
        """``msgs`` for ``model.chat``: system message, then user audio / assistant text."""
        msgs: list[dict[str, Any]] = [self.sys_msg]
        for user, reply in dialogue_pairs(history):
            msgs.append({"role": "user", "content": [_load_16k(user.audio)]})
            msgs.append({"role": "assistant", "content": reply.text})
        msgs.append({"role": "user", "content": [_load_16k(audio_of(user_turn))]})
        return msgs

    def decode_settings(self, decode: DecodeConfig) -> dict[str, Any]:
        return self.code.sampling(decode)

    def respond(self, history: Sequence[Turn], user_turn: Turn, decode: DecodeConfig) -> Turn:
        import soundfile as sf

        msgs = self.messages(history, user_turn)
        sampling = self.code.sampling(decode)
        seed_all(decode.seed)
        path = scratch_wav(self.name)
        res = self.model.chat(
            msgs=msgs,
            tokenizer=self.tokenizer,
            use_tts_template=True,
            generate_audio=True,
            output_audio_path=str(path),
            **sampling,
        )
        if not path.is_file() or path.stat().st_size == 0:
            raise RuntimeError("MiniCPM-o wrote no reply audio (is the TTS initialised?)")
        sr = int(getattr(res, "sampling_rate", None) or sf.info(str(path)).samplerate)
        text = getattr(res, "text", res)
        raw = {"sampling": sampling, "mode": self.mode}
        return Turn("assistant", str(text).strip(), str(path), sr, raw=raw)


def _load_16k(path: str) -> Any:
    from stylebench.audio import load_audio

    wave, _ = load_audio(path, target_sr=INPUT_SR)
    return wave
