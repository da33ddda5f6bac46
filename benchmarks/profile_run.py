"""Where the time of a run goes: each stage's share of the wall time, and the harness overhead.

A reference run on the default dialogue set (``--model reference --dim all --lang all --limit 2``
unless told otherwise) into a temporary folder, then the same command again (a resume: every
record reused, nothing computed), each printed as the table ``stylebench report RUN --timings``
shows, from the run folder's ``timings.jsonl``. The harness overhead is the wall time less
every stage's compute time (building backends and computing units): planning, loading and
appending records, fingerprints, the manifest, the dialogue set. The target is under 2% of a
run that computes; a resume computes nothing, so its overhead is most of it and is shown in
seconds, as a ratio of the run it resumes.

Then the records of the run are read back as ``stylebench report`` reads them (every stage,
fingerprint-filtered, validated), with each record's schema resolved once per record type and,
as a baseline in the same process, once per record (the code before docs/scale.md's fix).

With ``--cprofile N`` the first run is profiled and the N functions of stylebench's own code
(the harness and the stages, not the models) with the most time of their own are printed.

    python benchmarks/profile_run.py [--model reference] [--dim all] [--lang all] [--limit 2]
        [--set asr=none --set judge=none ...] [--cprofile 25] [--keep DIR]

The machine's load average is printed before and after: absolute times move with it, shares
much less.
"""

from __future__ import annotations

import argparse
import os
import tempfile
import time
from pathlib import Path
from typing import Any


def conditions() -> str:
    from stylebench.executors.serial import cores

    load = " ".join(f"{x:.1f}" for x in os.getloadavg())
    return f"cores available {cores()}, load average (1/5/15 min) {load}"


def parse_sets(pairs: list[str]) -> dict[str, Any]:
    """``KEY=VALUE`` config overrides; numbers become numbers."""
    out: dict[str, Any] = {}
    for pair in pairs:
        key, _, value = pair.partition("=")
        for kind in (int, float):
            try:
                out[key] = kind(value)
                break
            except ValueError:
                continue
        else:
            out[key] = value
    return out


def timed_run(cfg: Any, profile: Any = None) -> float:
    from stylebench.commands.runs import run

    t0 = time.perf_counter()
    if profile is not None:
        profile.enable()
    try:
        run(cfg, progress=False)
    finally:
        if profile is not None:
            profile.disable()
    return time.perf_counter() - t0


def read_back(root: Path, per_record_schema: bool) -> tuple[float, int]:
    """Seconds to collect every stage's current records of the run (as ``report`` does), and
    how many; ``per_record_schema`` resolves each record's type hints anew, as before the fix."""
    from stylebench import records
    from stylebench.commands.runs import open_stored
    from stylebench.stages.runner import measure

    stored = open_stored(root)
    cached = records._schema  # noqa: SLF001 - the baseline swaps the cache out, then back
    if per_record_schema:
        records._schema = cached.__wrapped__  # noqa: SLF001
    try:
        t0 = time.perf_counter()
        measured = measure(
            stored.store,
            stored.samples,
            stored.cfg,
            stored.replies(),
            compute=False,
            progress=False,
            manifest=stored.manifest,
        )
        took = time.perf_counter() - t0
    finally:
        records._schema = cached  # noqa: SLF001
    n = sum(len(r) for r in measured.records.values())
    return took, n


def print_profile(profile: Any, top: int) -> None:
    import pstats

    root = str(Path(__file__).resolve().parents[1])
    stats = pstats.Stats(profile)
    rows = []
    for (path, line, name), (_, ncalls, tottime, cumtime, _) in stats.stats.items():
        if path.startswith(root) and "/benchmarks/" not in path:
            rows.append(
                (tottime, cumtime, ncalls, f"{Path(path).relative_to(root)}:{line}({name})")
            )
    rows.sort(reverse=True)
    print(f"\ncProfile, stylebench's own code, by own time (top {top}):")
    print(f"{'own s':>8} {'cum s':>8} {'calls':>8}  function")
    for tottime, cumtime, ncalls, where in rows[:top]:
        print(f"{tottime:8.3f} {cumtime:8.3f} {ncalls:8d}  {where}")


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--model", default="reference")
    p.add_argument("--dim", default="all")
    p.add_argument("--lang", default="all")
    p.add_argument("--limit", type=int, default=2)
    p.add_argument("--set", action="append", default=[], metavar="KEY=VALUE")
    p.add_argument("--cprofile", type=int, default=0, metavar="N")
    p.add_argument("--keep", type=Path, default=None, help="run folder parent (else a temp dir)")
    args = p.parse_args()

    from stylebench.config import make_config
    from stylebench.pipeline.timings import OVERHEAD_TARGET, timings_block
    from stylebench.report.sections.timings import timings_markdown
    from stylebench.store import RunStore

    print(f"start: {conditions()}")
    with tempfile.TemporaryDirectory(prefix="stylebench-profile-") as tmp:
        out = args.keep or Path(tmp)
        cfg = make_config(
            model=args.model,
            dim=args.dim,
            lang=args.lang,
            limit=args.limit,
            out=str(out),
            run_id="profile",
            **parse_sets(args.set),
        )
        profile = None
        if args.cprofile:
            import cProfile

            profile = cProfile.Profile()
        first = timed_run(cfg, profile)
        again = timed_run(cfg)
        root = out / "profile"
        block = timings_block(RunStore(root).read_timings())
        print("\n".join(timings_markdown(block)))
        run_inv, resume_inv = block["invocations"][-2:]
        share = run_inv["harness_share"]
        verdict = "under" if share < OVERHEAD_TARGET else "ABOVE"
        print(
            f"run: {first:.2f} s measured around the call, {run_inv['wall_s']:.2f} s recorded; "
            f"harness overhead {run_inv['harness_s']:.2f} s = {100 * share:.2f}% of the run, "
            f"{verdict} the {100 * OVERHEAD_TARGET:g}% target"
        )
        print(
            f"resume: {again:.2f} s, {resume_inv['wall_s'] / run_inv['wall_s']:.3f}x the run "
            f"(harness {resume_inv['harness_s']:.2f} s; everything reused, nothing computed)"
        )
        reads = {True: [], False: []}
        for _ in range(3):  # alternating, best of three: the file cache is warm for both
            for per_record in (True, False):
                took, n = read_back(root, per_record_schema=per_record)
                reads[per_record].append(took)
        slow, fast = min(reads[True]), min(reads[False])
        print(
            f"reading back {n} records: schema per record {slow:.3f} s, per record type "
            f"{fast:.3f} s, ratio {slow / fast:.2f}x"
        )
        if profile is not None:
            print_profile(profile, args.cprofile)
    print(f"end: {conditions()}")


if __name__ == "__main__":
    main()
