"""``mini-omni2``: Mini-Omni2 (gpt-omni), litgpt-based, SNAC audio codes at 24 kHz.

Follows the official ``inference.py``: ``OmniInference(ckpt_dir, device)`` and
``run_AT_batch_stream(audio_path, ..., save_path=...)``, the batched audio-to-(audio + text) path
of the official server. It yields ``(audio_chunk, text_chunk)`` pairs while streaming, writes the
complete reply to ``save_path`` at 24 kHz, and returns the eight token streams; the reply text
is the text stream up to its end-of-text token.

Audio history: none. Mini-Omni2 was trained on single-turn data only and takes one audio input
(maintainers, gpt-omni/mini-omni2 issue #19; multi-turn asked in #66). Every turn is answered
from its own audio alone; this is recorded in the manifest.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, ClassVar

from stylebench.model_wrappers import _repo_common as rc
from stylebench.model_wrappers import _repo_turns as rt
from stylebench.model_wrappers._common import scratch_wav
from stylebench.model_wrappers.base import SpeechModel
from stylebench.records import DecodeConfig, Turn

SPEC = rc.RepoSpec(
    name="mini-omni2",
    repo_url="https://github.com/gpt-omni/mini-omni2",
    import_name="inference",
    install=(
        "git clone https://github.com/gpt-omni/mini-omni2 && pip install -r "
        "mini-omni2/requirements.txt, then --model-arg repo=/path/to/mini-omni2"
    ),
    weights="gpt-omni/mini-omni2",
)
OUTPUT_SR = 24000  # inference.py writes save_path at 24 kHz (SNAC 24 kHz)
TEXT_VOCAB = 151936  # inference.py: text_vocabsize; the text layer's end-of-text id
#: run_AT_batch_stream's defaults (temperature 0.9 with top_k 1 is greedy in effect)
OFFICIAL_SAMPLING = {"temperature": 0.9, "top_k": 1, "top_p": 1.0, "max_returned_tokens": 2048}
RUN_MAPPING = {"temperature": "temperature", "top_p": "top_p"}
HISTORY = "none: single-turn model; each turn is answered from its own audio only"


class MiniOmni2Model(SpeechModel):
    """Mini-Omni2 (gpt-omni), official OmniInference batch audio+text path; single-turn."""

    name = "mini-omni2"
    spec: ClassVar[rc.RepoSpec] = SPEC

    def __init__(
        self,
        path: str | None = None,
        repo: str | None = None,
        device: str = "cuda:0",
        sampling: str = rc.OFFICIAL,
    ) -> None:
        self.sampling_mode = rc.arg_choice(sampling, "sampling", (rc.OFFICIAL, rc.RUN))
        self.repo, inference = rc.require_code(SPEC, repo)
        self.ckpt = rc.require_local_dir(
            path,
            "the Mini-Omni2 checkpoint folder (lit_model.pth, model_config.yaml, tokenizer)",
            "huggingface-cli download gpt-omni/mini-omni2 --local-dir /folder, then "
            "--model-arg path=/folder",
        )
        self.code_revision = rc.code_revision(self.repo, inference)
        self.omni = inference.OmniInference(ckpt_dir=str(self.ckpt), device=device)

    @classmethod
    def check(cls) -> tuple[str, str]:
        return rc.check_spec(SPEC, weights="")

    def describe(self) -> dict[str, Any]:
        return rc.describe_repo_model(
            SPEC,
            weights=str(self.ckpt),
            code=self.code_revision,
            history=HISTORY,
            sampling_mode=self.sampling_mode,
            sampling=OFFICIAL_SAMPLING,
            output_sr=OUTPUT_SR,
        )

    def respond(self, history: Sequence[Turn], user_turn: Turn, decode: DecodeConfig) -> Turn:
        import torch

        rt.dialogue_pairs(history)  # validated, then deliberately not used (single-turn model)
        sampling = rc.sampling_for(self.sampling_mode, OFFICIAL_SAMPLING, decode, RUN_MAPPING)
        rc.seed_all(decode.seed)
        path = scratch_wav(self.name)
        stream = self.omni.run_AT_batch_stream(
            rt.audio_of(user_turn), save_path=str(path), **sampling
        )
        _, streams = rt.drain(stream)
        if not streams or not streams[-1]:
            raise RuntimeError("Mini-Omni2 returned no token streams")
        if path.stat().st_size == 0:
            raise RuntimeError("Mini-Omni2 did not write its reply to save_path")
        text_ids = list(streams[-1])
        if TEXT_VOCAB in text_ids:
            text_ids = text_ids[: text_ids.index(TEXT_VOCAB)]
        text = self.omni.text_tokenizer.decode(torch.tensor(text_ids)).strip()
        raw = {"sampling": sampling, "history": "none", "n_turns_ignored": len(history) // 2}
        return Turn("assistant", text, str(path), OUTPUT_SR, raw=raw)
