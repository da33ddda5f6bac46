"""The run configuration: one frozen dataclass, one merge.

Precedence: command-line flags > config file (``--config run.toml`` or ``.json``) > defaults.
The resolved config is written into the run's ``manifest.json``. Only secrets come from the
environment, and never through this module.
"""

from __future__ import annotations

import dataclasses
import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from stylebench.records import ACOUSTIC_DIMS, DIMS, LANGS


@dataclass(frozen=True)
class RunConfig:
    model: str = "reference"
    model_args: dict[str, str] = field(default_factory=dict)
    dim: str = "pitch"  # one of DIMS, or "all" (= the acoustic dims)
    lang: str = "all"  # "en", "zh" or "all"
    limit: int | None = None  # samples per (dim, direction, lang) cell
    dialogues: str = "default"  # "default" or a set folder
    out: str = "runs"
    run_id: str | None = None
    # decoding
    temperature: float = 0.0
    top_p: float = 1.0
    max_new_tokens: int = 1024
    seed: int = 0
    # model process: None = in this process; else that env's python runs the model as a worker
    worker_python: str | None = None
    turn_timeout_s: float = 600.0  # worker only: a turn taking longer kills and restarts it
    # measurement
    asr: str = "faster-whisper"
    asr_model: str = "base"
    vad: str = "silero"
    pitch_stat: str = "guarded_mean"  # guarded_mean | mean | median
    speed_source: str = "auto"  # auto | asr | text | nuclei (see stages.score.speed_key)
    # a transcript whose WER/CER against the model's text channel is above this is not trusted
    # for syllable counts (speed_source auto) or judging (judge_input auto): metrics.fidelity
    transcript_max_error: float = 0.3
    f0_floor: float = 50.0
    f0_ceil: float = 800.0
    # scoring
    pitch_st: float = 1.0
    volume_db: float = 1.0
    speed_pct: float = 5.0
    n_boot: int = 2000
    strict: bool = False
    # relevance judge and gate (stylebench.stages.judge, stylebench.relevance)
    judge: str = "offline"  # a name in stylebench.metrics.judge.JUDGES, or "none"
    judge_model: str | None = None
    judge_url: str | None = None
    judge_prompt: str | None = None  # folder with srd.txt and mrd.txt
    judge_prompt_srd: str | None = None
    judge_prompt_mrd: str | None = None
    judge_args: dict[str, str] = field(default_factory=dict)
    judge_cache: bool = True
    mrd_threshold: float = 40.0
    filter_mrd: bool = False
    # auto: ASR transcripts, except samples whose transcripts disagree with the text channel
    judge_input: str = "auto"  # auto | transcript (ASR of the reply audio) | text (text channel)
    # emotion (docs/metrics.md "Emotion")
    prosody_delta: float = 1.0  # prosodic intensity index, JND units (mean over four cues)
    emotion_probe: str = "none"  # none | emotion2vec
    probe_model: str = "iic/emotion2vec_plus_large"  # hub id or local path
    probe_delta: float = 0.05  # probe probability of the target emotion

    def __post_init__(self) -> None:
        if self.dim not in (*DIMS, "all"):
            raise ValueError(
                f"--dim must be one of {', '.join(DIMS)} or all (the acoustic dims), got {self.dim!r}"
            )
        if self.emotion_probe not in ("none", "emotion2vec"):
            raise ValueError(
                f"--emotion-probe must be emotion2vec or none, got {self.emotion_probe!r}"
            )
        for name in ("prosody_delta", "probe_delta"):
            if getattr(self, name) < 0:
                raise ValueError(f"threshold {name} must be >= 0")
        if self.lang not in (*LANGS, "all"):
            raise ValueError(f"--lang must be one of {', '.join(LANGS)} or all, got {self.lang!r}")
        if self.limit is not None and self.limit < 1:
            raise ValueError("--limit must be a positive number of samples per cell")
        if self.pitch_stat not in ("guarded_mean", "mean", "median"):
            raise ValueError(
                f"pitch_stat must be guarded_mean, mean or median, got {self.pitch_stat!r}"
            )
        if self.speed_source not in ("auto", "asr", "text", "nuclei"):
            raise ValueError(
                f"speed_source must be auto, asr, text or nuclei, got {self.speed_source!r}"
            )
        for name in ("pitch_st", "volume_db", "speed_pct"):
            if getattr(self, name) < 0:
                raise ValueError(f"threshold {name} must be >= 0")
        if self.judge_input not in ("auto", "transcript", "text"):
            raise ValueError(
                f"judge_input must be auto, transcript or text, got {self.judge_input!r}"
            )
        if not self.transcript_max_error >= 0:
            raise ValueError(
                f"--transcript-max-error must be >= 0 (a WER/CER), got {self.transcript_max_error}"
            )
        if not 0.0 <= self.mrd_threshold <= 100.0:
            raise ValueError(f"mrd_threshold is a percent in [0, 100], got {self.mrd_threshold}")
        if not self.turn_timeout_s > 0:
            raise ValueError(f"--turn-timeout-s must be > 0 seconds, got {self.turn_timeout_s}")

    @property
    def dims(self) -> tuple[str, ...]:
        return ACOUSTIC_DIMS if self.dim == "all" else (self.dim,)

    @property
    def langs(self) -> tuple[str, ...]:
        return LANGS if self.lang == "all" else (self.lang,)

    def default_run_id(self, set_checksum: str) -> str:
        lim = f"-n{self.limit}" if self.limit else ""
        return f"{self.model}-{self.dim}-{self.lang}{lim}-{set_checksum[:8]}"

    def to_dict(self) -> dict[str, Any]:
        return dataclasses.asdict(self)


def read_config_file(path: Path | str) -> dict[str, Any]:
    """Read a TOML or JSON config file into a flat dict of :class:`RunConfig` fields."""
    p = Path(path)
    if not p.is_file():
        raise FileNotFoundError(f"config file {p} does not exist")
    if p.suffix == ".toml":
        import tomllib

        data = tomllib.loads(p.read_text(encoding="utf-8"))
    elif p.suffix == ".json":
        data = json.loads(p.read_text(encoding="utf-8"))
    else:
        raise ValueError(f"config file {p} must be .toml or .json")
    known = {f.name for f in dataclasses.fields(RunConfig)}
    unknown = sorted(set(data) - known)
    if unknown:
        raise ValueError(f"config file {p}: unknown keys {unknown}; known keys: {sorted(known)}")
    return data


def resolve_config(
    cli: dict[str, Any], config_file: Path | str | None = None, base: dict[str, Any] | None = None
) -> RunConfig:
    """Merge ``base`` (e.g. a run's stored config) < config file < CLI values that are not None."""
    merged: dict[str, Any] = dict(base or {})
    if config_file:
        merged.update(read_config_file(config_file))
    merged.update({k: v for k, v in cli.items() if v is not None})
    known = {f.name for f in dataclasses.fields(RunConfig)}
    return RunConfig(**{k: v for k, v in merged.items() if k in known})


def parse_model_args(items: list[str] | None) -> dict[str, str]:
    """``["path=/w", "dtype=bf16"]`` -> dict; a malformed item raises ValueError."""
    out: dict[str, str] = {}
    for item in items or []:
        if "=" not in item:
            raise ValueError(f"--model-arg takes KEY=VALUE, got {item!r}")
        k, v = item.split("=", 1)
        out[k.strip()] = v.strip()
    return out
