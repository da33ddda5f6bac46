"""``mini-omni``: Mini-Omni (gpt-omni), litgpt-based, SNAC audio codes at 24 kHz.

Follows the official ``inference.py``: ``OmniInference(ckpt_dir, device)`` loads the litgpt
model, Whisper-small encoder and the SNAC decoder; ``run_AT_batch_stream(audio_path, ...)`` runs
the batched audio-to-(audio + text) generation the official server and web UI use, yielding
audio chunks while it streams and returning the eight token streams (seven SNAC layers and the
text layer). The wrapper decodes the complete SNAC streams at once with the repository's
``utils.snac_utils`` helpers and the loaded SNAC model (what ``A1_A2`` does), and the text stream
up to its end-of-text token.

Audio history: none. Mini-Omni was trained on single-turn dialogues only and its inference code
takes exactly one audio input (maintainers, gpt-omni/mini-omni issues #26 and #36); it cannot take
text and audio together (issue #133). Every turn is answered from its own audio alone, so turns
2 and 3 ("say it again, faster") have nothing to refer to; this is recorded in the manifest.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, ClassVar

from stylebench.model_wrappers import _repo_common as rc
from stylebench.model_wrappers import _repo_turns as rt
from stylebench.model_wrappers.base import SpeechModel
from stylebench.records import DecodeConfig, Turn

SPEC = rc.RepoSpec(
    name="mini-omni",
    repo_url="https://github.com/gpt-omni/mini-omni",
    import_name="inference",
    install=(
        "git clone https://github.com/gpt-omni/mini-omni && pip install -r "
        "mini-omni/requirements.txt, then --model-arg repo=/path/to/mini-omni"
    ),
    weights="gpt-omni/mini-omni",
)
OUTPUT_SR = 24000  # SNAC 24 kHz
TEXT_VOCAB = 151936  # inference.py: text_vocabsize; the text layer's end-of-text id
#: run_AT_batch_stream's defaults (temperature 0.9 with top_k 1 is greedy in effect)
OFFICIAL_SAMPLING = {"temperature": 0.9, "top_k": 1, "top_p": 1.0, "max_returned_tokens": 2048}
RUN_MAPPING = {"temperature": "temperature", "top_p": "top_p"}
HISTORY = "none: single-turn model; each turn is answered from its own audio only"


class MiniOmniModel(SpeechModel):
    """Mini-Omni (gpt-omni), official OmniInference batch audio+text path; single-turn."""

    name = "mini-omni"
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
        snac_utils = rc.require_package("utils.snac_utils", SPEC.hint())
        self.ckpt = rc.require_local_dir(
            path,
            "the Mini-Omni checkpoint folder (lit_model.pth, model_config.yaml, tokenizer)",
            "huggingface-cli download gpt-omni/mini-omni --local-dir /folder, then "
            "--model-arg path=/folder",
        )
        self.code_revision = rc.code_revision(self.repo, inference)
        self.snac_utils = snac_utils
        self.device = device
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
        stream = self.omni.run_AT_batch_stream(rt.audio_of(user_turn), **sampling)
        _, streams = rt.drain(stream)
        if not streams or not streams[-1]:
            raise RuntimeError("Mini-Omni returned no token streams")
        text_ids = list(streams[-1])
        if TEXT_VOCAB in text_ids:
            text_ids = text_ids[: text_ids.index(TEXT_VOCAB)]
        text = self.omni.text_tokenizer.decode(torch.tensor(text_ids)).strip()
        layers = [list(layer) for layer in streams[:-1]]  # the helper edits lists in place
        codes = self.snac_utils.reconstruct_tensors(self.snac_utils.reconscruct_snac(layers))
        with torch.inference_mode():
            wave = self.omni.snacmodel.decode(codes)
        path = rt.write_reply(wave, OUTPUT_SR, self.name)
        raw = {"sampling": sampling, "history": "none", "n_turns_ignored": len(history) // 2}
        return Turn("assistant", text, str(path), OUTPUT_SR, raw=raw)
