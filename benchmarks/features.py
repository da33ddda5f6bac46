"""Speed of the features pass, as x realtime per core, against a naive librosa.pyin loop.

Both are measured in the same run, on the same espeak-ng utterances, in one process pinned to
one thread (so "per core" is honest), ``--repeat`` times each, alternating (ours, baseline, ours,
...), so a slow spell of the machine falls on both. Printed: each side's median and spread over
the repeats, and the ratio of the medians = our x-realtime / baseline x-realtime. A single pass
of each takes about a second here, and one pass of each gave ratios from 6.7x to 7.8x on
unchanged code on a quiet machine: read the median.

    python benchmarks/features.py [--n 12] [--repeat 7] [--asr]    # `make bench` installs librosa
"""

from __future__ import annotations

import argparse
import os

for _var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS", "NUMBA_NUM_THREADS"):
    os.environ.setdefault(_var, "1")

import tempfile  # noqa: E402
import time  # noqa: E402
from pathlib import Path  # noqa: E402

import numpy as np  # noqa: E402

TEXTS = {
    "en": [
        "The post office opens at nine and closes at five on weekdays.",
        "A river carries water from the mountains down to the sea over many miles.",
        "You can reach the station by taking the second street on the left.",
    ],
    "zh": [
        "邮局每天早上九点开门，下午五点关门。",
        "这条河从山里一直流到海边，路程很长。",
        "去车站的话，在第二个路口向左转就到了。",
    ],
}


def make_corpus(root: Path, n: int) -> list[Path]:
    from stylebench.audio import write_wav
    from stylebench.synth.base import Style
    from stylebench.synth.espeak import EspeakSynth, voices_for

    synth, paths = EspeakSynth(), []
    for i in range(n):
        lang = "en" if i % 2 == 0 else "zh"
        voice = voices_for(lang)[i % 4]
        text = TEXTS[lang][i % 3]
        audio = synth.synthesize(text, voice, Style(rate=(0.8, 1.0, 1.25)[i % 3]))
        p = root / f"u{i:03d}.wav"
        write_wav(p, audio.wave, audio.sr)
        paths.append(p)
    return paths


def audio_seconds(paths: list[Path]) -> float:
    import soundfile as sf

    return sum(sf.info(str(p)).duration for p in paths)


def ours(paths: list[Path]) -> float:
    from stylebench.audio import load_audio
    from stylebench.stages.measure import ANALYSIS_SR, FeatureConfig, analyse_reply, finish_sample

    cfg = FeatureConfig()
    t0 = time.perf_counter()
    parts = {}
    for k, p in enumerate(paths):
        wave, sr = load_audio(p, target_sr=ANALYSIS_SR)
        parts[k] = analyse_reply(wave, sr, cfg)
    finish_sample(parts, {}, "en")
    return time.perf_counter() - t0


def librosa_pyin(paths: list[Path]) -> float:
    import librosa

    t0 = time.perf_counter()
    for p in paths:
        y, sr = librosa.load(str(p), sr=None)
        f0, voiced, _ = librosa.pyin(y, fmin=50, fmax=800, sr=sr, frame_length=1024)
        float(np.nanmean(f0[voiced])) if np.any(voiced) else float("nan")
        float(np.sqrt(np.mean(y**2)))
    return time.perf_counter() - t0


def asr(paths: list[Path]) -> float:
    from stylebench.audio import load_audio
    from stylebench.metrics.asr.backends import FasterWhisperASR

    model = FasterWhisperASR("base", cpu_threads=1)
    model.transcribe(*load_audio(paths[0], target_sr=16000), "en")  # load outside the timing
    t0 = time.perf_counter()
    for i, p in enumerate(paths):
        model.transcribe(*load_audio(p, target_sr=16000), "en" if i % 2 == 0 else "zh")
    return time.perf_counter() - t0


def main() -> None:
    ap = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument("--n", type=int, default=12, help="number of utterances")
    ap.add_argument("--repeat", type=int, default=7, help="timed passes of each, alternating")
    ap.add_argument("--asr", action="store_true", help="also time the offline Whisper base ASR")
    args = ap.parse_args()
    try:
        import librosa  # noqa: F401
    except ImportError:
        raise SystemExit(
            "librosa is not installed: pip install 'stylebench[bench]' (or `make bench`)"
        ) from None
    with tempfile.TemporaryDirectory() as tmp:
        paths = make_corpus(Path(tmp), args.n)
        secs = audio_seconds(paths)
        ours(paths[:2]), librosa_pyin(paths[:1])  # warm-up: imports, JIT, model loads
        times: dict[str, list[float]] = {"ours": [], "base": []}
        for _ in range(max(1, args.repeat)):
            times["ours"].append(ours(paths))
            times["base"].append(librosa_pyin(paths))
        t_ours, t_base = (float(np.median(times[k])) for k in ("ours", "base"))
        print(f"corpus: {len(paths)} espeak-ng utterances, {secs:.1f} s of audio, 1 thread")
        print(f"{args.repeat} passes each, alternating; x realtime per core, median [min, max]:")
        for key, label in (
            ("ours", "stylebench features (VAD, F0 by pyworld + Praat + SwiftF0, RMS, nuclei)"),
            ("base", "baseline librosa.pyin loop (load + pYIN F0 + RMS)"),
        ):
            xs = [secs / t for t in times[key]]
            print(
                f"{label:70s} {secs / (t_ours if key == 'ours' else t_base):7.2f} "
                f"[{min(xs):.2f}, {max(xs):.2f}]"
            )
        ratios = [b / o for o, b in zip(times["ours"], times["base"], strict=True)]
        print(
            f"ratio stylebench / baseline (medians): {t_base / t_ours:.2f}x "
            f"(pass by pass: {min(ratios):.2f}x to {max(ratios):.2f}x)"
        )
        if args.asr:
            t_asr = asr(paths)
            print(f"faster-whisper base int8 ASR: {secs / t_asr:8.2f} x realtime per core")


if __name__ == "__main__":
    main()
