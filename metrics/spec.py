"""Declared specs of the metrics: what each produces, what it needs, and its definition version."""

from __future__ import annotations

import importlib
from dataclasses import dataclass

# Modules that define a module-level ``SPEC``; imported only when ``all_specs`` is called.
METRIC_MODULES: tuple[str, ...] = (
    "stylebench.metrics.vad",
    "stylebench.metrics.pitch",
    "stylebench.metrics.energy",
    "stylebench.metrics.rate",
    "stylebench.metrics.asr",
    "stylebench.metrics.fidelity",
)


@dataclass(frozen=True)
class MetricSpec:
    """What a metric is, recorded in the run manifest so every number is traceable.

    Attributes:
        name: short id, e.g. ``"f0"``.
        version: bumped whenever the definition (not just the code) changes.
        outputs: record keys the metric produces.
        needs: inputs it must be given, e.g. ``("audio",)`` or
            ``("audio", "transcript", "speech_span")``.
        gpu: whether it needs an accelerator to run at a sensible speed.
        description: one-paragraph definition.
    """

    name: str
    version: str
    outputs: tuple[str, ...]
    needs: tuple[str, ...]
    gpu: bool = False
    description: str = ""

    def __post_init__(self) -> None:
        if not self.name or not self.version:
            raise ValueError("MetricSpec needs a non-empty name and version")
        if not self.outputs:
            raise ValueError(f"MetricSpec {self.name!r} declares no outputs")


def all_specs() -> list[MetricSpec]:
    """Import the metric modules (light: no heavy dependency loads) and return their specs.

    Raises:
        ValueError: two modules declare the same metric name or output key.
    """
    specs: list[MetricSpec] = []
    seen_names: set[str] = set()
    seen_outputs: dict[str, str] = {}
    for module_name in METRIC_MODULES:
        spec = importlib.import_module(module_name).SPEC
        if spec.name in seen_names:
            raise ValueError(f"duplicate metric name {spec.name!r} in {module_name}")
        seen_names.add(spec.name)
        for key in spec.outputs:
            if key in seen_outputs:
                raise ValueError(
                    f"output key {key!r} declared by both {seen_outputs[key]!r} and {spec.name!r}"
                )
            seen_outputs[key] = spec.name
        specs.append(spec)
    return specs
