"""How far apart the English piper voices sit: median F0, spectral envelope (formants, centroid)
and the distance of each voice from the others, on the same sentences.

    .venv/bin/python benchmarks/piper_voices.py [--n 6] [--espeak]

Each voice speaks the first N distinct English user-turn texts of the dialogue pools (noise
scales at 0, so the numbers repeat). Per voice, pooled over the sentences' voiced frames:
median F0 (Praat autocorrelation, 60-500 Hz), median F1, F2, F3 (Praat Burg, 5 formants up to
5.5 kHz), and the spectral centroid (power-weighted mean frequency, 0-8 kHz, of voiced frames).
Distances in semitones: dF0 between medians, dVT the mean over F1-F3 of the semitone distance
between medians (a vocal-tract-length proxy), and their Euclidean norm.
"""

from __future__ import annotations

import argparse
import itertools
import json

import numpy as np

from stylebench.dialogues.builder import load_contents, load_phrasings
from stylebench.synth.piper import VOICES, PiperSynth


def sentences(n: int) -> list[str]:
    out = [it.request for it in load_contents("en")]
    phr = load_phrasings("en")
    for dim in ("speed", "volume", "pitch"):
        for direction in phr[dim].values():
            out += direction["2"][:1]
    seen: list[str] = []
    for s in out:
        if s not in seen:
            seen.append(s)
    # alternate requests and instructions so a small n has both
    half = [s for s in seen if s in out[: len(load_contents("en"))]]
    rest = [s for s in seen if s not in half]
    mixed = [x for pair in itertools.zip_longest(half, rest) for x in pair if x]
    return mixed[:n]


def measure(wave: np.ndarray, sr: int) -> dict[str, np.ndarray]:
    import parselmouth

    snd = parselmouth.Sound(wave.astype(np.float64), sr)
    pitch = snd.to_pitch_ac(time_step=0.01, pitch_floor=60, pitch_ceiling=500)
    f0 = pitch.selected_array["frequency"]
    times = pitch.xs()
    voiced = times[f0 > 0]
    fm = snd.to_formant_burg(time_step=0.01, max_number_of_formants=5, maximum_formant=5500)
    formants = np.array(
        [[fm.get_value_at_time(k, t) for k in (1, 2, 3)] for t in voiced], dtype=float
    ).reshape(-1, 3)
    # centroid of each voiced 40 ms frame's power spectrum, 0-8 kHz
    win = int(0.04 * sr)
    cents = []
    freqs = np.fft.rfftfreq(win, 1 / sr)
    band = freqs <= 8000
    for t in voiced:
        i = int(t * sr) - win // 2
        if i < 0 or i + win > wave.size:
            continue
        p = np.abs(np.fft.rfft(wave[i : i + win] * np.hanning(win))) ** 2
        if p[band].sum() > 0:
            cents.append(float((freqs[band] * p[band]).sum() / p[band].sum()))
    return {"f0": f0[f0 > 0], "formants": formants, "centroid": np.array(cents)}


def st(a: float, b: float) -> float:
    return float(12 * np.log2(a / b))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, default=6, help="sentences per voice")
    ap.add_argument("--json", help="write the numbers here too")
    a = ap.parse_args()
    texts = sentences(a.n)
    synth = PiperSynth(noise_scale=0, noise_w=0)
    stats = {}
    for vid, voice in VOICES.items():
        parts = [measure(synth.synthesize(t, voice).wave, synth.sample_rate) for t in texts]
        f0 = np.concatenate([p["f0"] for p in parts])
        fm = np.concatenate([p["formants"] for p in parts])
        fm = fm[np.all(np.isfinite(fm), axis=1)]
        cen = np.concatenate([p["centroid"] for p in parts])
        stats[vid] = {
            "f0": float(np.median(f0)),
            "f1": float(np.median(fm[:, 0])),
            "f2": float(np.median(fm[:, 1])),
            "f3": float(np.median(fm[:, 2])),
            "centroid": float(np.mean(cen)),
            "rendering": voice.backend_voice,
        }
    print(f"{len(texts)} sentences per voice: {texts}")
    print(
        "| voice | rendering | median F0 | F1 | F2 | F3 | spectral centroid | nearest voice (dF0, dVT, distance in st) |"
    )
    print("|---|---|---|---|---|---|---|---|")
    ids = list(stats)
    dist = {}
    for v in ids:
        for w in ids:
            if v == w:
                continue
            d0 = st(stats[w]["f0"], stats[v]["f0"])
            dvt = float(np.mean([st(stats[w][k], stats[v][k]) for k in ("f1", "f2", "f3")]))
            dist[v, w] = (d0, dvt, float(np.hypot(d0, dvt)))
    for v in ids:
        s = stats[v]
        near = min((w for w in ids if w != v), key=lambda w: dist[v, w][2])
        d0, dvt, d = dist[v, near]
        print(
            f"| {v} | {s['rendering']} | {s['f0']:.1f} Hz | {s['f1']:.0f} | {s['f2']:.0f} "
            f"| {s['f3']:.0f} | {s['centroid']:.0f} Hz | {near} ({d0:+.1f}, {dvt:+.1f}, {d:.1f}) |"
        )
    print("\ndistance matrix, semitones (dF0 / dVT / Euclidean), row -> column:")
    print("| | " + " | ".join(ids) + " |\n|---|" + "---|" * len(ids))
    for v in ids:
        cells = ["0" if v == w else "{:+.1f} / {:+.1f} / {:.1f}".format(*dist[v, w]) for w in ids]
        print(f"| {v} | " + " | ".join(cells) + " |")
    if a.json:
        with open(a.json, "w") as f:
            json.dump(stats, f, indent=2)


if __name__ == "__main__":
    main()
