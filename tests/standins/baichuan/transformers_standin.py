"""Stand-in for the transformers entry points Baichuan-Omni-1.5 loads (remote code).

Token ids: 0 ``<|endoftext|>`` (eos), 1/2 audio start/end, 3/4 audio-generation start/end,
10+ text words ``w<id>``. ``StandInBaichuan.generate`` is scripted: the first text step says
w10 w11 and stops at the audio-generation start; the next (with a KV cache) says w12 and ends.
``processor`` records the prompt string it is given.
"""

from __future__ import annotations

from types import SimpleNamespace

import torch

CALLS: list[tuple] = []
SPECIAL = {0: "<|endoftext|>", 1: "<a_start>", 2: "<a_end>", 3: "<gen_start>", 4: "<gen_end>"}


class StandInTokenizer:
    eos_token_id = 0

    def convert_ids_to_tokens(self, i):
        return SPECIAL[int(i)]

    def decode(self, ids):
        return "".join(SPECIAL.get(int(i), f"w{int(i)} ") for i in ids)


class StandInBaichuan:
    def __init__(self):
        audio = SimpleNamespace(
            audio_start_token_id=1,
            audio_end_token_id=2,
            audiogen_start_token_id=3,
            audiogen_end_token_id=4,
        )
        self.config = SimpleNamespace(audio_config=audio)
        self.training = True

    def to(self, device):
        CALLS.append(("to", device))
        return self

    def bind_processor(self, tokenizer, training=True, relative_path="/"):
        CALLS.append(("bind_processor", training, relative_path))

    def processor(self, texts):
        CALLS.append(("processor", list(texts)))
        return SimpleNamespace(
            input_ids=torch.tensor([[20, 21, 22]]),
            attention_mask=torch.ones(1, 3),
            audios=None,
            encoder_length=None,
            bridge_length=None,
        )

    def generate(
        self,
        input_ids,
        attention_mask=None,
        tokenizer=None,
        stop_strings=None,
        max_new_tokens=20,
        do_sample=False,
        temperature=1.0,
        top_k=50,
        top_p=1.0,
        repetition_penalty=1.0,
        return_dict_in_generate=False,
        past_key_values=None,
        audios=None,
        encoder_length=None,
        bridge_length=None,
    ):
        assert return_dict_in_generate and tokenizer is not None
        CALLS.append(
            (
                "text",
                past_key_values,
                list(stop_strings),
                max_new_tokens,
                temperature,
                top_k,
                top_p,
                repetition_penalty,
            )
        )
        new = [10, 11, 3] if past_key_values is None else [12, 0]
        seq = torch.cat([input_ids, torch.tensor([new])], dim=1)
        return SimpleNamespace(sequences=seq, past_key_values=f"kv{seq.shape[1]}")


class AutoModelForCausalLM:
    @staticmethod
    def from_pretrained(path, trust_remote_code=False, torch_dtype=None):
        assert trust_remote_code
        return StandInBaichuan()


class AutoTokenizer:
    @staticmethod
    def from_pretrained(path, trust_remote_code=False):
        assert trust_remote_code
        return StandInTokenizer()
