"""Stand-in for Freeze-Omni models/pipeline.py: ``StandInInferencePipeline`` (official name).

``speech_dialogue`` keeps the official keyword interface and state machine: ``pre`` sets the
system role and returns ``sl``; audio chunks are listened to (``sl``/``cl``); ``ss`` starts
speaking; each later call adds one token (``cs``) until the scripted answer ends (``sl``). The
"KV cache" is a tuple of events, so a test can see what the dialogue state holds.
"""

from __future__ import annotations

import torch

CALLS: list[tuple] = []
ANSWER = ["Hel", "lo.", " Again", "!"]  # two sentences, four tokens


class inferencePipeline:  # noqa: N801 - the official class name
    def __init__(self, args):
        CALLS.append(("init", args.model_path, args.llm_path, args.top_k, args.top_p))
        self.args = args

    def speech_dialogue(
        self,
        audio,
        role=None,
        stat="sl",
        past_key_values=None,
        last_id=None,
        past_tokens=None,
        adapter_cache=None,
        encoder_cache=None,
        pe_index=0,
    ):
        kv = tuple(past_key_values or ())
        out = {"adapter_cache": adapter_cache, "encoder_cache": encoder_cache, "pe_index": pe_index}
        if stat == "pre":
            CALLS.append(("pre", role))
            return {**out, "past_key_values": (f"system:{role}",), "stat": "sl", "last_id": None}
        if audio is not None:
            assert stat in ("sl", "cl"), stat
            if stat == "sl":
                CALLS.append(("listen-start", kv, adapter_cache, encoder_cache, pe_index))
            return {**out, "past_key_values": kv + ("chunk",), "stat": "cl", "last_id": None}
        if stat == "ss":
            assert adapter_cache is None and encoder_cache is None and pe_index == 0
            CALLS.append(("speak", self.args.temperature))
            past_tokens = []
        elif stat != "cs":
            raise AssertionError(f"unexpected stat {stat}")
        if len(past_tokens) == len(ANSWER):
            return {**out, "past_key_values": kv + ("end",), "stat": "sl", "last_id": None}
        past_tokens = past_tokens + [ANSWER[len(past_tokens)]]
        return {
            **out,
            "past_key_values": kv + (past_tokens[-1],),
            "stat": "cs",
            "last_id": [[len(past_tokens)]],
            "past_tokens": past_tokens,
            "text": "".join(past_tokens),
            "hidden_state": torch.zeros(1, 1, 4),
        }
