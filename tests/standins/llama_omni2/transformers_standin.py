"""Stand-in for the transformers entry points LLaMA-Omni2 uses (AutoConfig, AutoTokenizer).

``apply_chat_template`` renders each message as [role id, content ids..., 9] with ``<speech>`` as
id 7 and text as one id per word (100 + word count); it records the messages.
"""

from __future__ import annotations

import copy
from types import SimpleNamespace

import torch

CALLS: list[tuple] = []


class StandInTokenizer:
    pad_token_id = 0

    def apply_chat_template(self, messages, add_generation_prompt=False, return_tensors=None):
        assert add_generation_prompt and return_tensors == "pt"
        CALLS.append(("apply_chat_template", copy.deepcopy(messages)))
        ids = []
        for m in messages:
            body = [7] if m["content"] == "<speech>" else [100 + len(m["content"].split())]
            ids += [1 if m["role"] == "user" else 2] + body + [9]
        return torch.tensor([ids + [2]])

    def convert_tokens_to_ids(self, token):
        assert token == "<speech>"
        return 7

    def batch_decode(self, ids, skip_special_tokens=False):
        return [" stand-in reply "]


class AutoConfig:
    @staticmethod
    def from_pretrained(path):
        return SimpleNamespace(speech_encoder="models/speech_encoder/large-v3.pt")


class AutoTokenizer:
    @staticmethod
    def from_pretrained(path, use_fast=True):
        assert use_fast is False
        return StandInTokenizer()
