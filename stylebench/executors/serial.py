"""The serial executor: every unit in this process, except stateless ones in a process pool.

A stage whose units need nothing resident (``resident is None``: features) is computed by a pool
of processes on this machine, one per core by default (``--feature-workers``). The jobs read the
run folder in place (same machine), the results come back in unit order, and the driver appends
them, so the stage file is the same, line for line, as the one an in-process run writes (but for
each record's ``elapsed_s``, timed in the process that computed it). Stages
with a resident model run here. A stage whose resident can compute several units at once from
threads (``concurrency`` > 1: the transcribe stage with ``--asr-workers``) gets a pool of that
many threads; its results too come back in unit order.

As with any Python process pool, a script that calls :func:`stylebench.commands.runs.run`
must guard its entry point (``if __name__ == "__main__":``): the pool's processes import it.
"""

from __future__ import annotations

import contextlib
import logging
import os
from collections import deque
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from typing import Any

from stylebench.pipeline.stage import Unit, WorkerLost, timed

log = logging.getLogger(__name__)
#: with ``--feature-workers 0``, a stage with fewer units than this per core stays in process:
#: starting the pool's processes costs about as much as measuring a few samples
MIN_UNITS_PER_PROCESS = 4


def cores() -> int:
    """The cores this process may run on (its affinity, not the machine's count)."""
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # not Linux
        return os.cpu_count() or 1


def pool_size(requested: int, n_units: int) -> int:
    """Processes for ``n_units`` stateless units: ``requested``, or with 0 one per core unless
    the stage is small. 1 means in this process."""
    if requested:
        return min(requested, max(n_units, 1))
    n = cores()
    return n if n_units >= MIN_UNITS_PER_PROCESS * n else 1


def collect(records: Callable[[], Iterable[Any]]) -> tuple[bool, Any]:
    """The records, each timed here (the driver only waits), or the exception raised making
    them (handed back and re-raised in the driver, which decides what it means)."""
    try:
        return True, list(timed(records()))
    except Exception as exc:
        return False, exc


def run_job(job: Any) -> tuple[bool, Any]:
    """A job's outcomes in a pool process (see :func:`collect`)."""
    return collect(lambda: job.run(None))


def stateless(stage: Any) -> bool:
    return hasattr(stage, "job") and getattr(stage, "resident", "") is None


class SerialExecutor:
    """Units in this process; stateless ones (features) in a local process pool."""

    def __init__(self, feature_workers: int = 0) -> None:
        self.feature_workers = feature_workers

    def __enter__(self) -> SerialExecutor:
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    def close(self) -> None:
        pass

    def build(self, factory: Any) -> Any:
        """The model (or other resident) for the stages that run here."""
        return factory()

    def map(
        self, stage: Any, units: Sequence[Unit], done: Mapping[Any, Any]
    ) -> Iterator[tuple[Unit, Iterable[Any]]]:
        if stateless(stage):
            n = pool_size(self.feature_workers, len(units))
            if n > 1:
                yield from self._pooled(stage, units, done, n)
                return
        elif len(units) > 1:  # asked only when there is work to share: it may build the model
            n = min(getattr(stage, "concurrency", 1), len(units))
            if n > 1:
                yield from threaded(stage, units, done, n)
                return
        for u in units:
            yield u, stage.compute(u, done)

    def _pooled(
        self, stage: Any, units: Sequence[Unit], done: Mapping[Any, Any], n: int
    ) -> Iterator[tuple[Unit, Iterable[Any]]]:
        import multiprocessing
        from concurrent.futures import ProcessPoolExecutor
        from concurrent.futures.process import BrokenProcessPool

        log.info("%s: %d units on %d processes", stage.name, len(units), n)
        # forkserver: workers start from a clean process, not a fork of one holding threads; it
        # preloads the stage's module (not the caller's __main__, which may not be import-safe)
        ctx = multiprocessing.get_context("forkserver")
        ctx.set_forkserver_preload([type(stage).__module__])
        with ProcessPoolExecutor(n, mp_context=ctx) as pool:
            futures = [pool.submit(run_job, stage.job(u, done)) for u in units]
            for u, fut in zip(units, futures, strict=True):
                try:
                    ok, value = fut.result()
                except BrokenProcessPool as exc:
                    yield u, _raise(WorkerLost(f"a feature process died ({exc}); re-run to retry"))
                    continue
                yield u, stage.accept(u, value, done) if ok else _raise(value)


def threaded(
    stage: Any, units: Sequence[Unit], done: Mapping[Any, Any], n: int
) -> Iterator[tuple[Unit, Iterable[Any]]]:
    """``stage.compute`` of ``n`` units at once on threads, results in unit order.

    At most ``2 n`` units are submitted ahead of the one being handed back, so an interrupted
    run has little computed and not yet appended; on the way out (the stage ends, fails or is
    interrupted) units not yet started are cancelled and running ones finish. A stage's
    ``holding()`` context, if it has one, is held here around the threads' whole lifetime.
    """
    from concurrent.futures import ThreadPoolExecutor

    log.info("%s: %d units, %d at a time", stage.name, len(units), n)
    ahead = iter(units)
    pending: deque[tuple[Unit, Any]] = deque()
    with getattr(stage, "holding", contextlib.nullcontext)():
        pool = ThreadPoolExecutor(n, thread_name_prefix=f"stylebench-{stage.name}")

        def submit() -> None:
            u = next(ahead, None)
            if u is not None:
                pending.append((u, pool.submit(collect, lambda: stage.compute(u, done))))

        try:
            for _ in range(2 * n):
                submit()
            while pending:
                u, fut = pending.popleft()
                submit()
                ok, value = fut.result()
                yield u, value if ok else _raise(value)
        finally:
            pool.shutdown(wait=True, cancel_futures=True)


def _raise(exc: BaseException) -> Iterator[Any]:
    raise exc
    yield  # a generator: the loop sees the exception while reading the unit's records
