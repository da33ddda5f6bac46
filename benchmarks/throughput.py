"""Throughput of the executors, each printed as a ratio against a baseline measured in this run.

1. features: one process vs a pool of N processes (``--feature-workers``), on the same replies;
   the two outputs are checked to be identical.
2. ``run`` of an embedded model: ``--executor serial`` vs ``--executor ray --workers N`` (a local
   Ray; its start-up is timed apart and left out of the ratio); reports and wavs compared.
3. ASR: Whisper base one reply at a time vs the batched first pass (``--asr-batch-size``), on
   the same replies; the transcripts are compared.

Every process runs single-threaded BLAS (so N processes use N cores, no more). The machine's
load average is printed before and after: on a shared machine the ratios move with it.

    python benchmarks/throughput.py [--limit 2] [--workers 2] [--batch 8] [--skip-asr] [--skip-ray]
"""

from __future__ import annotations

import argparse
import os

for _var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS", "NUMBA_NUM_THREADS"):
    os.environ.setdefault(_var, "1")

import hashlib  # noqa: E402
import json  # noqa: E402
import shutil  # noqa: E402
import sys  # noqa: E402
import tempfile  # noqa: E402
import time  # noqa: E402
from pathlib import Path  # noqa: E402
from typing import Any  # noqa: E402

FAST = {"asr": "none", "vad": "silero", "n_boot": 200, "judge": "none", "speed_source": "text"}


def conditions() -> str:
    from stylebench.executors.serial import cores

    load = " ".join(f"{x:.1f}" for x in os.getloadavg())
    return f"cores available {cores()}, load average (1/5/15 min) {load}"


def wav_hashes(root: Path) -> dict[str, str]:
    return {
        p.name: hashlib.sha256(p.read_bytes()).hexdigest()
        for p in sorted((root / "audio").glob("*.wav"))
    }


def timed_run(out: Path, **kw: Any) -> tuple[float, Any]:
    from stylebench.commands.runs import run
    from stylebench.config import make_config

    t0 = time.perf_counter()
    res = run(make_config(out=str(out), run_id="r", **kw), progress=False)
    return time.perf_counter() - t0, res


def bench_features(src: Path, workers: int) -> None:
    """Features of the replies of run folder ``src``, in 1 process and in ``workers``."""
    import soundfile as sf

    from stylebench.commands.runs import open_stored
    from stylebench.executors.serial import SerialExecutor
    from stylebench.pipeline.stage import run_stage
    from stylebench.stages.features import FeaturesStage
    from stylebench.stages.registry import feature_config
    from stylebench.store import RunStore

    stored = open_stored(src)
    replies = stored.replies()
    seconds = sum(
        sf.info(str(src / r.audio)).duration for r in replies.values() if r.status == "ok"
    )
    times, files = {}, {}
    for n in (1, workers):
        dest = src.parent / f"features-{n}"
        shutil.copytree(src, dest, ignore=shutil.ignore_patterns("features.jsonl", ".lock"))
        store = RunStore(dest)
        stage = FeaturesStage(store, stored.samples, replies, {}, feature_config(stored.cfg))
        t0 = time.perf_counter()
        res = run_stage(store, stage, executor=SerialExecutor(n))
        times[n] = time.perf_counter() - t0
        files[n] = store.stage_path("features").read_text()
        assert res.counts["error"] == 0, res.counts
    same = "identical" if files[1] == files[workers] else "DIFFERENT"
    print(
        f"features: {len(stored.samples)} samples, {seconds:.0f} s of replies; 1 process "
        f"{times[1]:.1f} s ({seconds / times[1]:.1f}x realtime), {workers} processes "
        f"{times[workers]:.1f} s ({seconds / times[workers]:.1f}x realtime)"
    )
    print(
        f"  ratio {workers} processes / 1 process: {times[1] / times[workers]:.2f}x throughput; records {same}"
    )


def bench_run(root: Path, kw: dict[str, Any], workers: int) -> Path:
    """``run`` serially (features in one process) and on a local Ray with ``workers`` actors."""
    import ray

    from stylebench.executors.ray_executor import LOCAL_RAY_SYSTEM_CONFIG

    t_serial, serial = timed_run(root / "serial", feature_workers=1, **kw)
    t0 = time.perf_counter()
    ray.init(include_dashboard=False, log_to_driver=False, _system_config=LOCAL_RAY_SYSTEM_CONFIG)
    t_init = time.perf_counter() - t0
    try:
        t_ray, par = timed_run(root / "ray", executor="ray", workers=workers, **kw)
    finally:
        ray.shutdown()
    same = (serial.store.root / "report.json").read_text() == (
        par.store.root / "report.json"
    ).read_text()
    wavs = wav_hashes(serial.store.root) == wav_hashes(par.store.root)
    n = serial.counts["respond"]["ok"]
    print(
        f"run ({kw['model']}, {n} replies): serial {t_serial:.1f} s; ray --workers {workers} "
        f"{t_ray:.1f} s (+ {t_init:.1f} s starting Ray, not counted)"
    )
    print(
        f"  ratio ray / serial: {t_serial / t_ray:.2f}x; report {'identical' if same else 'DIFFERENT'}, "
        f"wavs {'identical' if wavs else 'DIFFERENT'}"
    )
    return serial.store.root


def bench_asr(src: Path, batch: int, n_max: int) -> None:
    """Whisper base (CPU int8) on the replies of ``src``: one by one vs batched first passes."""
    from stylebench.audio import load_audio
    from stylebench.commands.runs import open_stored
    from stylebench.executors.serial import cores
    from stylebench.metrics.asr.backends import FasterWhisperASR

    stored = open_stored(src)
    lang = {s.id: s.lang for s in stored.samples}
    recs = [r for r in stored.replies().values() if r.status == "ok"][:n_max]
    items = [(*load_audio(src / r.audio, target_sr=16000), lang[r.sample_id]) for r in recs]
    seconds = sum(len(w) / sr for w, sr, _ in items)
    asr = FasterWhisperASR("base", cpu_threads=cores())
    asr.transcribe(*items[0])  # load the model outside the timing
    t0 = time.perf_counter()
    one = [asr.transcribe(*it) for it in items]
    t_one = time.perf_counter() - t0
    t0 = time.perf_counter()
    many = asr.transcribe_batch(items, batch)
    t_many = time.perf_counter() - t0
    same = sum((a.text, a.flags) == (b.text, b.flags) for a, b in zip(one, many, strict=True))
    print(
        f"asr (Whisper base, CPU int8, {cores()} threads, {len(items)} replies, {seconds:.0f} s): "
        f"one by one {t_one:.1f} s ({seconds / t_one:.1f}x realtime), batch {batch} {t_many:.1f} s "
        f"({seconds / t_many:.1f}x realtime)"
    )
    print(
        f"  ratio batched / one by one: {t_one / t_many:.2f}x; transcripts equal {same}/{len(items)}"
    )


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--limit", type=int, default=2, help="samples per cell (dim all: 12 cells)")
    ap.add_argument("--model", default="reference")
    ap.add_argument("--workers", type=int, default=2, help="feature processes and Ray actors")
    ap.add_argument("--batch", type=int, default=8, help="ASR batch size")
    ap.add_argument("--asr-replies", type=int, default=24, help="replies transcribed (each way)")
    ap.add_argument("--skip-asr", action="store_true")
    ap.add_argument("--skip-ray", action="store_true")
    args = ap.parse_args()
    print(f"throughput benchmark: python {sys.version.split()[0]}; {conditions()}")
    kw = {"model": args.model, "dim": "all", "limit": args.limit, **FAST}
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        if args.skip_ray:
            src = timed_run(root / "serial", feature_workers=1, **kw)[1].store.root
        else:
            src = bench_run(root, kw, args.workers)
        bench_features(src, args.workers)
        if not args.skip_asr:
            bench_asr(src, args.batch, args.asr_replies)
    print(f"after: {conditions()}")
    print(
        json.dumps({"note": "ratios only; wall-clock seconds depend on the machine and its load"})
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
