"""``kimi-audio``: Kimi-Audio-7B-Instruct through its official ``kimia_infer`` package.

Follows ``kimia_infer/api/kimia.py`` (``KimiAudio.generate``) and the repository's ``infer.py``:
messages are dicts with ``role``, ``message_type`` and ``content``; a user turn is
``message_type="audio"`` with a wav path; ``generate(messages, output_type="both", **sampling)``
returns ``(wav, text)`` with the wav at 24 kHz.

Audio history: since the multi-turn change in the official repository (PR #103, 2025-05-28) an
earlier assistant turn is passed back as ``message_type="audio-text"`` with content
``[reply_wav, reply_text]``, so the model hears its own earlier replies. Older checkouts reject
that type; ``--model-arg history=text`` then passes earlier replies as text only (recorded in
the manifest).

Output budget: for ``output_type="both"`` the official ``generate`` allows
``int(12.5 * 120) - prompt_len`` new tokens (``kimia_infer/api/kimia.py:239`` at 2607d51), a
fixed 1500-token window (120 s at 12.5 tokens/s) for prompt and reply together, where the
prompt holds every earlier turn, its own reply audio included. The reply budget therefore
shrinks as the dialogue grows, and a long turn 3 can be cut off. The wrapper keeps upstream's
budget and records, per reply, the prompt length, the budget and whether the generation ended
at it (``raw`` ``truncated_at_token_budget``; read from the official ``_generate_loop``'s
arguments and result, ``kimia.py:249``).
"""

from __future__ import annotations

import contextlib
import importlib.util
import logging
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

from stylebench.errors import BadValue
from stylebench.model_wrappers.base import SpeechModel
from stylebench.model_wrappers.common import (
    HISTORY_OWN_AUDIO,
    HISTORY_TEXT,
    RAW_TRUNCATED,
    audio_of,
    dialogue_pairs,
    seed_all,
    write_reply,
)
from stylebench.model_wrappers.repo.upstream import (
    OFFICIAL,
    RepoSpec,
    Upstream,
    arg_choice,
    check_spec,
    loading_weights,
    require_weights,
    use_cuda_device,
)
from stylebench.records import DecodeConfig, Turn

OUTPUT_SR = 24000  # the detokenizer's rate, as infer.py writes it
#: the sampling parameters of the official README and infer.py
OFFICIAL_SAMPLING = {
    "audio_temperature": 0.8,
    "audio_top_k": 10,
    "text_temperature": 0.0,
    "text_top_k": 5,
    "audio_repetition_penalty": 1.0,
    "audio_repetition_window_size": 64,
    "text_repetition_penalty": 1.0,
    "text_repetition_window_size": 16,
}
#: in run mode only the text stream follows the run's temperature: greedy audio tokens degenerate
RUN_MAPPING = {"temperature": "text_temperature"}
SPEC = RepoSpec(
    name="kimi-audio",
    repo_url="https://github.com/MoonshotAI/Kimi-Audio",
    import_name="kimia_infer.api.kimia",
    install=(
        "git clone https://github.com/MoonshotAI/Kimi-Audio && pip install -r "
        "Kimi-Audio/requirements.txt && pip install -e Kimi-Audio (or --model-arg repo=/path)"
    ),
    weights="moonshotai/Kimi-Audio-7B-Instruct",
    output_sr=OUTPUT_SR,
    official_sampling=OFFICIAL_SAMPLING,
    run_mapping=RUN_MAPPING,
    greedy={"text_temperature": 0.0},  # sampler.py: a text temperature <= 1e-6 is argmax
)
HISTORY_MODES = ("audio-text", "text")
#: kimia.py:239: for output_type="both", prompt + reply share this many tokens
TOKEN_WINDOW = int(12.5 * 120)
log = logging.getLogger(__name__)


class KimiAudioModel(SpeechModel):
    """Kimi-Audio-7B-Instruct (MoonshotAI), official kimia_infer inference path."""

    name = "kimi-audio"

    def __init__(
        self,
        path: str = SPEC.weights,
        repo: str | None = None,
        history: str = "audio-text",
        device: str = "cuda",
        sampling: str = OFFICIAL,
    ) -> None:
        self.history_mode = arg_choice(history, "history", HISTORY_MODES)
        self.code = Upstream(SPEC, repo, sampling)
        if self.history_mode == "audio-text" and not _supports_audio_text():
            raise BadValue(
                "this Kimi-Audio checkout predates multi-turn support (message_type "
                "'audio-text', official PR #103): update it, or pass --model-arg history=text"
            )
        self.weights = require_weights(path, SPEC)
        use_cuda_device(device)  # kimia_infer places everything on the current CUDA device
        with loading_weights(SPEC, self.weights):
            self.model = self.code.module.KimiAudio(model_path=self.weights, load_detokenizer=True)

    @classmethod
    def check(cls) -> tuple[str, str]:
        return check_spec(SPEC)

    def describe(self) -> dict[str, Any]:
        if self.history_mode == "audio-text":
            history = (
                "audio: earlier replies as audio-text (reply wav + its text), user turns as audio"
            )
        else:
            history = "text fallback: earlier replies as text only, user turns as audio"
        kind = HISTORY_OWN_AUDIO if self.history_mode == "audio-text" else HISTORY_TEXT
        return self.code.describe(
            self.weights, history=history, history_kind=kind, run_mapping=RUN_MAPPING
        )

    def messages(self, history: Sequence[Turn], user_turn: Turn) -> list[dict[str, Any]]:
        """The ``chats`` list ``KimiAudio.generate`` takes (see prompt_manager.get_prompt)."""
        msgs: list[dict[str, Any]] = []
        for user, reply in dialogue_pairs(history):
            msgs.append({"role": "user", "message_type": "audio", "content": user.audio})
            if self.history_mode == "audio-text":
                content: Any = [reply.audio, reply.text]
                msgs.append({"role": "assistant", "message_type": "audio-text", "content": content})
            else:
                msgs.append({"role": "assistant", "message_type": "text", "content": reply.text})
        msgs.append({"role": "user", "message_type": "audio", "content": audio_of(user_turn)})
        return msgs

    def decode_settings(self, decode: DecodeConfig) -> dict[str, Any]:
        return self.code.sampling(decode)

    def respond(self, history: Sequence[Turn], user_turn: Turn, decode: DecodeConfig) -> Turn:
        msgs = self.messages(history, user_turn)
        sampling = self.code.sampling(decode)
        seed_all(decode.seed)
        budget: dict[str, Any] = {RAW_TRUNCATED: None}
        with self._watch_budget(budget):
            wav, text = self.model.generate(msgs, output_type="both", **sampling)
        if wav is None:
            raise RuntimeError("Kimi-Audio returned no audio (was the detokenizer loaded?)")
        path, _ = write_reply(wav, OUTPUT_SR, self.name)
        if budget[RAW_TRUNCATED]:
            log.warning(
                "kimi-audio: turn %d stopped at its token budget (%s new tokens after a %s-token "
                "prompt): the reply is cut off",
                len(history) // 2 + 1,
                budget.get("token_budget"),
                budget.get("prompt_tokens"),
            )
        raw = {"sampling": sampling, "history": self.history_mode, **budget}
        return Turn("assistant", str(text).strip(), str(path), OUTPUT_SR, raw=raw)

    @contextlib.contextmanager
    def _watch_budget(self, out: dict[str, Any]) -> Iterator[None]:
        """Record into ``out`` the budget ``generate`` gives the official ``_generate_loop``
        and whether the loop ended at it (its audio tokens then end without an ``eod_ids``
        token: the official loop returns on one, kimia.py:153-178). A checkout without that
        loop leaves ``out[RAW_TRUNCATED]`` None (unknown)."""
        loop = getattr(self.model, "_generate_loop", None)
        if not callable(loop):
            yield
            return

        def watched(*args: Any, **kwargs: Any) -> Any:
            result = loop(*args, **kwargs)
            prompt = kwargs.get("audio_input_ids")
            budget = kwargs.get("max_new_tokens")
            audio = list(result[0]) if isinstance(result, tuple) and result else None
            eod = getattr(self.model, "eod_ids", None)
            out["prompt_tokens"] = int(prompt.shape[1]) if hasattr(prompt, "shape") else None
            out["token_budget"] = int(budget) if budget is not None else None
            out["token_window"] = TOKEN_WINDOW
            if audio is not None and eod is not None:
                out[RAW_TRUNCATED] = not (audio and int(audio[-1]) in set(eod))
            return result

        own = "_generate_loop" in vars(self.model)
        self.model._generate_loop = watched
        try:
            yield
        finally:
            if own:
                self.model._generate_loop = loop
            else:
                del self.model._generate_loop  # the class's method shows through again


def _supports_audio_text() -> bool:
    """Whether the installed prompt manager knows ``message_type="audio-text"``."""
    spec = importlib.util.find_spec("kimia_infer.api.prompt_manager")
    if spec is None or not spec.origin:
        return False
    return '"audio-text"' in Path(spec.origin).read_text(encoding="utf-8")
