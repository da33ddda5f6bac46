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

from pathlib import Path
from typing import Any

from stylebench.model_wrappers.common import write_reply
from stylebench.model_wrappers.repo.gpt_omni import OUTPUT_SR, GptOmniModel, gpt_omni_spec
from stylebench.model_wrappers.weights import require_package

SPEC = gpt_omni_spec("mini-omni")


class MiniOmniModel(GptOmniModel):
    """Mini-Omni (gpt-omni), official OmniInference batch audio+text path; single-turn."""

    name = "mini-omni"
    spec = SPEC
    title = "Mini-Omni"

    def import_helpers(self) -> None:
        self.snac_utils = require_package("utils.snac_utils", SPEC.hint())

    def reply_wav(self, streams: list[Any], saved: Path | None) -> Path:
        """Decode the complete SNAC streams at once, as ``A1_A2`` does after generation."""
        import torch

        layers = [list(layer) for layer in streams[:-1]]  # the helper edits lists in place
        codes = self.snac_utils.reconstruct_tensors(self.snac_utils.reconscruct_snac(layers))
        with torch.inference_mode():
            wave = self.omni.snacmodel.decode(codes)
        path, _ = write_reply(wave, OUTPUT_SR, self.name)
        return path
