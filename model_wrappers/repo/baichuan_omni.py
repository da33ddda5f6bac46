"""``baichuan-omni-1.5``: Baichuan-Omni-1.5 with its flow-matching audio head and Cosy 24 kHz vocoder.

Follows ``web_demo/s2s_gradio_demo_cosy_multiturn.py`` (``generate_one_turn``,
``preprocess_messages``, ``generate_response``) and ``web_demo/generation.py``:

- messages: a system message (the voice-selection prompt), then user turns whose content is the
  audio reference ``<audio start>{"path": wav}<audio end>``, and assistant turns whose content is
  the reply's text interleaved with ``<audiogen start>{"path": segment wav}<audiogen end>``;
- the prompt joins them with the model's role markers (``web_demo/constants.py``: ``role_prefix``),
  the assistant marker preceded by the audio-generation marker, and ends with both;
- generation alternates a text step (up to 50 tokens, stopping at the audio-generation marker)
  and an audio step (``GenerationAudioTokens.generate``, up to 500 audio tokens), at most 100
  rounds, with the demo's sampling settings for each step; each audio step's tokens are decoded
  with ``decode_wave_vocoder`` and the reply is joined with the repository's
  ``decode_save_concat`` (10 ms cross-fades), at 24 kHz.

The system prompt selects the voice and must be one the model was trained with; it is read at
run time from the demo in the user's checkout (the default of its "System Prompt" box), or given
with ``--model-arg system_prompt=...``.

Audio history: audio. Earlier replies go back as the demo keeps them: text interleaved with the
reply's audio segments (kept as wav files, named in the reply's ``raw``). When those segment files
are gone, the whole reply wav follows its text as one segment, and the turn is flagged.
"""

from __future__ import annotations

import ast
import json
import re
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from stylebench.model_wrappers.base import SpeechModel
from stylebench.model_wrappers.common import (
    HISTORY_OWN_AUDIO,
    audio_of,
    dialogue_pairs,
    seed_all,
    write_reply,
)
from stylebench.model_wrappers.decoding import is_greedy
from stylebench.model_wrappers.repo.turns import constant_str, join_waves, prompt_in_checkout
from stylebench.model_wrappers.repo.upstream import (
    OFFICIAL,
    RUN,
    RepoSpec,
    Upstream,
    check_spec,
    loading_weights,
    require_weights,
    select_cuda,
)
from stylebench.model_wrappers.weights import require_package
from stylebench.records import DecodeConfig, Turn

SUBDIRS = ("web_demo", "third_party/cosy24k_vocoder")
OUTPUT_SR = 24000  # web_demo/constants.py: sampling_rate
MAX_ROUNDS = 100
#: the demo's three generation settings: first text step, later text steps, audio steps
OFFICIAL_SAMPLING = {
    "text_first": {
        "max_new_tokens": 50,
        "do_sample": True,
        "temperature": 0.8,
        "top_k": 20,
        "top_p": 0.85,
        "repetition_penalty": 1.1,
    },
    "text_next": {
        "max_new_tokens": 50,
        "do_sample": True,
        "temperature": 0.3,
        "top_k": 20,
        "top_p": 0.85,
        "repetition_penalty": 1.05,
    },
    "audio": {
        "max_new_tokens": 500,
        "do_sample": True,
        "temperature": 0.5,
        "top_k": 5,
        "top_p": 0.85,
        "repetition_penalty": 1.3,
    },
}
SPEC = RepoSpec(
    name="baichuan-omni-1.5",
    repo_url="https://github.com/baichuan-inc/Baichuan-Omni-1.5",
    import_name="generation",
    install=(
        "git clone https://github.com/baichuan-inc/Baichuan-Omni-1.5 and install "
        "baichuan_omni_requirements.txt as its README says, then --model-arg repo=/path"
    ),
    weights="baichuan-inc/Baichuan-Omni-1d5",
    output_sr=OUTPUT_SR,
    official_sampling=OFFICIAL_SAMPLING,
    history_kind=HISTORY_OWN_AUDIO,
    history="audio: user turns as audio references, replies as text interleaved with "
    "their audio segments (whole reply wav when segments are gone)",
)
NEXT_TEXT_STOPS = [",", "!", "?", "，", "。", "！", "？", ". "]  # the demo's sentence stops


class BaichuanOmniModel(SpeechModel):
    """Baichuan-Omni-1.5 (baichuan-inc), official multi-turn speech demo path."""

    name = "baichuan-omni-1.5"

    def __init__(
        self,
        path: str = SPEC.weights,
        repo: str | None = None,
        system_prompt: str | None = None,
        device: str = "cuda",
        sampling: str = OFFICIAL,
    ) -> None:
        self.code = Upstream(SPEC, repo, sampling, SUBDIRS)
        self.gen = self.code.module
        constants = require_package("constants", SPEC.hint())
        vocoder_mod = require_package("cosy24k_vocoder", SPEC.hint())
        transformers = require_package("transformers", SPEC.hint())
        torch = require_package("torch", SPEC.hint())
        self.role_prefix = dict(constants.role_prefix)
        self.system_prompt = system_prompt or demo_system_prompt(self.code.repo)
        self.weights = require_weights(path, SPEC)
        self.device = device
        select_cuda(device)  # the demo's generation helpers place tensors on the current GPU
        vocoder_pt = Path(vocoder_mod.__file__).parent / "hift.pt"
        self.vocoder = vocoder_mod.Cosy24kVocoder.from_pretrained(str(vocoder_pt)).to(device)
        with loading_weights(SPEC, self.weights):
            self.model = transformers.AutoModelForCausalLM.from_pretrained(
                self.weights, trust_remote_code=True, torch_dtype=torch.bfloat16
            ).to(device)
            self.tokenizer = transformers.AutoTokenizer.from_pretrained(
                self.weights, trust_remote_code=True
            )
        self.model.training = False
        self.model.bind_processor(self.tokenizer, training=False, relative_path="/")
        cfg, ids2tok = self.model.config.audio_config, self.tokenizer.convert_ids_to_tokens
        self.audio_start, self.audio_end = (
            ids2tok(cfg.audio_start_token_id),
            ids2tok(cfg.audio_end_token_id),
        )
        self.gen_start_id, self.gen_end_id = cfg.audiogen_start_token_id, cfg.audiogen_end_token_id
        self.gen_start, self.gen_end = ids2tok(self.gen_start_id), ids2tok(self.gen_end_id)
        self.special = re.compile(
            "|".join(re.escape(t) for t in ("<|endoftext|>", self.gen_start, self.gen_end))
        )

    @classmethod
    def check(cls) -> tuple[str, str]:
        return check_spec(SPEC)

    def describe(self) -> dict[str, Any]:
        return self.code.describe(
            self.weights, system_prompt_sha256=_sha(self.system_prompt), max_rounds=MAX_ROUNDS
        )

    def segment_ref(self, wav: str) -> str:
        return self.gen_start + json.dumps({"path": wav}, ensure_ascii=False) + self.gen_end

    def prompt(self, history: Sequence[Turn], user_turn: Turn) -> tuple[str, bool]:
        """The demo's preprocess_messages over the dialogue; and whether a reply was rebuilt."""
        rp, rebuilt = self.role_prefix, False
        text = rp["system"] + self.system_prompt
        for user, reply in dialogue_pairs(history):
            text += rp["user"] + self.audio_ref(user.audio)
            content = reply.raw.get("baichuan_content")
            segments = reply.raw.get("baichuan_segments") or []
            if not isinstance(content, str) or not all(Path(s).is_file() for s in segments):
                content, rebuilt = reply.text + self.segment_ref(audio_of(reply)), True
            text += rp["audiogen"] + rp["assistant"] + content
        text += rp["user"] + self.audio_ref(audio_of(user_turn))
        return text + rp["audiogen"] + rp["assistant"], rebuilt

    def audio_ref(self, wav: str) -> str:
        return self.audio_start + json.dumps({"path": wav}, ensure_ascii=False) + self.audio_end

    def decode_settings(self, decode: DecodeConfig) -> dict[str, Any]:
        return self.settings(decode)

    def respond(self, history: Sequence[Turn], user_turn: Turn, decode: DecodeConfig) -> Turn:
        import torch

        prompt, rebuilt = self.prompt(history, user_turn)
        settings = self.settings(decode)
        seed_all(decode.seed)
        dev, tok = self.device, self.tokenizer
        pret = self.model.processor([prompt])
        plen = pret.input_ids.shape[1]
        ret = self.model.generate(
            pret.input_ids.to(dev),
            attention_mask=pret.attention_mask.to(dev),
            audios=_to(pret.audios, dev),
            encoder_length=_to(pret.encoder_length, dev),
            bridge_length=_to(pret.bridge_length, dev),
            tokenizer=tok,
            stop_strings=[self.gen_start, "<|endoftext|>"],
            return_dict_in_generate=True,
            **settings["text_first"],
        )
        spoken = self.special.sub("", tok.decode(ret.sequences[0, plen:]))
        content, segments, waves = spoken, [], []
        for _ in range(MAX_ROUNDS):
            ends = int(ret.sequences[0, -1].item()) == tok.eos_token_id
            if ends and ret.sequences.shape[1] - plen <= 1:
                break
            ret.sequences[0, -1] = self.gen_start_id
            ret, wav_seg = self.audio_step(ret, settings["audio"])
            waves.extend(wav_seg)
            if wav_seg:
                seg, _ = write_reply(torch.cat(wav_seg, dim=0), OUTPUT_SR, "baichuan-segment")
                segments.append(str(seg))
                content += self.segment_ref(str(seg))
            if ends:
                break
            ret.sequences[0, -1] = self.gen_end_id
            plen = ret.sequences.shape[1]
            ret = self.model.generate(
                ret.sequences,
                attention_mask=torch.ones_like(ret.sequences),
                tokenizer=tok,
                past_key_values=ret.past_key_values,
                stop_strings=[self.gen_start, *NEXT_TEXT_STOPS],
                return_dict_in_generate=True,
                **settings["text_next"],
            )
            piece = self.special.sub("", tok.decode(ret.sequences[0, plen:]))
            content, spoken = content + piece, spoken + piece
        if not segments:
            raise RuntimeError("Baichuan-Omni-1.5 produced no audio segment")
        # the scored reply is the audio the model hears as its own in later turns: the segments
        # decoded above, joined as decode_save_concat joins its waves. (decode_save_concat itself
        # would decode the tokens a second time, and the flow decoder starts from noise, so that
        # reply would differ from the segments fed back, and cost a second vocoder pass.)
        path, _ = write_reply(join_waves(waves, int(OUTPUT_SR * 0.01)), OUTPUT_SR, self.name)
        raw = {
            "baichuan_content": content,
            "baichuan_segments": segments,
            "history_rebuilt": rebuilt,
            "sampling": settings,
            "scored_audio": "the history segments, joined (no second decode)",
        }
        return Turn("assistant", spoken.strip(), str(path), OUTPUT_SR, raw=raw)

    def audio_step(self, ret: Any, settings: dict[str, Any]) -> tuple[Any, list]:
        import torch

        audioret = self.gen.GenerationAudioTokens.generate(
            self.model,
            ret.sequences,
            attention_mask=torch.ones_like(ret.sequences),
            past_key_values=ret.past_key_values,
            return_dict_in_generate=True,
            **settings,
        )
        waves = self.gen.decode_wave_vocoder(
            audioret.audios_sequences.clone(), self.vocoder, self.model
        )
        return audioret, [w for w in waves if w is not None]

    def settings(self, decode: DecodeConfig) -> dict[str, dict[str, Any]]:
        out = {k: dict(v) for k, v in OFFICIAL_SAMPLING.items()}
        if self.code.sampling_mode == RUN:  # the run's settings for the text steps
            for step in ("text_first", "text_next"):
                if is_greedy(decode):  # transformers' greedy search; no temperature to divide by
                    for key in ("temperature", "top_p", "top_k"):
                        out[step].pop(key, None)
                    out[step]["do_sample"] = False
                else:
                    out[step].update(temperature=decode.temperature, top_p=decode.top_p)
                    out[step]["do_sample"] = True
        return out


def _to(x: Any, device: str) -> Any:
    return None if x is None else x.to(device)


def _sha(text: str) -> str:
    import hashlib

    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:16]


def demo_system_prompt(repo: Path | None) -> str:
    """The default of the multi-turn demo's "System Prompt" box, read from the checkout."""

    def pick(node: ast.AST) -> str | None:
        if not isinstance(node, ast.Call):
            return None
        kws = {kw.arg: kw.value for kw in node.keywords}
        if constant_str(kws.get("label")) == "System Prompt":
            return constant_str(kws.get("value"))
        return None

    return prompt_in_checkout(
        repo,
        "web_demo/s2s_gradio_demo_cosy_multiturn.py",
        pick,
        spec=SPEC,
        what="System Prompt default",
        alternative="system_prompt=...",
    )
