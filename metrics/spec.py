"""Declared specs of the metrics: what each produces, what it needs, and its definition version.

The specs are used, not decorative: ``outputs`` are the exact record keys a metric writes (feature
values, transcript or probe fields), the features stage takes its definition versions from
:func:`feature_specs` into every record's fingerprint (a bumped version recomputes), rejects a
value key no spec declares (:func:`check_declared`), and the manifest records every spec.
"""

from __future__ import annotations

import dataclasses
import importlib
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

# Modules that define a module-level ``SPEC``; imported only when ``all_specs`` is called.
METRIC_MODULES: tuple[str, ...] = (
    "stylebench.metrics.vad",
    "stylebench.metrics.pitch",
    "stylebench.metrics.energy",
    "stylebench.metrics.rate",
    "stylebench.metrics.validity",
    "stylebench.metrics.alignment",
    "stylebench.metrics.asr.backends",
    "stylebench.metrics.fidelity",
    "stylebench.metrics.prosody",
    "stylebench.metrics.emotion_probe",
    "stylebench.metrics.quality",
)
#: the metrics whose outputs are the value keys of a features record
FEATURE_METRICS: tuple[str, ...] = (
    "vad",
    "rms",
    "f0",
    "prosodic_emotion",
    "rate",
    "asr_text_er",
    "validity",
    "alignment",
    "dnsmos",
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


def dim_modules() -> tuple[str, ...]:
    """The dimension modules (:data:`stylebench.metrics.dims.names.DIMENSIONS`): one that
    measures a feature value of its own declares its ``SPEC`` there, and the features stage
    carries it."""
    from stylebench.metrics.dims.names import DIMENSIONS

    return tuple(path.split(":")[0] for path in DIMENSIONS.values())


def all_specs() -> list[MetricSpec]:
    """Import the metric modules (light: no heavy dependency loads) and return their specs.

    Raises:
        ValueError: two modules declare the same metric name or output key.
    """
    specs: list[MetricSpec] = []
    seen_names: set[str] = set()
    seen_outputs: dict[str, str] = {}
    for module_name in METRIC_MODULES + dim_modules():
        spec = getattr(importlib.import_module(module_name), "SPEC", None)
        if spec is None:  # a dimension that measures nothing of its own
            continue
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


def feature_specs() -> list[MetricSpec]:
    """The specs of the metrics the features stage computes, in :data:`FEATURE_METRICS` order."""
    by_name = {s.name: s for s in all_specs()}
    own = [
        s.name
        for m in dim_modules()
        if (s := getattr(importlib.import_module(m), "SPEC", None)) is not None
    ]
    return [by_name[name] for name in (*FEATURE_METRICS, *own)]


def check_declared(values: Mapping[str, Any]) -> None:
    """Raise ``RuntimeError`` when a feature value key is declared by no spec (a bug: every
    stored number must be traceable to a definition and its version)."""
    declared = {key for s in feature_specs() for key in s.outputs}
    extra = sorted(set(values) - declared)
    if extra:
        raise RuntimeError(f"feature keys with no metric spec: {extra}; declare them in a SPEC")


def manifest_entry() -> list[dict[str, Any]]:
    """Every spec as plain data, for the run manifest."""
    return [dataclasses.asdict(s) for s in all_specs()]
