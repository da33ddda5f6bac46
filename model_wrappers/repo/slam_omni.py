"""``slam-omni``: SLAM-Omni from X-LANCE/SLAM-LLM (``examples/s2s``), multi-round online path.

Follows ``examples/s2s/generate/generate_s2s_online_multi_round.py`` and the
``inference_s2s_online_multi-round.sh`` script that drives it:

- the run configuration is the script's Hydra configuration (``model_config``,
  ``dataset_config``, ``decode_config``, ``train_config``, ``ckpt_path``,
  ``speech_sample_rate``, ``audio_prompt_path`` ...), given here as one YAML file
  (``--model-arg config=slam_omni.yaml``) merged over the repository's ``RunConfig`` defaults;
- the model comes from ``get_custom_model_factory(model_config, logger)``;
- each turn calls the repository's own ``generate_from_wav(wav, model, dataset_config,
  decode_config, logger, device, model_config, tone_dir, audio_prompt_path, False, history,
  layer_shift)``, which returns the reply audio, its text, the assistant history piece and the
  model's own Whisper transcript of the user's audio.

Audio history: text. SLAM-Omni's multi-round path keeps the dialogue as a text history,
``USER: <transcript> ASSISTANT: <reply text>``, placed in its system prompt; the user transcript
is the model's own Whisper decoding (kept in the reply's ``raw``). When that is absent the
dialogue's user transcript is used instead and the turn is flagged.
"""

from __future__ import annotations

import contextlib
import hashlib
import logging
import re
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from stylebench.audio import sha256_file
from stylebench.model_wrappers.base import SpeechModel
from stylebench.model_wrappers.common import (
    HISTORY_TEXT,
    audio_of,
    dialogue_pairs,
    seed_all,
    write_reply,
)
from stylebench.model_wrappers.decoding import is_greedy
from stylebench.model_wrappers.repo.turns import audio_sampling_kept
from stylebench.model_wrappers.repo.upstream import OFFICIAL, RUN, RepoSpec, Upstream, check_spec
from stylebench.model_wrappers.weights import require_package
from stylebench.records import DecodeConfig, Turn
from stylebench.registry import MissingExtraError

SPEC = RepoSpec(
    name="slam-omni",
    repo_url="https://github.com/X-LANCE/SLAM-LLM",
    import_name="generate.generate_s2s_online_multi_round",
    install=(
        "git clone https://github.com/X-LANCE/SLAM-LLM && pip install -e SLAM-LLM && pip install "
        "-r SLAM-LLM/examples/s2s/requirements.txt, then --model-arg repo=/path/to/SLAM-LLM"
    ),
    local_weights=True,
)
SUBDIRS = ("examples/s2s", "src")  # where the s2s example and slam_llm live in the checkout
PROMPT_YAML = "examples/s2s/conf/prompt.yaml"
RUN_MAPPING = {"temperature": "temperature", "top_p": "top_p", "max_new_tokens": "max_new_tokens"}
#: the decode_config keys sample_next_token reads (examples/s2s/model/slam_model_s2s.py:643-646)
SAMPLER_KEYS = ("do_sample", "temperature", "top_k", "top_p")
TEXT_VOCAB = 151936  # s2s_config.py VocabConfig.text_vocabsize; audio logits are 4160 wide
log = logging.getLogger(__name__)
HUB_ID = re.compile(r"[A-Za-z0-9][\w.-]*/[A-Za-z0-9][\w.-]*")


class SlamOmniModel(SpeechModel):
    """SLAM-Omni (X-LANCE/SLAM-LLM examples/s2s), official multi-round online path."""

    name = "slam-omni"

    def __init__(
        self,
        config: str | None = None,
        repo: str | None = None,
        device: str = "cuda",
        sampling: str = OFFICIAL,
    ) -> None:
        self.code = Upstream(SPEC, repo, sampling, SUBDIRS)
        self.gen = self.code.module
        omegaconf = require_package("omegaconf", SPEC.hint())
        runner = require_package("inference_s2s", SPEC.hint())
        model_utils = require_package("slam_llm.utils.model_utils", SPEC.hint())
        snac_utils = require_package("utils.snac_utils", SPEC.hint())
        if not config or not Path(config).is_file():
            raise MissingExtraError(
                f"slam-omni needs its run configuration: write the settings of "
                f"examples/s2s/scripts/inference/inference_s2s_online_multi-round.sh as YAML "
                f"and pass --model-arg config=/path.yaml (got {config!r})"
            )
        self.config_path = Path(config).resolve()
        oc = omegaconf.OmegaConf
        layers = [oc.structured(runner.RunConfig())]
        # the script runs with `--config-name prompt.yaml`: the trained system prompt lives there
        repo_root = self.code.repo
        self.prompt_file = repo_root / PROMPT_YAML if repo_root else None
        if self.prompt_file is not None and self.prompt_file.is_file():
            layers.append(oc.load(str(self.prompt_file)))
        cfg = oc.merge(*layers, oc.load(str(self.config_path)))
        if not cfg.dataset_config.prompt:
            raise ValueError(
                f"slam-omni: no dataset_config.prompt (looked in {self.prompt_file} and "
                f"{self.config_path}); pass repo= or set it in the config"
            )
        self._absolute_model_file(cfg)
        resolve_paths(cfg, repo_root)
        self.cfg = cfg
        self.logger = log
        self.device = device
        self.layer_shift = (
            snac_utils.layershift if cfg.dataset_config.do_layershift else snac_utils.simple_shift
        )
        self.audio_prompt = cfg.audio_prompt_path or None  # resolved and checked above
        self.tone_dir = Path(self.audio_prompt).stem if self.audio_prompt else "default_tone"
        factory = model_utils.get_custom_model_factory(cfg.model_config, self.logger)
        extra = {k: cfg[k] for k in cfg if k not in _SECTIONS}
        self.model, _ = factory(cfg.train_config, cfg.model_config, **extra)
        self.model.to(device)
        self.model.eval()
        set_rate = oc.load(str(self.config_path)).get("speech_sample_rate")
        self.output_sr = output_rate(self.model, cfg, set_rate)

    def _absolute_model_file(self, cfg: Any) -> None:
        # the factory file is named relative to the repository root; the runner's cwd is not it
        file_spec = cfg.model_config.get("file") or ""
        module, _, func = file_spec.partition(":")
        repo_root = self.code.repo
        if module and not Path(module).is_absolute() and repo_root is not None:
            cfg.model_config.file = f"{repo_root / module}:{func or 'model_factory'}"

    @classmethod
    def check(cls) -> tuple[str, str]:
        return check_spec(SPEC)

    def describe(self) -> dict[str, Any]:
        oc = require_package("omegaconf", SPEC.hint()).OmegaConf
        decode = oc.to_container(self.cfg.decode_config, resolve=True)
        return self.code.describe(
            str(self.cfg.ckpt_path),
            history="text: USER: <model's own transcript> ASSISTANT: <reply text> in its "
            "system prompt (the dialogue transcript replaces a missing model transcript)",
            history_kind=HISTORY_TEXT,
            sampling=decode,
            output_sr=self.output_sr,
            config=str(self.config_path),
            config_sha256=sha256_file(self.config_path),
            system_prompt_sha256=hashlib.sha256(
                str(self.cfg.dataset_config.prompt).encode("utf-8")
            ).hexdigest()[:16],
            codec=str(self.cfg.model_config.code_type),
            audio_sampling=self.audio_sampling(),
            audio_prompt=self.audio_prompt,
        )

    def history_text(self, history: Sequence[Turn]) -> tuple[str, bool]:
        """The official multi-round history string; and whether a transcript was substituted."""
        text, substituted = "", False
        for user, reply in dialogue_pairs(history):
            heard = reply.raw.get("slam_user_transcript")
            if not isinstance(heard, str):
                heard, substituted = user.text, True
            text += "USER: " + heard.strip() + " " + (" ASSISTANT: " + reply.text).strip() + " "
        return text, substituted

    def decode_config(self, decode: DecodeConfig) -> Any:
        """The config's decode settings, or the run's (``sampling=run``).

        ``sample_next_token`` (examples/s2s/model/slam_model_s2s.py) divides the logits by the
        temperature before its argmax or draw: temperature 0 gives inf/NaN logits and a wrong
        argmax, so greedy is ``do_sample=False`` at temperature 1 with top_p 1 (no filtering).
        """
        dc = self.cfg.decode_config.copy()
        if self.code.sampling_mode == RUN:
            dc["max_new_tokens"] = decode.max_new_tokens
            if is_greedy(decode):
                dc.update(do_sample=False, temperature=1.0, top_p=1.0)
            else:
                dc.update(do_sample=True, temperature=decode.temperature, top_p=decode.top_p)
        return dc

    def decode_settings(self, decode: DecodeConfig) -> dict[str, Any]:
        oc = require_package("omegaconf", SPEC.hint()).OmegaConf
        return oc.to_container(self.decode_config(decode), resolve=True)

    def audio_sampling(self) -> dict[str, Any]:
        """The audio layers' sampler settings: the config's own ``decode_config`` always.

        The official ``generate`` passes one set of decode settings to ``sample_next_token``
        for the text and every audio layer (examples/s2s/model/slam_model_s2s.py:555, 562);
        the script decodes all of them greedily (``do_sample=false``). ``sampling=run`` is
        meant for the text stream, so in that mode the audio layers keep these.
        """
        dc = self.cfg.decode_config
        return {k: dc[k] for k in SAMPLER_KEYS if k in dc}

    def audio_kept(self) -> Any:
        if self.code.sampling_mode != RUN:
            return contextlib.nullcontext()
        vocab = getattr(getattr(self.model, "model_config", None), "vocab_config", None)
        text_vocab = int(getattr(vocab, "text_vocabsize", TEXT_VOCAB))

        def is_audio(logits: Any) -> bool:
            return int(logits.shape[-1]) < text_vocab

        return audio_sampling_kept(self.model, "sample_next_token", is_audio, self.audio_sampling())

    def respond(self, history: Sequence[Turn], user_turn: Turn, decode: DecodeConfig) -> Turn:
        hist, substituted = self.history_text(history)
        seed_all(decode.seed)
        with self.audio_kept():
            audio, text, _, heard = self.gen.generate_from_wav(
                audio_of(user_turn),
                self.model,
                self.cfg.dataset_config,
                self.decode_config(decode),
                self.logger,
                self.device,
                self.cfg.model_config,
                self.tone_dir,
                self.audio_prompt,
                False,
                hist,
                self.layer_shift,
            )
        if audio is None:
            raise RuntimeError("SLAM-Omni returned no audio (the reply reached max_new_tokens)")
        sr = self.output_sr
        path, _ = write_reply(audio, sr, self.name)
        raw = {
            "slam_user_transcript": str(heard),
            "history_transcript_substituted": substituted,
            "audio_sampling": self.audio_sampling(),
        }
        return Turn("assistant", str(text).strip(), str(path), sr, raw=raw)


_SECTIONS = (
    "train_config",
    "fsdp_config",
    "model_config",
    "log_config",
    "dataset_config",
    "decode_config",
)


def is_hub_id(value: str) -> bool:
    """Whether ``value`` has the form of a hub repository id (``owner/name``), not a path."""
    return HUB_ID.fullmatch(value) is not None and ".." not in value


def resolve_paths(cfg: Any, root: Path | None) -> None:
    """Make the config's file paths absolute against the checkout, as the official script runs
    from the repository root (``./examples/s2s/audio_prompt/...``), and check they exist.

    A missing or unresolvable ``audio_prompt_path`` would silently switch the official code to
    its default voice (``generate_s2s_online_multi_round.py``: ``os.path.exists`` else
    ``default_tone``), so it stops the run instead; no prompt at all is the default voice.

    ``codec_decoder_path`` may also be a hub id: SLAM-LLM's SNAC scripts pass
    ``hubertsiuzdak/snac_24khz`` (``examples/s2s/scripts/inference/mini-omni/
    inference_s2s_online.sh:14``) and ``setup_codec`` hands it to ``SNAC.from_pretrained``
    (``examples/s2s/utils/codec_utils.py:11``; its CosyVoice class downloads a missing folder
    too, ``utils/cosyvoice/cli/cosyvoice.py:29-30``). A relative ``owner/name`` value that is
    not a folder of the checkout is therefore kept as it is.
    """
    for section, key in ((None, "audio_prompt_path"), ("model_config", "codec_decoder_path")):
        node = cfg if section is None else cfg[section]
        value = node.get(key)
        if not value:
            continue
        p = Path(str(value)).expanduser()
        hub = key == "codec_decoder_path" and is_hub_id(str(value))
        if hub and (root is None or not (root / p).exists()):
            log.info("slam-omni: codec_decoder_path=%s is taken as a hub id", value)
            continue
        if not p.is_absolute():
            if root is None:
                raise MissingExtraError(
                    f"slam-omni: {key}={value} is relative to the SLAM-LLM checkout: pass "
                    "--model-arg repo=/path/to/SLAM-LLM or make it absolute"
                )
            p = root / p
        if not p.exists():
            raise MissingExtraError(f"slam-omni: {key} not found at {p} (from {value!r})")
        node[key] = str(p.resolve())


def decoder_rate(codec: Any, decoder_path: str | None) -> int | None:
    """The sample rate the codec decoder writes, read from the decoder itself.

    SNAC holds ``sampling_rate``; the CosyVoice copy in SLAM-LLM has none on its outer class but
    its HiFT vocoder does (``examples/s2s/utils/cosyvoice/hifigan/generator.py``,
    ``HiFTGenerator.sampling_rate``), and its ``cosyvoice.yaml`` states ``sample_rate``.
    """
    for holder in (codec, getattr(getattr(codec, "model", None), "hift", None)):
        for attr in ("sample_rate", "sampling_rate"):
            value = getattr(holder, attr, None)
            if isinstance(value, int) and value > 0:
                return value
    yaml = Path(decoder_path) / "cosyvoice.yaml" if decoder_path else None
    if yaml is not None and yaml.is_file():
        found = re.search(r"^sample_rate:\s*(\d+)", yaml.read_text(encoding="utf-8"), re.M)
        if found:
            return int(found.group(1))
    return None


def output_rate(model: Any, cfg: Any, configured: Any) -> int:
    """The reply's sample rate: the decoder's; a different ``speech_sample_rate`` in the user's
    config, or no rate readable from the decoder, stops the run (a wrong rate shifts pitch and
    speaking rate by the ratio, e.g. 24000/22050 = +8.8%, silently)."""
    codec = getattr(model, "codec_decoder", None)
    rate = decoder_rate(codec, cfg.model_config.get("codec_decoder_path"))
    if rate is None:
        raise MissingExtraError(
            "slam-omni: cannot read the codec decoder's sample rate (model.codec_decoder has no "
            "sample_rate/sampling_rate, no cosyvoice.yaml at model_config.codec_decoder_path); "
            "refusing to write replies at a guessed rate"
        )
    if configured is not None and int(configured) != rate:
        raise ValueError(
            f"slam-omni: the config's speech_sample_rate={configured} but the decoder writes "
            f"{rate} Hz; fix speech_sample_rate (22050 for CosyVoice, 24000 for SNAC)"
        )
    return rate
