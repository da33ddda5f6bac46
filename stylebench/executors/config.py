"""The executor's settings: a section of the run configuration (``RunConfig.executor``).

Declared with the same field metadata as :func:`stylebench.config.option` (help, commands,
choices, metavar), so the flags of ``run`` and ``score`` generate themselves. Where work runs
changes no record, with one exception: how the ASR decodes (``asr_device``, ``asr_batch_size``)
can change a transcript, so a non-default choice is part of the transcript's key.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

from stylebench.errors import BadValue

COMMANDS = ("run", "score")
#: the settings that also say where ``build-dialogues`` synthesises and checks its turns
BUILD = (*COMMANDS, "build-dialogues")
EXECUTORS = ("serial", "ray")
ASR_DEVICES = ("cpu", "cuda")


def _opt(default: Any, help: str, commands: tuple[str, ...] = COMMANDS, **cli: Any) -> Any:
    return field(default=default, metadata={"help": help, "commands": commands, **cli})


@dataclass(frozen=True)
class ExecutorConfig:
    """Where the stages' work runs (docs/scale.md)."""

    executor: str = _opt(
        "serial",
        "serial (this process; features in a process pool) or ray (Ray core: model actors, ASR actors, feature tasks; build-dialogues: synthesis and check actors)",
        BUILD,
        choices=EXECUTORS,
    )
    ray_address: str | None = _opt(
        None,
        "--executor ray: the cluster to join (auto, or ray://HOST:10001); default a local Ray on this machine's cores",
        BUILD,
        metavar="ADDRESS",
    )
    workers: int = _opt(
        2,
        "--executor ray: model actors (respond) and ASR actors (transcribe); build-dialogues: actors that synthesise and check turns",
        BUILD,
        metavar="N",
    )
    gpus_per_worker: float = _opt(
        0.0,
        "--executor ray: GPUs per model, ASR or synthesis actor (fractions share a GPU)",
        BUILD,
        metavar="G",
    )
    asr_device: str = _opt(
        "cpu",
        "where the ASR runs: cpu (int8) or cuda (float16; with --executor ray, on the ASR actors' GPUs)",
        choices=ASR_DEVICES,
    )
    asr_batch_size: int = _opt(
        1,
        "replies transcribed together by faster-whisper's batched pipeline (docs/scale.md#batched-transcription)",
        metavar="N",
    )
    asr_workers: int = _opt(
        0,
        "replies the ASR decodes at once in this process, each alone on its own model replica (same transcripts): 0 = one per core, at most 4; 1 = one at a time",
        metavar="N",
    )
    feature_workers: int = _opt(
        0,
        "processes measuring features: 0 = one per core (in this process when there are few samples), 1 = in this process",
        metavar="N",
    )

    def __post_init__(self) -> None:
        if self.executor not in EXECUTORS:
            raise BadValue(
                f"--executor must be one of {', '.join(EXECUTORS)}, got {self.executor!r}"
            )
        if self.asr_device not in ASR_DEVICES:
            raise BadValue(f"--asr-device must be cpu or cuda, got {self.asr_device!r}")
        for name, low in (
            ("workers", 1),
            ("gpus_per_worker", 0),
            ("feature_workers", 0),
            ("asr_workers", 0),
            ("asr_batch_size", 1),
        ):
            v = getattr(self, name)
            if (
                isinstance(v, bool)
                or not isinstance(v, (int, float))
                or not math.isfinite(v)
                or v < low
            ):
                raise BadValue(f"--{name.replace('_', '-')} must be a number >= {low}, got {v!r}")
        for name in ("workers", "feature_workers", "asr_workers", "asr_batch_size"):
            if not isinstance(getattr(self, name), int):
                raise BadValue(
                    f"--{name.replace('_', '-')} must be a whole number, got {getattr(self, name)!r}"
                )
