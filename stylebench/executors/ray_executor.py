"""The Ray executor (``--executor ray``, Ray core only; the ``ray`` extra).

- respond: ``--workers`` actors, each building the model once (in process, or through the worker
  adapter in its own environment with ``--worker-python``); the unit is one sample, so its three
  turns run in order on one actor. ``--gpus-per-worker`` GPUs each (fractions share a GPU).
- transcribe: the same number of actors holding the ASR model, fed one unit (a batch with
  ``--asr-batch-size``) at a time.
- features: stateless tasks, one CPU each.

Nothing here writes the run folder. Every job is sent with its audio as bytes (no shared
filesystem is assumed); what comes back goes to the stage's ``accept`` in the driver, which writes
each wav atomically and then the record. An actor whose process dies fails its unit as
:class:`~stylebench.pipeline.stage.WorkerLost` (error records, retried by the next run) and is
restarted by Ray for the units after it. Where a record was computed (node, actor, process, GPUs)
goes into its ``raw`` under ``"executor"``, never into a fingerprint.
"""

from __future__ import annotations

import logging
import os
import re
from collections.abc import Iterable, Iterator, Mapping, Sequence
from typing import Any

from stylebench.executors.config import ExecutorConfig
from stylebench.pipeline.stage import Unit, WorkerLost, timed
from stylebench.registry import MissingExtraError

log = logging.getLogger(__name__)
#: tasks in flight per CPU of the cluster (bounded: jobs carry audio bytes)
TASKS_PER_CPU = 2
#: the most seconds a lost actor is waited for (Ray restarts it) before it takes units again
RESTART_WAIT_S = 120.0
#: thread settings the workers take from the driver. Ray sets OMP_NUM_THREADS=1 in its workers;
#: numpy's BLAS reads it when it loads, and Whisper's log-mel features (a matrix product) then sum
#: in another order: measured here, 4 of 36 reference replies transcribed differently by Whisper
#: base with 1 BLAS thread than with 2 (this machine's default). Unset in the driver means the
#: BLAS default, one thread per core.
THREAD_VARS = ("OMP_NUM_THREADS", "MKL_NUM_THREADS", "OPENBLAS_NUM_THREADS")


def thread_env() -> dict[str, str]:
    """The driver's BLAS thread settings, for the workers' runtime environment."""
    from stylebench.executors.serial import cores

    env = {k: v for k in THREAD_VARS if (v := os.environ.get(k)) is not None}
    env.setdefault("OMP_NUM_THREADS", str(cores()))
    return env


def import_ray() -> Any:
    try:
        import ray
    except ImportError:
        raise MissingExtraError("--executor ray needs Ray: pip install 'stylebench[ray]'") from None
    return ray


def provenance(role: str, index: int | None = None) -> dict[str, Any]:
    """Where this Ray worker runs: node, actor, process and GPUs."""
    import ray

    ctx = ray.get_runtime_context()
    actor = ctx.get_actor_id()
    out: dict[str, Any] = {
        "kind": "ray",
        "role": role,
        "node": ray.util.get_node_ip_address(),
        "node_id": ctx.get_node_id(),
        "pid": os.getpid(),
        "gpus": [str(g) for g in ray.get_gpu_ids()],
    }
    if actor:
        out.update(actor=actor, worker=index)
    return out


def why(exc: BaseException) -> str:
    """Ray's account of a lost worker in one line: its first line and, when the actor failed to
    start, the error that stopped it (the message's last line)."""
    lines = [re.sub(r"\x1b\[[0-9;]*m", "", ln).strip() for ln in str(exc).splitlines()]
    lines = [ln for ln in lines if ln]
    if not lines:
        return type(exc).__name__
    head = lines[0].split(" (pid=")[0][:200]
    return head if len(lines) == 1 else f"{head}: {lines[-1][:300]}"


class Host:
    """A Ray actor's body: builds its resident (model, ASR) once and runs jobs on it."""

    def __init__(self, factory: Any, role: str, index: int) -> None:
        self.factory, self.role, self.index = factory, role, index
        self.resident: Any = None

    def _get(self) -> Any:
        if self.resident is None:
            self.resident = self.factory()
        return self.resident

    def describe(self) -> dict[str, Any]:
        return self._get().describe()

    def run(self, job: Any) -> tuple[bool, Any]:
        try:
            where = provenance(self.role, self.index)
            return True, list(timed(job.run(self._get(), where)))  # timed where computed
        except Exception as exc:  # handed back: the driver re-raises it in its loop
            return False, exc

    def close(self) -> None:
        getattr(self.resident, "close", lambda: None)()

    def ready(self) -> bool:
        """Answers once the actor runs (a restarted one too); builds nothing."""
        return True


def run_task(job: Any) -> tuple[bool, Any]:
    """A stateless job as a Ray task."""
    try:
        return True, list(timed(job.run(None, provenance("task"))))
    except Exception as exc:
        return False, exc


class PoolModel:
    """What the driver holds in place of the model: its description, asked of actor 0."""

    def __init__(self, executor: RayExecutor, factory: Any) -> None:
        self.executor, self.factory = executor, factory

    def describe(self) -> dict[str, Any]:
        return self.executor.get(self.executor.pool(self.factory)[0].describe.remote())

    def close(self) -> None:
        self.executor.release(self.factory)


#: the settings of a local Ray this package starts (tests and benchmarks that start their own use
#: them too): workers at the driver's priority instead of Ray's niceness 15
LOCAL_RAY_SYSTEM_CONFIG: dict[str, Any] = {"worker_niceness": 0}


class RayExecutor:
    """Units on a Ray cluster (a local one, started here, unless ``ray_address`` is given)."""

    def __init__(self, cfg: ExecutorConfig, *, num_cpus: int | None = None) -> None:
        self.ray = ray = import_ray()
        self.cfg = cfg
        self.started = False
        if not ray.is_initialized():
            if cfg.ray_address:
                ray.init(address=cfg.ray_address, log_to_driver=False)
            else:
                from stylebench.executors.serial import cores

                # Ray starts its workers at niceness 15 by default, so on a machine with other
                # work the units of a local run got what that work left (a Ray build of a dialogue
                # set ran 12x slower than a serial one beside a test suite); the workers are this
                # run's compute and get the driver's priority (docs/scale.md)
                ray.init(
                    num_cpus=num_cpus or cores(),
                    include_dashboard=False,
                    log_to_driver=False,
                    _system_config=LOCAL_RAY_SYSTEM_CONFIG,
                )
            self.started = True
        self.pools: dict[str, list[Any]] = {}

    def __enter__(self) -> RayExecutor:
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    def close(self) -> None:
        for key in list(self.pools):
            self._kill(self.pools.pop(key))
        if self.started:
            self.ray.shutdown()
            self.started = False

    def get(self, ref: Any) -> Any:
        """``ray.get``, with a failure inside the worker raised as its own exception."""
        try:
            return self.ray.get(ref)
        except self.ray.exceptions.RayTaskError as exc:
            raise (exc.cause if isinstance(exc.cause, BaseException) else exc) from None

    def build(self, factory: Any) -> PoolModel:
        return PoolModel(self, factory)

    def pool(self, factory: Any) -> list[Any]:
        """The actors hosting ``factory``'s resident, started on first use."""
        key = repr(factory)
        if key not in self.pools:
            remote = self.ray.remote(
                num_cpus=1,
                num_gpus=self.cfg.gpus_per_worker,
                max_restarts=-1,
                max_task_retries=0,
                runtime_env={"env_vars": thread_env()},
            )(Host)
            role = type(factory).__name__
            self.pools[key] = [remote.remote(factory, role, i) for i in range(self.cfg.workers)]
        return self.pools[key]

    def release(self, factory: Any) -> None:
        actors = self.pools.pop(repr(factory), None)
        if actors:
            self._kill(actors)

    def _kill(self, actors: list[Any]) -> None:
        refs = [a.close.remote() for a in actors]
        self.ray.wait(refs, num_returns=len(refs), timeout=30)
        for a in actors:
            self.ray.kill(a)

    def map(
        self, stage: Any, units: Sequence[Unit], done: Mapping[Any, Any]
    ) -> Iterator[tuple[Unit, Iterable[Any]]]:
        if not units:
            return
        if not hasattr(stage, "job"):  # not portable (probe, judge): computed here
            for u in units:
                yield u, stage.compute(u, done)
            return
        if stage.resident is None:
            yield from self._tasks(stage, units, done)
            return
        free = list(self.pool(stage.resident))
        yield from self._dispatch(
            stage, units, done, lambda job, actor: actor.run.remote(job), free
        )
        self.release(stage.resident)

    def _tasks(
        self, stage: Any, units: Sequence[Unit], done: Mapping[Any, Any]
    ) -> Iterator[tuple[Unit, Iterable[Any]]]:
        task = self.ray.remote(num_cpus=1, runtime_env={"env_vars": thread_env()})(run_task)
        slots = [None] * max(1, int(self.ray.cluster_resources().get("CPU", 1)) * TASKS_PER_CPU)
        yield from self._dispatch(stage, units, done, lambda job, _slot: task.remote(job), slots)

    def _dispatch(
        self,
        stage: Any,
        units: Sequence[Unit],
        done: Mapping[Any, Any],
        submit: Any,
        free: list[Any],
    ) -> Iterator[tuple[Unit, Iterable[Any]]]:
        """Keep every slot (an actor, or a task slot) busy; hand results back as they come."""
        pending = iter(units)
        inflight: dict[Any, tuple[Unit, Any]] = {}
        while True:
            while free and (u := next(pending, None)) is not None:
                slot = free.pop()
                # built when sent, so it sees the records the driver has kept so far
                inflight[submit(stage.job(u, done).shipped(), slot)] = (u, slot)
            if not inflight:
                return
            (ref,), _ = self.ray.wait(list(inflight), num_returns=1)
            u, slot = inflight.pop(ref)
            if slot is not None and self._lost(ref):
                self._await_restart(slot)
            free.append(slot)
            yield u, self._records(stage, u, ref, done)

    def _lost(self, ref: Any) -> bool:
        """The actor that computed ``ref`` died (its process exited) before answering."""
        try:
            self.ray.get(ref)
        except (self.ray.exceptions.RayActorError, self.ray.exceptions.WorkerCrashedError):
            return True
        except Exception:  # the unit's own failure: _records hands it back
            return False
        return False

    def _await_restart(self, actor: Any) -> None:
        """Wait until Ray has restarted a lost actor (``max_restarts=-1``) before it gets the
        next unit: a unit sent in the moment before Ray marks the actor as restarting goes to
        the dead process and would be lost too (more of them the busier the machine). After
        :data:`RESTART_WAIT_S` the actor takes units again whatever its state; a unit it loses
        is an error record, as the first one is."""
        import time

        until = time.monotonic() + RESTART_WAIT_S
        while time.monotonic() < until:
            try:
                self.ray.get(actor.ready.remote(), timeout=max(1.0, until - time.monotonic()))
                return
            except (self.ray.exceptions.RayActorError, self.ray.exceptions.WorkerCrashedError):
                time.sleep(0.5)
            except self.ray.exceptions.GetTimeoutError:
                return

    def _records(self, stage: Any, unit: Unit, ref: Any, done: Mapping[Any, Any]) -> Iterator[Any]:
        try:
            ok, value = self.get(ref)
        except (self.ray.exceptions.RayActorError, self.ray.exceptions.WorkerCrashedError) as exc:
            raise WorkerLost(
                f"the Ray worker computing {unit.id} died ({why(exc)}); re-run to retry"
            ) from None
        if not ok:
            raise value
        yield from stage.accept(unit, value, done)
