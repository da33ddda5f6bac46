"""Stand-in for llama_omni2.model: ``Omni2Speech2SQwen2ForCausalLM`` (official name).

``generate`` checks what the official prepare_inputs_labels_for_speech_and_text needs: one
SPEECH_TOKEN_INDEX per speech feature matrix, 128-bin features in bf16; it returns text ids and
speech units as a string of unit numbers (the official answers file stores units that way).
"""

from __future__ import annotations

import torch

CALLS: list[tuple] = []


class Omni2Speech2SQwen2ForCausalLM:
    @classmethod
    def from_pretrained(cls, path, config=None, torch_dtype=None):
        CALLS.append(
            (
                "from_pretrained",
                path,
                config.tts_tokenizer,
                getattr(config, "speech_encoder", None),
                str(torch_dtype),
            )
        )
        return cls()

    def to(self, device):
        return self

    def generate(
        self,
        inputs,
        speech=None,
        speech_lengths=None,
        do_sample=False,
        temperature=None,
        top_p=None,
        top_k=None,
        num_beams=1,
        max_new_tokens=256,
        use_cache=True,
        pad_token_id=None,
    ):
        assert int((inputs == -200).sum()) == speech.shape[0] == speech_lengths.shape[0]
        assert speech.shape[2] == 128 and speech.dtype == torch.bfloat16
        CALLS.append(
            (
                "generate",
                inputs[0].tolist(),
                tuple(speech.shape),
                do_sample,
                temperature,
                top_p,
                top_k,
                num_beams,
                max_new_tokens,
                use_cache,
                pad_token_id,
            )
        )
        return torch.tensor([[5, 6]]), "<12><7><7><30>"
