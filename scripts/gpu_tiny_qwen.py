"""Run the tiny random Qwen2.5-Omni and Qwen3-Omni models three turns on a device (no weights).

    python scripts/gpu_tiny_qwen.py --device cuda --out runs/gpu-smoke/tiny.tsv
    python scripts/gpu_tiny_qwen.py --device cuda:1 --dtype bf16

The checkpoints are the test suite's NAMED STAND-INS (tests/standins/tiny_qwen.py: the real
transformers classes with tiny configurations and random weights), built in a temporary folder:
nothing is downloaded (HF_HUB_OFFLINE is set), so a machine with only wheels installed
(torch for its CUDA, transformers, accelerate, stylebench) can check the CUDA code paths of the
transformers wrappers: loading on the device, the audio-only processor, three turns with
history, the talker and vocoder on the GPU, and a finite 24 kHz reply each turn. Random weights
speak noise: this checks plumbing, not quality. One line per model and device goes to stdout
and ``--out`` (tab-separated: model, device, dtype, status, seconds, detail); the exit status
is 1 when any model failed.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
import traceback
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def tones(folder: Path) -> list[str]:
    """Three user 'turns': 1.5 s tones at 16 kHz (the audio encoder's chunking is exercised)."""
    import numpy as np
    import soundfile as sf

    out = []
    for k, hz in enumerate((180.0, 200.0, 220.0)):
        t = np.arange(int(16000 * 1.5)) / 16000
        path = folder / f"user{k + 1}.wav"
        sf.write(path, 0.3 * np.sin(2 * np.pi * hz * t), 16000)
        out.append(str(path))
    return out


def three_turns(model, wavs: list[str]) -> str:
    import numpy as np
    import soundfile as sf

    from stylebench.records import DecodeConfig, Turn

    history: list = []
    lengths = []
    for k, wav in enumerate(wavs, start=1):
        user = Turn("user", f"request {k}", wav, 16000)
        reply = model.respond(tuple(history), user, DecodeConfig(max_new_tokens=6, seed=1))
        data, sr = sf.read(reply.audio)
        if sr != 24000 or data.size == 0 or not np.all(np.isfinite(data)):
            raise RuntimeError(f"turn {k}: reply wav sr={sr}, {data.size} samples, finite check")
        if reply.raw.get("audio_inputs") != k:
            raise RuntimeError(f"turn {k}: the model heard {reply.raw.get('audio_inputs')} wavs")
        lengths.append(f"{data.size / sr:.2f}s")
        history += [user, reply]
    return "3 turns ok, replies " + " ".join(lengths)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--device", default="cuda", help="cuda, cuda:N, auto or cpu")
    ap.add_argument(
        "--dtype", default="auto", help="auto (the checkpoint's fp32), bf16, fp16, fp32"
    )
    ap.add_argument("--out", default="", help="append the result lines to this TSV file")
    args = ap.parse_args(argv)
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    sys.path.insert(0, str(ROOT / "tests"))
    import torch

    if args.device.startswith("cuda") and not torch.cuda.is_available():
        line = f"qwen-omni\t{args.device}\t{args.dtype}\tskipped\t0\tno CUDA device here"
        print(line, flush=True)
        if args.out:
            with open(args.out, "a", encoding="utf-8") as fh:
                fh.write(line + "\n")
        return 0
    torch.set_num_threads(max(1, min(4, os.cpu_count() or 1)))
    from standins.tiny_qwen import COMMIT, build_checkpoints

    from stylebench.model_wrappers.hf.qwen3_omni import Qwen3OmniModel
    from stylebench.model_wrappers.hf.qwen25_omni import Qwen25OmniModel

    lines, failed = [], False
    with tempfile.TemporaryDirectory(prefix="sb-tiny-qwen-") as tmp:
        root = Path(tmp)
        build_checkpoints(root)
        wavs = tones(root)
        snapshot = root / "hub" / "models--Qwen--Qwen3-Omni-30B-A3B-Instruct" / "snapshots" / COMMIT
        cases = [
            ("qwen2.5-omni", Qwen25OmniModel, root / "qwen25", {"talker_max_new_tokens": 16}),
            ("qwen3-omni", Qwen3OmniModel, snapshot, {"talker_max_new_tokens": 20}),
        ]
        for name, cls, path, extra in cases:
            start = time.monotonic()
            try:
                model = cls(
                    path=str(path),
                    device=args.device,
                    dtype=args.dtype,
                    processor="audio-only",
                    **extra,
                )
                placed = str(next(model.model.parameters()).device)
                status, detail = "ok", f"{three_turns(model, wavs)}; weights on {placed}"
                del model
            except Exception as exc:  # reported, and the next model still runs
                failed = True
                status = "failed"
                detail = f"{type(exc).__name__}: {exc}".splitlines()[0][:300]
                traceback.print_exc(file=sys.stderr)
            secs = f"{time.monotonic() - start:.1f}"
            lines.append("\t".join((name, args.device, args.dtype, status, secs, detail)))
            print(lines[-1], flush=True)
            if torch.cuda.is_available():
                torch.cuda.empty_cache()
    if args.out:
        with open(args.out, "a", encoding="utf-8") as fh:
            fh.write("".join(line + "\n" for line in lines))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
