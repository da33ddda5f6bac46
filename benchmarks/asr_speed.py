"""Offline ASR speed, option by option, on the same replies in one process: which options keep
every transcript identical to today's default, and how much faster each is.

Replies: a reference run on the default dialogue set (``--dim all --lang all --limit 2``, made
with ``--asr none`` into a temporary folder) unless ``--run DIR`` names run folders to read.
Every option transcribes every reply with Whisper base on CPU (int8), one BLAS thread, the
decoding ladder of ``metrics/asr/backends.py``; its transcripts (text, word times, flags) are
compared with the default's, reply by reply.

Options measured (``--options`` picks some):

- ``default``: today's default before this benchmark's change: one reply at a time, CTranslate2
  choosing its own intra-op threads (``cpu_threads=0``).
- ``threads-N``: one reply at a time on N intra-op threads.
- ``workers-N``: N replies at once from N Python threads, each on its own CTranslate2 replica
  with one intra-op thread (inter-op parallelism; what ``--asr-workers`` does).
- ``reuse``: ``workers-<cores>``, and a reply whose audio bytes were transcribed already (in
  any of the runs read) takes that transcript instead of decoding again.
- ``speech-span``: decode only the speech span (Silero VAD, 0.2 s margin), word times shifted
  back to file time; the VAD's time is counted.
- ``tiny.en``: English replies by Whisper tiny.en, Mandarin by base.
- ``batch-8``: faster-whisper's batched pipeline, 8 replies a batch (docs/scale.md).

    python benchmarks/asr_speed.py [--run RUN_DIR ...] [--limit 2] [--options default,workers-2]

The ratio column is the default's time over the option's, measured in this run. The machine's
load average is printed before and after: ratios hold better than seconds under load.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

SPAN_MARGIN_S = 0.2


@dataclass(frozen=True)
class Reply:
    key: str
    sha256: str
    lang: str
    wave: np.ndarray  # 16 kHz mono

    @property
    def seconds(self) -> float:
        return len(self.wave) / 16000


def load_replies(runs: Sequence[Path]) -> list[Reply]:
    """The ok replies of each run folder, at 16 kHz, in the order of their respond records."""
    from stylebench.audio import load_audio

    out = []
    for run in runs:
        for line in (run / "respond.jsonl").read_text(encoding="utf-8").splitlines():
            r = json.loads(line)
            if r["status"] != "ok":
                continue
            wave, _ = load_audio(run / r["audio"], target_sr=16000)
            lang = r["sample_id"].split("-")[2]
            out.append(Reply(f"{run.name}/{r['sample_id']}/t{r['turn']}", r["sha256"], lang, wave))
    return out


def reference_run(root: Path, limit: int) -> Path:
    """A reference run without ASR: its replies are what the options transcribe."""
    cmd = [sys.executable, "-m", "stylebench.cli", "run", "--model", "reference", "--dim", "all"]
    cmd += ["--lang", "all", "--limit", str(limit), "--asr", "none", "--judge", "none"]
    cmd += ["--out", str(root), "--run-id", "asr-speed"]
    subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL)
    return root / "asr-speed"


def fields(tr: Any) -> tuple[Any, ...]:
    """What a transcribe record keeps of a transcript."""
    words = tuple((w.text, round(w.start, 3), round(w.end, 3)) for w in tr.words)
    return tr.text, words, tuple(tr.flags)


def asr(model: str = "base", **kw: Any) -> Any:
    from stylebench.metrics.asr.backends import FasterWhisperASR

    return FasterWhisperASR(model, **kw)


def one_by_one(model: Any) -> Callable[[list[Reply]], list[Any]]:
    return lambda replies: [model.transcribe(r.wave, 16000, r.lang) for r in replies]


def concurrent(model: Any, n: int) -> Callable[[list[Reply]], list[Any]]:
    def run(replies: list[Reply]) -> list[Any]:
        with ThreadPoolExecutor(n) as pool:
            return list(pool.map(lambda r: model.transcribe(r.wave, 16000, r.lang), replies))

    return run


def reusing(inner: Callable[[list[Reply]], list[Any]]) -> Callable[[list[Reply]], list[Any]]:
    def run(replies: list[Reply]) -> list[Any]:
        unique = list({r.sha256: r for r in replies}.values())
        by_sha = dict(zip((r.sha256 for r in unique), inner(unique), strict=True))
        return [by_sha[r.sha256] for r in replies]

    return run


def span_only(model: Any) -> Callable[[list[Reply]], list[Any]]:
    from dataclasses import replace

    from stylebench.metrics.vad import speech_span

    def one(r: Reply) -> Any:
        span = speech_span(r.wave, 16000)
        a = max(0, int((span.start - SPAN_MARGIN_S) * 16000))
        b = min(len(r.wave), int((span.end + SPAN_MARGIN_S) * 16000))
        tr = model.transcribe(r.wave[a:b], 16000, r.lang)
        shift = a / 16000
        words = tuple(replace(w, start=w.start + shift, end=w.end + shift) for w in tr.words)
        return replace(tr, words=words)

    return lambda replies: [one(r) for r in replies]


def tiny_for_english(tiny: Any, base: Any) -> Callable[[list[Reply]], list[Any]]:
    return lambda replies: [
        (tiny if r.lang == "en" else base).transcribe(r.wave, 16000, r.lang) for r in replies
    ]


def batched(model: Any, size: int) -> Callable[[list[Reply]], list[Any]]:
    return lambda replies: model.transcribe_batch([(r.wave, 16000, r.lang) for r in replies], size)


def build(name: str, cores: int) -> tuple[Callable[[list[Reply]], list[Any]], list[Any]]:
    """The option's transcribe-all function and the models to warm up before timing."""
    kind, _, arg = name.partition("-")
    if name == "default":
        m = asr()
        return one_by_one(m), [m]
    if kind == "threads":
        m = asr(cpu_threads=int(arg))
        return one_by_one(m), [m]
    if kind == "workers":
        m = asr(cpu_threads=1, workers=int(arg))
        return concurrent(m, int(arg)), [m]
    if name == "reuse":
        m = asr(cpu_threads=1, workers=cores)
        return reusing(concurrent(m, cores)), [m]
    if name == "speech-span":
        m = asr()
        return span_only(m), [m]
    if name == "tiny.en":
        tiny, base = asr("tiny.en"), asr()
        return tiny_for_english(tiny, base), [tiny, base]
    if kind == "batch":
        m = asr()
        return batched(m, int(arg)), [m]
    raise SystemExit(f"unknown option {name!r}")


def warm(models: list[Any], replies: list[Reply]) -> None:
    """Load each model and decode one reply of each language outside the timing."""
    firsts = {r.lang: r for r in replies}
    for m in models:
        for r in firsts.values():
            if not (m.english_only and r.lang != "en"):
                m.transcribe(r.wave, 16000, r.lang)


def load() -> str:
    return " / ".join(f"{x:.2f}" for x in os.getloadavg())


def main() -> None:
    ap = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument("--run", type=Path, action="append", help="run folder(s) whose replies to use")
    ap.add_argument("--limit", type=int, default=2, help="samples per cell of the reference run")
    ap.add_argument("--options", default="", help="comma-separated; default: all")
    args = ap.parse_args()
    from stylebench.executors.serial import cores
    from stylebench.metrics.asr.threads import one_blas_thread

    n = cores()
    names = [o for o in args.options.split(",") if o] or [
        "default",
        "threads-1",
        f"threads-{n}",
        f"workers-{n}",
        "reuse",
        "speech-span",
        "tiny.en",
        "batch-8",
    ]
    if names[0] != "default":
        names.insert(0, "default")
    with tempfile.TemporaryDirectory(prefix="asr-speed-") as tmp:
        runs = args.run or [reference_run(Path(tmp), args.limit)]
        replies = load_replies(runs)
    audio_s = sum(r.seconds for r in replies)
    dup = len(replies) - len({r.sha256 for r in replies})
    print(f"{len(replies)} replies, {audio_s:.1f} s of audio, {dup} repeat audio bytes")
    print(f"cores {n}; load average before: {load()}\n")
    print(
        "| option | seconds | x realtime | ratio vs default | same text | same words | same flags |"
    )
    print("|---|---|---|---|---|---|---|")
    base: list[Any] = []
    t_default = 0.0
    for name in names:
        fn, models = build(name, n)
        with one_blas_thread():
            warm(models, replies)
            t0 = time.perf_counter()
            got = [fields(t) for t in fn(replies)]
            dt = time.perf_counter() - t0
        if name == "default":
            base, t_default = got, dt
        same = [sum(g[i] == b[i] for g, b in zip(got, base, strict=True)) for i in range(3)]
        print(
            f"| {name} | {dt:.1f} | {audio_s / dt:.2f} | {t_default / dt:.2f}x | "
            + " | ".join(f"{s}/{len(replies)}" for s in same)
            + " |",
            flush=True,
        )
    print(f"\nload average after: {load()}")


if __name__ == "__main__":
    main()
