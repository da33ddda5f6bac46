"""Drive the stages after respond in the order :data:`.registry.STAGES` declares them.

Each stage's current records are kept under its name (``Measured.records.of(FEATURES)``) and
handed to the later stages that declare them as inputs. A stage runs when its spec says so for
the run's config; a backend (the ASR model, the probe, the judge) is built once, and only when its
stage has work for it. ``compute=False`` collects the current records of every stage without
computing anything (``stylebench report``). Given an invocation's timings
(:class:`.timings.Invocation`), each stage that runs is clocked there: building it and its
backend, and computing its units, count as its computation; planning, loading and appending
records as the harness's.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence
from typing import Any

from stylebench.config import RunConfig
from stylebench.executors.base import Executor
from stylebench.pipeline.stage import run_stage
from stylebench.pipeline.timings import Invocation, clocked
from stylebench.records import Key, RespondRecord, RunRecords, Sample
from stylebench.stages.outputs import Measured
from stylebench.stages.registry import RESPOND, STAGES, StageInputs, with_inputs
from stylebench.store import RunStore


def measure(
    store: RunStore,
    samples: Sequence[Sample],
    cfg: RunConfig,
    replies: dict[Key, RespondRecord],
    *,
    compute: bool = True,
    progress: bool = True,
    executor: Executor | None = None,
    only: Collection[str] | None = None,
    manifest: Mapping[str, Any] | None = None,
    timings: Invocation | None = None,
) -> Measured:
    """Run (or, with ``compute=False``, only collect) every stage after respond that runs for
    ``cfg``.

    ``executor`` computes the units of the stages declared ``on_executor`` (transcribe,
    features; :mod:`stylebench.executors`). ``only`` limits the work to those stages and the
    stages they read from (``caption-eval`` needs no judge). ``manifest`` is the run's manifest
    when the caller has read it already (collecting reads the transcripts' CPU code path there).
    ``timings`` clocks each stage that runs into that invocation's ``timings.jsonl`` lines.
    """
    wanted = None if only is None else with_inputs(list(only))
    out = Measured(RunRecords({RESPOND: replies, **{spec.name: {} for spec in STAGES}}))
    kw = {"compute": compute, "strict": cfg.strict, "progress": progress}
    for spec in STAGES:
        if (wanted is not None and spec.name not in wanted) or not spec.runs(cfg, samples):
            continue
        with clocked(timings, spec.name) as clock:
            ctx = StageInputs(
                store,
                samples,
                cfg,
                RunRecords({name: out.records[name] for name in spec.input_names}),
                compute,
                manifest,
            )
            built = clock.timed(spec.build, ctx)
            try:
                res = run_stage(
                    store, built.stage, executor=executor if spec.on_executor else None, **kw
                )
            finally:
                if built.close is not None:
                    built.close()
            clock.took(res)
        out.records[spec.name], out.counts[spec.name] = res.records, res.counts
        if built.info:
            out.info[spec.name] = built.info
    return out
