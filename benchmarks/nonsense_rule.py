"""Does the passage rule of ``asr_unsure`` catch nonsense words, and leave clean speech alone?

For every clip of the real-speech corpus (``benchmarks/corpus/manifest.json``, audio from
``$STYLEBENCH_REAL_SPEECH``) three versions are transcribed as a run would (Whisper base, one BLAS
thread, the benchmark transcript cache of ``benchmarks/asr_cache.py``):

- ``clean``: the clip itself; a flag here unscores good speech;
- ``pseudo`` (English clips): the Piper voice reading a string of pseudo-words ("blick frandle
  tove ...") for 0.6 of the clip's length, then the clip (nonsense is about 40% of the result,
  as in the 70 s reply with 27 s of nonsense words that an outside check found scored);
  the voice's noise scales are 0, so the audio is the same on every run;
- ``reversed``: the clip with its first 40% played backwards (a weaker stand-in: Whisper writes
  real words for reversed speech).

Printed per kind and corpus half (tune / heldout): how many transcripts ``transcript_doubts``
flags ``asr_unsure``, and the largest ``asr_unsure_stretch`` / ``asr_unknown_stretch`` values.

    .venv/bin/python benchmarks/nonsense_rule.py [--jobs 2] [--json out.json]
"""

from __future__ import annotations

import argparse
import json
import sys
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path
from typing import Any

import numpy as np

PSEUDO = (
    "blick frandle tove snorp miggle dax wug plonter gravish tobe zindle quam fesh nork lubble "
    "strane vopple dimmick sharn tolp gorble wisket prane fodder zuzzle pock marnish velt trundy "
    "kog snibble harm zeffer nolly crebb "
)
KINDS = ("clean", "pseudo", "reversed")


def pseudo_prefix(x: np.ndarray, sr: int, seconds: float) -> np.ndarray:
    """``seconds`` of the Piper voice reading :data:`PSEUDO` (deterministic), at the clip's
    level, 0.3 s of silence, then the clip."""
    from stylebench.metrics._common import resample
    from stylebench.synth.piper import PiperSynth

    voice = PiperSynth()
    voice.config.setdefault("inference", {}).update(noise_scale=0.0, noise_w=0.0)
    y = resample(np.asarray(voice.speak(PSEUDO * 3), dtype=np.float64), voice.sample_rate, sr)
    y = y[: int(seconds * sr)]
    y = y * (np.sqrt(np.mean(x**2)) / max(float(np.sqrt(np.mean(y**2))), 1e-9))
    return np.concatenate([y, np.zeros(int(0.3 * sr)), x])


def version(kind: str, x: np.ndarray, sr: int) -> np.ndarray:
    if kind == "reversed":
        k = int(x.size * 0.4)
        return np.concatenate([x[:k][::-1], x[k:]])
    if kind == "pseudo":
        return pseudo_prefix(x, sr, max(4.0, 0.6 * x.size / sr))
    return x


def one(item: tuple[str, dict[str, Any], str]) -> dict[str, Any]:
    kind, clip, cache = item
    from asr_cache import cached_transcript

    from stylebench.audio import load_audio
    from stylebench.metrics import rate, validity

    x, sr = load_audio(clip["path"], target_sr=16000)
    x = version(kind, np.asarray(x, dtype=np.float64), sr)
    _, d = cached_transcript(x.astype(np.float32), sr, clip["lang"], Path(cache))
    syl = rate.count_syllables(d["text"], clip["lang"])
    unknown = validity.unknown_stretch(d["words"], clip["lang"])
    doubts = validity.transcript_doubts(
        d["text"],
        clip["lang"],
        syl,
        x.size / sr,
        None,
        unsure_word_share=d["unsure_word_share"],
        mean_logprob=d["mean_logprob"],
        unsure_stretch_share=d["unsure_stretch_share"],
        unknown_stretch_share=unknown,
    )
    return {
        "kind": kind,
        "id": clip["id"],
        "split": clip.get("split", "?"),
        "lang": clip["lang"],
        "flagged": "asr_unsure" in doubts,
        "unsure_stretch": d["unsure_stretch_share"],
        "unknown_stretch": round(unknown, 4),
        "mean_logprob": d["mean_logprob"],
        "text": d["text"][:120],
    }


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--jobs", type=int, default=1, help="transcripts made in parallel")
    ap.add_argument("--json", type=Path, help="write the per-version rows here")
    ap.add_argument(
        "--cache", type=Path, help="cache folder (default $STYLEBENCH_CACHE/real_speech)"
    )
    args = ap.parse_args(argv)
    from real_speech_transforms import load_manifest

    from stylebench.paths import cache_root

    cache = str(args.cache or cache_root() / "real_speech")
    try:
        clips = load_manifest()
    except FileNotFoundError as exc:
        print(f"nonsense_rule: {exc}", file=sys.stderr)
        return 2
    items = [(k, c, cache) for c in clips for k in KINDS if k != "pseudo" or c["lang"] == "en"]
    with ProcessPoolExecutor(max(1, args.jobs)) as ex:
        rows = list(ex.map(one, items))
    print(
        "kind      half     flagged  worst unsure_stretch  worst unknown_stretch  missed / flagged"
    )
    for kind in KINDS:
        for half in ("tune", "heldout"):
            sel = [r for r in rows if r["kind"] == kind and r["split"] == half]
            if not sel:
                continue
            odd = [r["id"] for r in sel if r["flagged"] == (kind == "clean")]
            print(
                f"{kind:9s} {half:8s} {sum(r['flagged'] for r in sel):3d}/{len(sel):<3d}"
                f"  {max(r['unsure_stretch'] for r in sel):20.3f}"
                f"  {max(r['unknown_stretch'] for r in sel):21.3f}  {', '.join(odd) or '-'}"
            )
    if args.json:
        args.json.write_text(json.dumps(rows, indent=1, ensure_ascii=False) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
