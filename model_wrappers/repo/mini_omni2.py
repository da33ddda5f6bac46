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

from pathlib import Path
from typing import Any

from stylebench.model_wrappers.repo.gpt_omni import GptOmniModel, gpt_omni_spec

SPEC = gpt_omni_spec("mini-omni2")


class MiniOmni2Model(GptOmniModel):
    """Mini-Omni2 (gpt-omni), official OmniInference batch audio+text path; single-turn."""

    name = "mini-omni2"
    spec = SPEC
    title = "Mini-Omni2"
    writes_reply = True  # inference.py writes save_path at 24 kHz (SNAC 24 kHz)

    def reply_wav(self, streams: list[Any], saved: Path | None) -> Path:
        if saved is None or saved.stat().st_size == 0:
            raise RuntimeError("Mini-Omni2 did not write its reply to save_path")
        return saved
