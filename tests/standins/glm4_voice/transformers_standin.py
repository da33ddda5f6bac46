"""Stand-in for the transformers classes GLM-4-Voice loads with trust_remote_code.

The test installs this module as ``transformers`` in sys.modules. Token ids: 0-899 are text
words ``w<id>``, 999 is ``<|user|>`` (the end of an answer), 1000+n is ``<|audio_n|>``.
``StandInGLM.generate`` answers with a scripted interleave (13 text, 26 audio, 7 text, 54 audio),
then ``<|user|>`` and one stray token the wrapper must ignore.
"""

from __future__ import annotations

import re

import torch

CALLS: list[tuple] = []
USER, AUDIO0 = 999, 1000
SCRIPT = (
    list(range(1, 14))
    + [AUDIO0 + i for i in range(26)]
    + list(range(14, 21))
    + [AUDIO0 + 26 + i for i in range(54)]
    + [USER, 5]
)


class _Encoded(dict):
    def to(self, device):
        CALLS.append(("inputs.to", device))
        return self


class StandInGLMTokenizer:
    def __call__(self, texts, return_tensors="pt"):
        CALLS.append(("tokenize", list(texts)))
        n = len(texts[0]) // 10 + 1
        return _Encoded(input_ids=torch.zeros(1, n, dtype=torch.long))

    def convert_tokens_to_ids(self, token):
        if token == "<|user|>":
            return USER
        match = re.fullmatch(r"<\|audio_(\d+)\|>", token)
        assert match, token
        return AUDIO0 + int(match.group(1))

    def encode(self, text, add_special_tokens=True):
        return [int(w[1:]) for w in text.split()]

    def decode(self, ids, spaces_between_special_tokens=True, skip_special_tokens=False):
        out = []
        for i in ids:
            i = int(i)
            if i >= AUDIO0:
                out.append("" if skip_special_tokens else f"<|audio_{i - AUDIO0}|>")
            elif i == USER:
                out.append("" if skip_special_tokens else "<|user|>")
            else:
                out.append(f"w{i} ")
        return "".join(out)


class StandInGLM:
    def eval(self):
        return self

    def generate(self, input_ids, max_new_tokens, temperature, top_p, **kwargs):
        assert not kwargs, kwargs
        CALLS.append(("generate", max_new_tokens, temperature, top_p))
        return torch.cat([input_ids, torch.tensor([SCRIPT])], dim=1)


class AutoModel:
    @staticmethod
    def from_pretrained(path, trust_remote_code=False, device_map=None):
        assert trust_remote_code
        CALLS.append(("AutoModel", path, device_map))
        return StandInGLM()


class AutoTokenizer:
    @staticmethod
    def from_pretrained(path, trust_remote_code=False):
        assert trust_remote_code
        return StandInGLMTokenizer()


class WhisperFeatureExtractor:
    @staticmethod
    def from_pretrained(path):
        CALLS.append(("WhisperFeatureExtractor", path))
        return object()
