"""Per-turn helpers of the transformers-based wrappers: conversation, inputs, decoding.

Kept apart from :mod:`.loading` (finding and loading weights and processors); the reply wav is
written by :func:`stylebench.model_wrappers.common.write_reply`. Nothing heavy is imported at
module level.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from stylebench.errors import BadValue
from stylebench.model_wrappers.decoding import is_greedy
from stylebench.records import DecodeConfig, Turn

INPUT_SR = 16000  # both processors' WhisperFeatureExtractor rate


def conversation(
    history: Sequence[Turn], user_turn: Turn, system_prompt: str | None
) -> tuple[list[dict[str, Any]], list[str]]:
    """The documented message list and the user wavs it refers to, in order.

    Earlier user turns go back as audio, earlier replies as their text (the form of the official
    Qwen2.5-Omni web demo's ``format_history``); the model's own reply audio is not sent.
    """
    if len(history) % 2:
        raise ValueError(f"history must alternate user/assistant turns, got {len(history)} turns")
    msgs: list[dict[str, Any]] = []
    if system_prompt:
        # the list form: Qwen2_5OmniProcessor.apply_chat_template in transformers 4.57-5.5 reads
        # conversation[0]["content"][0]["text"] to check the system prompt (a string crashes it)
        msgs.append({"role": "system", "content": [{"type": "text", "text": system_prompt}]})
    wavs: list[str] = []
    turns = [*history, user_turn]
    for i, turn in enumerate(turns):
        want = "user" if i % 2 == 0 else "assistant"
        if turn.role != want:
            raise ValueError(f"turn {i} is a {turn.role} turn; expected {want}")
        if want == "assistant":
            msgs.append({"role": "assistant", "content": turn.text})
            continue
        if not turn.audio or not Path(turn.audio).is_file():
            raise ValueError(f"user turn {i // 2 + 1} has no audio file (audio={turn.audio!r})")
        msgs.append({"role": "user", "content": [{"type": "audio", "audio": turn.audio}]})
        wavs.append(turn.audio)
    return msgs, wavs


def model_inputs(processor: Any, msgs: list[dict[str, Any]], wavs: list[str], model: Any) -> Any:
    """``apply_chat_template`` + processor call, moved to the model's device and float dtype."""
    from stylebench.audio import load_audio

    text = processor.apply_chat_template(msgs, add_generation_prompt=True, tokenize=False)
    audio = [load_audio(w, target_sr=INPUT_SR)[0] for w in wavs]
    inputs = processor(text=text, audio=audio, return_tensors="pt", padding=True)
    return inputs.to(model.device).to(model.dtype)


def thinker_sampling(decode: DecodeConfig) -> dict[str, Any]:
    """The run's decode settings as thinker arguments: temperature 0 is greedy decoding."""
    out: dict[str, Any] = {"thinker_max_new_tokens": int(decode.max_new_tokens)}
    if not is_greedy(decode):
        out.update(
            thinker_do_sample=True,
            thinker_temperature=float(decode.temperature),
            thinker_top_p=float(decode.top_p),
        )
    else:
        out["thinker_do_sample"] = False
    return out


def talker_settings(generate: Callable[..., Any], overrides: dict[str, Any]) -> dict[str, Any]:
    """The talker arguments ``generate`` will use: its signature's defaults, then ``overrides``."""
    params = inspect.signature(generate).parameters
    out = {
        k: p.default
        for k, p in params.items()
        if k.startswith("talker_") and p.default is not inspect.Parameter.empty
    }
    out.update(overrides)
    return {k: (list(v) if isinstance(v, tuple) else v) for k, v in out.items()}


def optional_int(value: str | int | None, name: str) -> int | None:
    """A positive integer model argument, or None when not given."""
    if value in (None, ""):
        return None
    try:
        n = int(value)
    except (TypeError, ValueError):
        raise BadValue(f"--model-arg {name}={value!r}: expected a positive integer") from None
    if n < 1:
        raise BadValue(f"--model-arg {name}={value!r}: expected a positive integer")
    return n


def decode_text(processor: Any, sequences: Any, n_prompt: int) -> str:
    """The reply text: generated ids after the prompt, special tokens dropped."""
    ids = getattr(sequences, "sequences", sequences)[:, n_prompt:]
    return processor.tokenizer.batch_decode(
        ids, skip_special_tokens=True, clean_up_tokenization_spaces=False
    )[0].strip()
