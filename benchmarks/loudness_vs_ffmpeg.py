"""stylebench's integrated loudness (``metrics.loudness``, ITU-R BS.1770-4) against FFmpeg's
``ebur128`` filter on real speech: the VStyle replies of real models and the corpus clips.

FFmpeg measures at 48 kHz after its own resampler and prints one decimal, so agreement within
0.05 LU is the best it can show. Printed: per source, the files, the median and the largest
|ours - FFmpeg|, and the files off by more than 0.1 LU (with both values).

    python benchmarks/loudness_vs_ffmpeg.py [--replies DIR] [--speech DIR[:DIR...]]

``--replies`` defaults to ``../shared/real_replies/vstyle``, ``--speech`` to
``$STYLEBENCH_REAL_SPEECH`` or ``../shared/real_speech`` (every ``*.wav`` / ``*.flac`` there). A
source that is absent is skipped with a message.
"""

from __future__ import annotations

import argparse
import os
import shutil
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from real_replies_refs import DEFAULT  # noqa: E402
from real_replies_refs import integrated_loudness as ffmpeg_lufs

ROOT = Path(__file__).resolve().parents[1]


def files_of(folder: Path) -> list[Path]:
    return sorted(p for p in folder.rglob("*") if p.suffix.lower() in (".wav", ".flac", ".mp3"))


def compare(paths: list[Path]) -> list[tuple[Path, float, float]]:
    from stylebench.audio import AudioError, load_audio
    from stylebench.metrics.loudness import integrated_loudness

    rows = []
    for p in paths:
        try:
            ours = integrated_loudness(*load_audio(p))
        except AudioError as exc:
            print(f"  skipped {p.name}: {exc}")
            continue
        ref = ffmpeg_lufs(p)
        if ours is None or ref is None:
            print(f"  {p.name}: ours {ours}, FFmpeg {ref} (nothing above the gate)")
            continue
        rows.append((p, ours, ref))
    return rows


def main() -> None:
    ap = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument("--replies", type=Path, default=DEFAULT)
    ap.add_argument(
        "--speech",
        default=os.environ.get(
            "STYLEBENCH_REAL_SPEECH", str(ROOT.parent / "shared" / "real_speech")
        ),
    )
    args = ap.parse_args()
    if shutil.which("ffmpeg") is None:
        raise SystemExit("ffmpeg is not installed (make setup installs it)")
    sources = {"VStyle replies": [args.replies]}
    sources["corpus clips"] = [Path(p) for p in args.speech.split(":") if p]
    for name, folders in sources.items():
        paths = [f for d in folders if d.is_dir() for f in files_of(d)]
        if not paths:
            print(f"{name}: no audio under {', '.join(map(str, folders))}; skipped")
            continue
        rows = compare(paths)
        diffs = np.array([abs(o - r) for _, o, r in rows])
        print(
            f"{name}: {len(rows)} files, |ours - FFmpeg| median {np.median(diffs):.3f} LU, "
            f"max {diffs.max():.3f} LU; {int((diffs > 0.1).sum())} over 0.1 LU"
        )
        for p, o, r in rows:
            if abs(o - r) > 0.1:
                print(f"  {p.name}: ours {o:.2f}, FFmpeg {r:.1f}")


if __name__ == "__main__":
    main()
