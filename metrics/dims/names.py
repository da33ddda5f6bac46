"""The dimension registry: each dimension's name and where its class lives, nothing else.

Kept apart from :mod:`stylebench.metrics.dims.base` so that modules below the dimensions (the
metric spec registry) can list the dimension modules without importing them. Adding a dimension
is one line here and its module beside this file.
"""

from __future__ import annotations

DIMENSIONS: dict[str, str] = {
    "speed": "stylebench.metrics.dims.speed:Speed",
    "volume": "stylebench.metrics.dims.volume:Volume",
    "pitch": "stylebench.metrics.dims.pitch:Pitch",
    "emotion": "stylebench.metrics.dims.emotion:Emotion",
    "expressiveness": "stylebench.metrics.dims.expressiveness:Expressiveness",
}
