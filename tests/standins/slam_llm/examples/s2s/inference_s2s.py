"""Stand-in for SLAM-LLM examples/s2s/inference_s2s.py: its ``RunConfig`` structured config.

The real one is built from s2s_config.py's dataclasses; this stand-in keeps the fields the
multi-round online path reads, with the same names and defaults.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Optional


@dataclass
class ModelConfig:
    file: str = "examples/s2s/model/slam_model_s2s.py:model_factory"
    code_type: str = "SNAC"
    encoder_name: Optional[str] = None  # noqa: UP045 - OmegaConf structured configs
    codec_decoder_type: str = "SNAC"
    codec_decoder_path: Optional[str] = None  # noqa: UP045


@dataclass
class DataConfig:
    prompt: Optional[str] = None  # noqa: UP045 - set by conf/prompt.yaml, as in the real one
    do_layershift: bool = True


@dataclass
class DecodeConfig:
    do_sample: bool = False
    max_new_tokens: int = 256
    temperature: float = 1.0
    top_k: int = 50
    top_p: float = 1.0
    decode_text_only: bool = False


@dataclass
class TrainConfig:
    seed: int = 42


@dataclass
class RunConfig:
    dataset_config: DataConfig = field(default_factory=DataConfig)
    model_config: ModelConfig = field(default_factory=ModelConfig)
    train_config: TrainConfig = field(default_factory=TrainConfig)
    decode_config: DecodeConfig = field(default_factory=DecodeConfig)
    ckpt_path: str = "output/model.pt"
    speech_sample_rate: int = 24000
    audio_prompt_path: Optional[str] = None  # noqa: UP045
    multi_round: bool = False
