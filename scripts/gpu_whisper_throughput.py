"""Batched Whisper throughput on a GPU, through the pipeline's own batched first pass.

    python scripts/gpu_whisper_throughput.py --device cuda                  # large-v3 shapes, random
    python scripts/gpu_whisper_throughput.py --device cuda --model /w/whisper-large-v3-ct2
    python scripts/gpu_whisper_throughput.py --device cpu --size tiny --batches 1,2 --replies 4

Each batch size decodes the same reply-like clips with ``metrics.asr.batched.first_pass``
(faster-whisper's ``BatchedInferencePipeline``, the code ``--asr-batch-size`` runs), float16 on
CUDA, int8 on CPU, and prints x realtime (seconds of audio per second of wall time) after one
warm-up batch; one tab-separated line per batch size goes to stdout and ``--out``.

The clips are 16 kHz voiced sounds (a glottal pulse train through two formant-like resonances,
with a slow pitch and level contour and pauses) of the lengths of real replies: the default
set's reference replies are 4-12 s (mean 7.5 s). Whisper pads every clip to a 30 s window, so
the encoder's cost does not depend on what is said; the decoder's does, which is why a model
with random weights stops after ``--max-new-tokens`` (a trained model decodes until it ends).

With no ``--model`` nothing is downloaded: a Whisper with large-v3's layer shapes (32 + 32
layers, width 1280, 20 heads) and random weights is built with transformers and converted with
CTranslate2's converter, using the offline base model's tokenizer (51,865 tokens; v3's extra
language token and its 128 mel bins change only the embedding's and first convolution's size).
This needs torch, transformers, ctranslate2 and faster-whisper; on a machine without internet,
carry their wheels (docs/scale.md). ``--size tiny`` builds a 2-layer model to check the script.
"""

from __future__ import annotations

import argparse
import os
import shutil
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
SR = 16000
#: (layers, width, heads) of the random models; the vocabulary is the base tokenizer's
SHAPES = {"large-v3": (32, 1280, 20), "tiny": (2, 64, 2)}
#: reply lengths in seconds, cycled: the spread of the default set's reference replies
REPLY_SECONDS = (4.2, 5.8, 6.9, 7.5, 8.3, 9.6, 11.4, 6.1)


def reply_like(seconds: float, seed: int) -> np.ndarray:
    """A voiced, speech-shaped clip: a pulse train at a moving F0 through two resonances, with
    syllable-rate level modulation and short pauses."""
    from scipy.signal import lfilter

    rng = np.random.default_rng(seed)
    n = int(seconds * SR)
    t = np.arange(n) / SR
    f0 = 140 + 30 * np.sin(2 * np.pi * 0.3 * t + rng.uniform(0, 6)) + rng.uniform(-20, 40)
    phase = np.cumsum(f0 / SR)
    pulses = (np.diff(np.floor(phase), prepend=0) > 0).astype(np.float64)
    x = np.zeros(n)
    for fc, bw in ((rng.uniform(500, 800), 90.0), (rng.uniform(1200, 2200), 120.0)):
        r = np.exp(-np.pi * bw / SR)  # a two-pole resonator at fc with bandwidth bw
        x += lfilter([1.0], [1.0, -2 * r * np.cos(2 * np.pi * fc / SR), r * r], pulses)
    level = 0.5 + 0.5 * np.sin(2 * np.pi * 4.0 * t + rng.uniform(0, 6)) ** 2
    level *= np.sin(2 * np.pi * 0.25 * t) ** 2 > 0.05  # pauses between phrases
    x *= level
    return (0.3 * x / max(np.max(np.abs(x)), 1e-9)).astype(np.float32)


def random_model(size: str, folder: Path, quantization: str) -> Path:
    """A CTranslate2 Whisper with ``SHAPES[size]`` and random weights, in ``folder``."""
    import torch
    from ctranslate2.converters import TransformersConverter
    from transformers import WhisperConfig, WhisperForConditionalGeneration

    from stylebench.metrics.asr.offline import resolve_offline_model

    base = resolve_offline_model("base")
    layers, width, heads = SHAPES[size]
    torch.manual_seed(0)
    cfg = WhisperConfig(
        vocab_size=51865,
        num_mel_bins=80,
        d_model=width,
        encoder_layers=layers,
        decoder_layers=layers,
        encoder_attention_heads=heads,
        decoder_attention_heads=heads,
        encoder_ffn_dim=4 * width,
        decoder_ffn_dim=4 * width,
        max_source_positions=1500,
        max_target_positions=448,
    )
    hf = folder / "hf"
    WhisperForConditionalGeneration(cfg).save_pretrained(hf)
    shutil.copy(base / "tokenizer.json", hf / "tokenizer.json")
    out = folder / "ct2"
    TransformersConverter(str(hf)).convert(str(out), quantization=quantization, force=True)
    shutil.copy(base / "tokenizer.json", out / "tokenizer.json")
    return out


def throughput(model_dir: Path, device: str, batches: list[int], n: int, max_new: int) -> list:
    """``(batch, replies, audio_s, wall_s)`` per batch size, each after a warm-up batch."""
    from stylebench.metrics.asr.backends import FasterWhisperASR
    from stylebench.metrics.asr.batched import first_pass

    compute = "float16" if device.startswith("cuda") else "int8"
    asr = FasterWhisperASR(str(model_dir), device=device, compute_type=compute)
    clips = [reply_like(REPLY_SECONDS[i % len(REPLY_SECONDS)], i) for i in range(n)]
    audio_s = sum(len(c) for c in clips) / SR
    options = asr._options("en", retry=False)
    if max_new:
        options["max_new_tokens"] = max_new
    out = []
    for b in batches:
        first_pass(asr._load(), clips[:b], "en", options, b)  # warm-up: kernels, allocator
        t0 = time.perf_counter()
        got = first_pass(asr._load(), clips, "en", options, b)
        wall = time.perf_counter() - t0
        assert len(got) == len(clips)
        out.append((b, len(clips), audio_s, wall))
    return out


def main() -> int:
    ap = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument("--device", default="cuda", help="cuda, cuda:1 or cpu")
    ap.add_argument("--model", help="a CTranslate2 Whisper folder (default: random weights)")
    ap.add_argument("--size", choices=sorted(SHAPES), default="large-v3", help="random model")
    ap.add_argument("--batches", default="1,16,64", help="batch sizes, comma-separated")
    ap.add_argument("--replies", type=int, default=128, help="clips decoded per batch size")
    ap.add_argument(
        "--max-new-tokens", type=int, default=40, help="tokens per clip (0: until the model ends)"
    )
    ap.add_argument("--out", type=Path, help="also write the lines here (tab-separated)")
    args = ap.parse_args()
    sys.path.insert(0, str(ROOT))
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    batches = [int(b) for b in args.batches.split(",") if b]
    if args.device.startswith("cuda"):
        import ctranslate2

        if ctranslate2.get_cuda_device_count() == 0:  # before building a 1.5B-parameter model
            print(f"skipped: CTranslate2 sees no CUDA device for --device {args.device}")
            return 0
    with tempfile.TemporaryDirectory(prefix="whisper-throughput-") as tmp:
        if args.model:
            model, label = Path(args.model), Path(args.model).name
        else:
            quant = "float16" if args.device.startswith("cuda") else "int8"
            model, label = random_model(args.size, Path(tmp), quant), f"random-{args.size}"
        rows = throughput(model, args.device, batches, args.replies, args.max_new_tokens)
    lines = ["model\tdevice\tbatch\treplies\taudio_s\twall_s\tx_realtime"]
    for b, n, audio_s, wall in rows:
        lines.append(
            f"{label}\t{args.device}\t{b}\t{n}\t{audio_s:.1f}\t{wall:.3f}\t{audio_s / wall:.1f}"
        )
    print("\n".join(lines))
    if args.out:
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
