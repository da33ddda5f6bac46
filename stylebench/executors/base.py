"""What every executor does, and the one place that picks one from the configuration.

An executor has ``map(stage, units, done)``, yielding ``(unit, records)`` pairs for
:func:`stylebench.pipeline.stage.run_stage` to append; ``build(factory)``, the model as the
driver holds it (the model itself, or a handle on remote actors); and ``close()``.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping, Sequence
from typing import Any, Protocol

from stylebench.executors.config import ExecutorConfig
from stylebench.pipeline.stage import Unit


class Executor(Protocol):
    def map(
        self, stage: Any, units: Sequence[Unit], done: Mapping[Any, Any]
    ) -> Iterator[tuple[Unit, Iterable[Any]]]: ...

    def build(self, factory: Any) -> Any: ...

    def close(self) -> None: ...


def make_executor(cfg: ExecutorConfig) -> Any:
    """The executor ``cfg`` names; Ray is imported only for ``--executor ray``.

    Raises:
        MissingExtraError: ``--executor ray`` without Ray installed (names the extra).
    """
    if cfg.executor == "ray":
        from stylebench.executors.ray_executor import RayExecutor

        return RayExecutor(cfg)
    from stylebench.executors.serial import SerialExecutor

    return SerialExecutor(cfg.feature_workers)
