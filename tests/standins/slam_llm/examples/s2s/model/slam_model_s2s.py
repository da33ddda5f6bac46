"""Stand-in for examples/s2s/model/slam_model_s2s.py: ``model_factory`` returning a stand-in.

The model carries ``codec_decoder`` as the official one does (``setup_codec``): for CosyVoice,
SLAM-LLM's copy of the CosyVoice class, whose HiFT vocoder holds ``sampling_rate`` (22050).
With ``model_config.codec_decoder_path`` set, the decoder names no rate itself (the wrapper then
has to read the folder's ``cosyvoice.yaml``). With ``code_type`` and ``codec_decoder_type``
SNAC the decoder is a stand-in of ``SNAC.from_pretrained(codec_decoder_path)``
(examples/s2s/utils/codec_utils.py): it records the path or hub id it was given and holds
``sampling_rate`` 24000 as SNAC does.

``generate(**decode_config)`` takes one step as the official one does: it calls
``self.sample_next_token`` with the same keyword arguments for the text logits (152000 wide) and
for each audio layer's (4160 wide) (slam_model_s2s.py:555, 562); the calls are recorded.
"""

from __future__ import annotations

from types import SimpleNamespace

import torch

CALLS: list[tuple] = []


class StandInSlamModel:
    def __init__(self, rate, snac_from=None) -> None:
        hift = SimpleNamespace(sampling_rate=rate) if rate else SimpleNamespace()
        self.codec_decoder = SimpleNamespace(model=SimpleNamespace(hift=hift))
        if snac_from is not None:
            self.codec_decoder = SimpleNamespace(sampling_rate=24000, loaded_from=snac_from)

    def sample_next_token(self, logits, **kwargs):
        keys = ("do_sample", "temperature", "top_k", "top_p")
        CALLS.append(("sample_next_token", int(logits.shape[-1]), *(kwargs.get(k) for k in keys)))
        return torch.argmax(logits, dim=-1, keepdim=True)

    def generate(self, **kwargs):
        self.sample_next_token(torch.zeros(152000), **kwargs)
        for _ in range(7):
            self.sample_next_token(torch.zeros(4160), **kwargs)

    def to(self, device):
        CALLS.append(("to", device))
        return self

    def eval(self):
        CALLS.append(("eval",))
        return self


def model_factory(train_config, model_config, **kwargs):
    CALLS.append(("model_factory", kwargs.get("ckpt_path")))
    if model_config.get("code_type") == model_config.get("codec_decoder_type") == "SNAC":
        return StandInSlamModel(None, model_config.get("codec_decoder_path")), object()
    rate = None if model_config.get("codec_decoder_path") else 22050
    return StandInSlamModel(rate), object()
