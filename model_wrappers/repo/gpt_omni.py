"""What Mini-Omni and Mini-Omni2 (gpt-omni) share: the ``OmniInference`` batch path.

Both repositories are laid out alike: ``inference.OmniInference(ckpt_dir, device)`` loads the
litgpt model, and ``run_AT_batch_stream(audio_path, ...)`` runs the batched audio-to-(audio +
text) generation of the official server, streaming while it runs and returning the eight token
streams (seven SNAC layers, then the text layer). Both models are single-turn: every turn is
answered from its own audio alone. :class:`GptOmniModel` is the one base both wrappers share;
a subclass turns the finished streams into the reply wav.

Sampling: ``run_AT_batch_stream`` hands one temperature/top_k/top_p to litgpt's ``sample`` for
the seven audio layers and the text layer alike (``inference.py:425-427, 458-460``;
``litgpt/generate/base.py`` ``next_token_batch``), and every official call uses ``top_k=1``
(``inference.py:391-392`` and the fixed calls above it), so the audio codes are always the
argmax. With ``sampling=run`` the run's settings therefore go to the text layer only: while a
turn runs, the checkout's ``litgpt.generate.base.sample`` gives the audio layers
:data:`AUDIO_SAMPLING` (:func:`~stylebench.model_wrappers.repo.turns.audio_sampling_kept`).
"""

from __future__ import annotations

import contextlib
from collections.abc import Sequence
from pathlib import Path
from typing import Any, ClassVar

from stylebench.model_wrappers.base import SpeechModel
from stylebench.model_wrappers.common import (
    HISTORY_NONE,
    audio_of,
    dialogue_pairs,
    scratch_wav,
    seed_all,
)
from stylebench.model_wrappers.repo.turns import audio_sampling_kept, drain
from stylebench.model_wrappers.repo.upstream import (
    OFFICIAL,
    RUN,
    RepoSpec,
    Upstream,
    check_spec,
    require_local_dir,
    select_cuda,
)
from stylebench.model_wrappers.weights import require_package
from stylebench.records import DecodeConfig, Turn

OUTPUT_SR = 24000  # SNAC 24 kHz
TEXT_VOCAB = 151936  # inference.py: text_vocabsize; the text layer's end-of-text id
#: run_AT_batch_stream's defaults (temperature 0.9 with top_k 1 is greedy in effect)
OFFICIAL_SAMPLING = {"temperature": 0.9, "top_k": 1, "top_p": 1.0, "max_returned_tokens": 2048}
RUN_MAPPING = {"temperature": "temperature", "top_p": "top_p"}
#: what the audio layers always get upstream (run_AT_batch_stream's defaults): the argmax code
AUDIO_SAMPLING = {"temperature": 0.9, "top_k": 1, "top_p": 1.0}
HISTORY = "none: single-turn model; each turn is answered from its own audio only"


def gpt_omni_spec(name: str) -> RepoSpec:
    """The spec of ``github.com/gpt-omni/<name>`` (weights: a local copy of ``gpt-omni/<name>``)."""
    url = f"https://github.com/gpt-omni/{name}"
    return RepoSpec(
        name=name,
        repo_url=url,
        import_name="inference",
        install=(
            f"git clone {url} && pip install -r {name}/requirements.txt, then "
            f"--model-arg repo=/path/to/{name}"
        ),
        weights=f"gpt-omni/{name}",
        local_weights=True,
        output_sr=OUTPUT_SR,
        official_sampling=OFFICIAL_SAMPLING,
        run_mapping=RUN_MAPPING,
        # litgpt's sample(): top_k 1 leaves one candidate (argmax); temperature 0 alone is not
        # greedy there while top_p > 0. Sampling needs top_k lifted, or top_k 1 wins again.
        greedy={"top_k": 1},
        sampled={"top_k": None},
        history=HISTORY,
        history_kind=HISTORY_NONE,
    )


class GptOmniModel(SpeechModel):
    """A gpt-omni model through the official OmniInference batch audio+text path; single-turn."""

    spec: ClassVar[RepoSpec]
    #: the model's name in messages ("Mini-Omni")
    title: ClassVar[str]
    #: ``run_AT_batch_stream`` writes the reply wav itself (its ``save_path`` argument)
    writes_reply: ClassVar[bool] = False

    def __init__(
        self,
        path: str | None = None,
        repo: str | None = None,
        device: str = "cuda:0",
        sampling: str = OFFICIAL,
    ) -> None:
        self.code = Upstream(self.spec, repo, sampling)
        # the module whose ``sample`` run_AT_batch_stream's sampler looks up (see the docstring)
        self.litgpt_generate = require_package("litgpt.generate.base", self.spec.hint())
        self.import_helpers()
        self.ckpt = require_local_dir(
            path,
            f"the {self.title} checkpoint folder (lit_model.pth, model_config.yaml, tokenizer)",
            f"huggingface-cli download {self.spec.weights} --local-dir /folder, then "
            "--model-arg path=/folder",
        )
        self.weights = str(self.ckpt)
        self.device = device
        select_cuda(device)  # utils/snac_utils and load_model's Whisper use the current GPU
        self.omni = self.code.module.OmniInference(ckpt_dir=str(self.ckpt), device=device)

    @classmethod
    def check(cls) -> tuple[str, str]:
        return check_spec(cls.spec)

    def describe(self) -> dict[str, Any]:
        return self.code.describe(
            self.weights,
            audio_sampling=f"{AUDIO_SAMPLING} always (the official calls' top_k=1); "
            "sampling=run maps the run's settings onto the text layer only",
        )

    def import_helpers(self) -> None:
        """Import what the subclass needs from the checkout (before the model is loaded)."""

    def reply_wav(self, streams: list[Any], saved: Path | None) -> Path:
        """The reply wav from the finished token streams (``saved``: the ``save_path`` given)."""
        raise NotImplementedError

    def decode_settings(self, decode: DecodeConfig) -> dict[str, Any]:
        return self.code.sampling(decode)

    def audio_kept(self) -> Any:
        """In run mode, litgpt's ``sample`` keeps :data:`AUDIO_SAMPLING` for the audio layers
        (their logits are narrower than the text layer's: 4160 against 152000)."""
        if self.code.sampling_mode != RUN:
            return contextlib.nullcontext()
        return audio_sampling_kept(self.litgpt_generate, "sample", _is_audio_logits, AUDIO_SAMPLING)

    def respond(self, history: Sequence[Turn], user_turn: Turn, decode: DecodeConfig) -> Turn:
        import torch

        dialogue_pairs(history)  # validated, then deliberately not used (single-turn model)
        sampling = self.code.sampling(decode)
        seed_all(decode.seed)
        saved = scratch_wav(self.name) if self.writes_reply else None
        save = {"save_path": str(saved)} if saved is not None else {}
        with self.audio_kept():
            stream = self.omni.run_AT_batch_stream(audio_of(user_turn), **save, **sampling)
            _, streams = drain(stream)
        if not streams or not streams[-1]:
            raise RuntimeError(f"{self.title} returned no token streams")
        text_ids = list(streams[-1])
        if TEXT_VOCAB in text_ids:
            text_ids = text_ids[: text_ids.index(TEXT_VOCAB)]
        text = self.omni.text_tokenizer.decode(torch.tensor(text_ids)).strip()
        path = self.reply_wav(streams, saved)
        raw = {
            "sampling": sampling,
            "audio_sampling": dict(AUDIO_SAMPLING),
            "history": "none",
            "n_turns_ignored": len(history) // 2,
        }
        return Turn("assistant", text, str(path), OUTPUT_SR, raw=raw)


def _is_audio_logits(logits: Any) -> bool:
    return int(logits.shape[-1]) < TEXT_VOCAB
