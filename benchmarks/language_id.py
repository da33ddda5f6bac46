"""The language ID on the first pass's encoder output against its own encoder pass, on real audio.

``FasterWhisperASR`` records the language Whisper hears (``spoken_lang``, ``declared_lang_p``),
and ``validity.language_mismatch`` unscores a reply whose declared language gets under
``MIN_DECLARED_LANG_P``. Since ASR spec 7 the language ID reads the encoder output the first
(greedy) pass computed for its first 30 s window instead of encoding the audio again with
faster-whisper's ``detect_language(audio)``; the two inputs differ by one feature frame (the
transcription drops the extractor's padding frame and pads with zeros). This benchmark runs both
on every file of the real sets and counts what changes: the top language, the declared
language's probability, and the mismatch decision; and the CPU seconds per file of a transcript
with each (one thread, one file at a time).

    python benchmarks/language_id.py [--limit N] [--json out.json]

Files: the VStyle replies and prompts (``$STYLEBENCH_REAL_REPLIES``, default
``../shared/real_replies/vstyle``) and the corpus clips (``benchmarks/corpus/manifest.json``,
``../shared/real_speech``); missing folders are skipped with a line saying so.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
SHARED = HERE.parent.parent / "shared"


def files(limit: int) -> list[tuple[Path, str]]:
    out: list[tuple[Path, str]] = []
    replies = Path(os.environ.get("STYLEBENCH_REAL_REPLIES", SHARED / "real_replies" / "vstyle"))
    if (replies / "manifest.json").is_file():
        out += [
            (replies / e["file"], e["lang"])
            for e in json.loads((replies / "manifest.json").read_text())
        ]
    else:
        print(f"skipped: no {replies}/manifest.json", file=sys.stderr)
    speech = SHARED / "real_speech"
    manifest = json.loads((HERE / "corpus" / "manifest.json").read_text())
    if speech.is_dir():
        out += [(speech / c["file"], c["lang"]) for c in manifest["clips"]]
    else:
        print(f"skipped: no {speech}", file=sys.stderr)
    return out[:limit] if limit else out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--limit", type=int, default=0, help="first N files only (0: all)")
    ap.add_argument("--json", type=Path, help="per-file results")
    args = ap.parse_args(argv)

    from stylebench.audio import load_audio
    from stylebench.metrics.asr.backends import FasterWhisperASR
    from stylebench.metrics.asr.transcript import to_16k, with_language
    from stylebench.metrics.validity import language_mismatch

    asr = FasterWhisperASR("base", cpu_threads=1)
    rows: list[dict[str, Any]] = []
    cpu_new = cpu_old = 0.0
    for path, lang in files(args.limit):
        wave, sr = load_audio(path)
        t0 = time.process_time()
        tr = asr.transcribe(wave, sr, lang)  # the language ID on the first pass's encoder output
        t1 = time.process_time()
        _top, _p, probs = asr._load().detect_language(audio=to_16k(wave, sr))
        old = with_language(tr, probs)  # the same transcript, language ID by its own pass
        t2 = time.process_time()
        cpu_new += t1 - t0
        cpu_old += (t1 - t0) + (t2 - t1)
        rows.append(
            {
                "file": str(path.relative_to(SHARED)) if path.is_relative_to(SHARED) else str(path),
                "lang": lang,
                "spoken": [old.spoken_lang, tr.spoken_lang],
                "declared_p": [old.declared_lang_p, tr.declared_lang_p],
                "mismatch": [
                    language_mismatch(lang, old.spoken_lang, old.declared_lang_p),
                    language_mismatch(lang, tr.spoken_lang, tr.declared_lang_p),
                ],
            }
        )
    n = len(rows)
    if not n:
        print("no files", file=sys.stderr)
        return 1
    diffs = [abs(r["declared_p"][0] - r["declared_p"][1]) for r in rows]
    top = sum(r["spoken"][0] != r["spoken"][1] for r in rows)
    flips = [r for r in rows if r["mismatch"][0] != r["mismatch"][1]]
    print(f"{n} files; top language changed in {top}; mismatch decision changed in {len(flips)}")
    print(
        f"declared-language probability: max |change| {max(diffs):.4f}, "
        f"mean {sum(diffs) / n:.4f}; mismatches: own pass "
        f"{sum(r['mismatch'][0] for r in rows)}, first-pass output {sum(r['mismatch'][1] for r in rows)}"
    )
    for r in flips:
        print(f"  changed: {r['file']} {r['spoken']} {r['declared_p']}")
    print(
        f"CPU per file, one thread: transcript with its own language-ID pass {cpu_old / n:.2f} s, "
        f"reusing the first pass {cpu_new / n:.2f} s ({cpu_old / cpu_new:.2f}x)"
    )
    if args.json:
        args.json.write_text(json.dumps(rows, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
