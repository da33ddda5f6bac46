"""Audio files with known differences, for ``stylebench measure`` and ``pairs``.

One English sentence spoken by espeak-ng (``speech.wav``) and copies whose change is known
exactly: ``louder`` (x2 amplitude: +6.02 dB), ``quieter`` (x0.5: -6.02 dB), ``nudged`` (x1.05:
+0.42 dB, under the 1 dB threshold), ``faster`` (the same samples declared at 1.25 times the
rate: 1.25 times the syllable rate and 12*log2(1.25) = +3.86 semitones). Beside them files that
cannot be measured: ``empty.wav`` (0 bytes), ``text.wav`` (not audio), ``silent.wav`` (zeros),
and ``tone.wav`` (a 1 kHz sine: audio, but not speech).
"""

from __future__ import annotations

import math
import shutil
import subprocess
from pathlib import Path

import numpy as np

SENTENCE = "Please remember to bring your library card when you visit the reading room."
GAINS = {"louder": 2.0, "quieter": 0.5, "nudged": 1.05}
TEMPO = 1.25
FASTER_ST = 12 * math.log2(TEMPO)


def db(factor: float) -> float:
    return 20 * math.log10(factor)


def make_files(folder: Path) -> Path:
    """Write the files (module docstring) into ``folder``; returns it."""
    import soundfile as sf

    from stylebench.synth.espeak import EspeakSynth, voices_for

    folder.mkdir(parents=True, exist_ok=True)
    audio = EspeakSynth().synthesize(SENTENCE, voices_for("en")[0])
    wave, sr = audio.wave.astype(np.float32), audio.sr
    wave = 0.4 * wave / float(np.max(np.abs(wave)))  # headroom for the x2 copy
    sf.write(folder / "speech.wav", wave, sr, subtype="FLOAT")
    for name, gain in GAINS.items():
        sf.write(folder / f"{name}.wav", wave * gain, sr, subtype="FLOAT")
    sf.write(folder / "faster.wav", wave, round(sr * TEMPO), subtype="FLOAT")
    (folder / "empty.wav").write_bytes(b"")
    (folder / "text.wav").write_text("not audio at all\n")
    sf.write(folder / "silent.wav", np.zeros(sr, dtype=np.float32), sr)
    t = np.arange(2 * sr) / sr
    sf.write(folder / "tone.wav", 0.3 * np.sin(2 * np.pi * 1000 * t), sr)
    if shutil.which("ffmpeg"):
        subprocess.run(
            ["ffmpeg", "-nostdin", "-v", "error", "-y", "-i", str(folder / "speech.wav")]
            + ["-ar", "44100", "-b:a", "128k", str(folder / "speech.mp3")],
            check=True,
        )
    return folder
