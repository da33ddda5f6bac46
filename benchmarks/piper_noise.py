"""Piper's seeded noise against the graph's own: does the voice sound the same?

    .venv/bin/python benchmarks/piper_noise.py [--n 12] [--draws 4] [--no-asr]

The first N English user-turn texts of the pools (as benchmarks/piper_voices.py picks them),
each spoken DRAWS times by the trained voice (en-m1, default noise scales 0.667 / 0.8) two ways:
"graph" runs the voice file as shipped with onnxruntime, which draws the noise itself (unseeded:
how piper spoke before), and "seeded" is :class:`~stylebench.synth.piper.PiperSynth`, whose noise
stylebench draws from a seed (draws 0..DRAWS-1). Per way: duration (s) and RMS level (dBFS) of
the voice's own rendering, as the mean over sentences of each sentence's mean and spread (SD over
its draws), and Whisper base's WER against the text (the set builder's check, language fixed).
The same distribution gives the same means and spreads up to the sampling error of N x DRAWS
draws.
"""

from __future__ import annotations

import argparse
import json
import statistics
import time

import numpy as np
from piper_voices import sentences

from stylebench.synth.piper import VOICES, PiperSynth, espeak_phonemes, phoneme_ids


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, default=12)
    ap.add_argument("--draws", type=int, default=4)
    ap.add_argument("--no-asr", action="store_true")
    args = ap.parse_args()
    import onnxruntime as ort

    synth = PiperSynth()
    opts = ort.SessionOptions()
    opts.intra_op_num_threads = opts.inter_op_num_threads = 1
    shipped = ort.InferenceSession(str(synth.files.onnx), opts, providers=["CPUExecutionProvider"])
    inf = synth.config["inference"]
    scales = np.array([inf["noise_scale"], inf["length_scale"], inf["noise_w"]], np.float32)
    checker = None
    if not args.no_asr:
        from stylebench.dialogues.intelligibility import Checker

        checker = Checker(quality=False)
    texts = sentences(args.n)
    rows: dict[str, list[dict[str, float]]] = {"graph": [], "seeded": []}
    t0 = time.perf_counter()
    for text in texts:
        ids = phoneme_ids(espeak_phonemes(text, "en-us"), synth.config["phoneme_id_map"])
        feeds = {
            "input": np.array([ids], np.int64),
            "input_lengths": np.array([len(ids)], np.int64),
            "scales": scales,
        }
        for way in rows:
            for d in range(args.draws):
                if way == "graph":
                    wave = np.clip(shipped.run(None, feeds)[0].reshape(-1), -1, 1)
                else:
                    wave = synth.speak(text, key=(0.0, 0.0, d))
                row = {
                    "dur": wave.size / synth.sample_rate,
                    "rms_db": 20 * np.log10(np.sqrt(np.mean(wave.astype(np.float64) ** 2))),
                }
                if checker is not None:
                    c = checker.check(
                        wave,
                        synth.sample_rate,
                        text=text,
                        lang="en",
                        sample_id="s",
                        turn=d,
                        voice=VOICES["en-m1"].id,
                    )
                    row["wer"] = c.error_rate
                rows[way].append({"text": texts.index(text), **row})
    out = {"n_texts": len(texts), "draws": args.draws, "seconds": time.perf_counter() - t0}
    for way, rs in rows.items():
        summary: dict[str, float] = {}
        for key in [k for k in rs[0] if k != "text"]:
            per = [[r[key] for r in rs if r["text"] == i] for i in range(len(texts))]
            summary[f"{key}_mean"] = statistics.fmean(v for p in per for v in p)
            summary[f"{key}_sd_within_text"] = statistics.fmean(statistics.pstdev(p) for p in per)
        if checker is not None:
            summary["wer_over_0.5"] = sum(r["wer"] > 0.5 for r in rs)
            summary["read_exactly"] = sum(r["wer"] == 0 for r in rs)
        out[way] = summary
    print(json.dumps(out, indent=2))


if __name__ == "__main__":
    main()
