"""CLAP embeddings for S-CLAP (:mod:`.caf`): ``ClapModel`` from a local folder or a hub id.

``ClapScorer(model)`` loads the model, its tokenizer and its ``ClapFeatureExtractor`` with
transformers (the ``[hf]`` extra). Audio is resampled to the extractor's rate (48 kHz for LAION
CLAP), cut into sliding windows (:func:`.caf.windows`: hop 1 s, window 7 s for MS-CLAP and 10 s
otherwise, unless given), and each window is embedded on its own (``truncation="rand_trunc"``
never crops a window no longer than the extractor's 10 s; shorter audio is repeat-padded, the
extractor's default). Weights cannot be downloaded in this sandbox: tests use a tiny random
config saved to a folder; on a machine with the weights pass e.g. ``laion/clap-htsat-unfused``.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np

from stylebench.metrics.captions import caf
from stylebench.registry import MissingExtraError


def _vectors(out: Any) -> Any:
    """The projected embeddings, whether transformers returns a tensor or a model output."""
    return out if hasattr(out, "shape") else out.pooler_output


class ClapScorer:
    """S-CLAP of captions against audio files with one CLAP model."""

    def __init__(
        self,
        model: str,
        *,
        window_s: float | None = None,
        hop_s: float = caf.HOP_S,
        device: str = "cpu",
        batch: int = 8,
    ) -> None:
        try:
            import torch
            from transformers import AutoTokenizer, ClapFeatureExtractor, ClapModel
        except ImportError:
            raise MissingExtraError(
                "transformers/torch are not installed: pip install 'stylebench[hf]'"
            ) from None
        self.torch, self.model_name, self.device, self.batch = torch, str(model), device, int(batch)
        self.net = ClapModel.from_pretrained(model).to(device).eval()
        self.tok = AutoTokenizer.from_pretrained(model)
        self.fe = ClapFeatureExtractor.from_pretrained(model, truncation="rand_trunc")
        self.window_s = (
            float(window_s) if window_s else caf.window_s(Path(str(model)).name or str(model))
        )
        self.hop_s = float(hop_s)

    def embed_text(self, captions: list[str]) -> np.ndarray:
        with self.torch.inference_mode():
            t = self.tok(captions, padding=True, truncation=True, return_tensors="pt").to(
                self.device
            )
            v = _vectors(
                self.net.get_text_features(
                    input_ids=t["input_ids"], attention_mask=t["attention_mask"]
                )
            )
        return v.float().cpu().numpy()

    def embed_windows(self, wave: np.ndarray, sr: int) -> np.ndarray:
        """One embedding per sliding window of ``wave`` (already at the extractor's rate ``sr``)."""
        spans = caf.windows(len(wave), sr, self.window_s, self.hop_s)
        out = []
        for i in range(0, len(spans), self.batch):
            chunk = [np.asarray(wave[a:b], dtype=np.float32) for a, b in spans[i : i + self.batch]]
            feats = self.fe(chunk, sampling_rate=sr, return_tensors="pt")["input_features"].to(
                self.device
            )
            with self.torch.inference_mode():
                out.append(
                    _vectors(self.net.get_audio_features(input_features=feats))
                    .float()
                    .cpu()
                    .numpy()
                )
        return np.concatenate(out)

    def load(self, audio: str | Path) -> np.ndarray:
        from stylebench.audio import load_audio

        wave, _ = load_audio(audio, target_sr=int(self.fe.sampling_rate))
        return wave

    def s_clap(self, audio: str | Path, caption: str, mode: str = "max_cosine") -> float:
        """S-CLAP (``max_cosine``, the paper's equation) or the ``max_embedding`` compatibility mode."""
        w = self.embed_windows(self.load(audio), int(self.fe.sampling_rate))
        return caf.s_clap(w, self.embed_text([caption])[0], mode)

    def describe(self) -> dict[str, Any]:
        return {"clap": self.model_name, "window_s": self.window_s, "hop_s": self.hop_s}
