"""Do stylebench's pitch, volume and speed scores follow known changes made to real voices?

Each clip of ``benchmarks/corpus`` (real English and Mandarin speech, see its SOURCES.md) is
changed with FFmpeg by a known amount: tempo x1.25 and x0.8 (``atempo``, pitch kept), gain +-4 dB,
pitch +-2 semitones by resampling (``asetrate`` + ``atempo`` + ``aresample``, formants move) and
+-2 semitones by a formant-preserving shifter (FFmpeg ``rubberband`` when the build has it, else a
pyworld resynthesis). The original and each copy are measured exactly as a run measures replies:
``analyse_reply`` per file, then ``finish_sample`` over a two-turn sample (turn 1 = the original,
turn 2 = the copy), transcripts from ``FasterWhisperASR("base")``, and each turn's score and the
change between turns from the dimension registry (``metrics/dims``) with its default threshold
(``stylebench.scoring.cells.is_valid``).

Why pairs: a run scores the change between consecutive turns (pairs 1-2 and 2-3) and the pitch
octave guard pools the voiced frames of the turns of one sample. A two-turn sample of the original
and one copy is the same computation for one pair; putting +2 and -2 st copies into one sample
would widen the pooled range beyond any real sample's and hide or cause guard effects that a run
never sees.

    .venv/bin/python benchmarks/real_speech.py [--clips en_lj,zh_call] [--no-asr] [--jobs 2]
                                               [--json out.json]
"""

from __future__ import annotations

import argparse
import json
import math
import sys
import time
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path
from typing import Any

import numpy as np
from asr_cache import cached_transcript
from real_speech_report import render, summarise
from real_speech_transforms import (
    Change,
    changes,
    has_rubberband,
    load_folder,
    load_manifest,
    load_vstyle,
    make_versions,
)
from real_speech_words import asr_path, different_words

DIMS = ("pitch", "volume", "speed")
#: pyworld frames this far below Praat's median count as octave (subharmonic) errors
LOW_OCTAVES = 0.75


def transcript(path: Path, wave: np.ndarray, sr: int, lang: str, cache: Path) -> Any:
    """The transcript record a run's transcribe stage would write (benchmarks/asr_cache.py)."""
    from stylebench.records import TranscriptRecord

    key, d = cached_transcript(wave, sr, lang, cache)
    return TranscriptRecord("bench", 1, "ok", key[:16], **d)


def diagnostics(part: dict[str, Any], wave: np.ndarray, sr: int) -> dict[str, float]:
    """Why a reply's measurement may fail: VAD span vs the file and an energy detector, and
    pyworld against Praat (medians, and pyworld's share of frames an octave-ish below Praat)."""

    spans = part["spans"]
    out = {
        "duration_s": wave.size / sr,
        "vad_span_s": spans["silero"]["span_s"] if "silero" in spans else math.nan,
        "energy_span_s": spans["energy"]["span_s"] if "energy" in spans else math.nan,
        "silero_missed_s": part["missed_s"] if part["missed_s"] is not None else math.nan,
    }
    pw, pr = part["track"], part["praat_track"]
    pw_v, pr_v = pw[pw > 0], pr[pr > 0]
    out["pyworld_median_hz"] = float(np.median(pw_v)) if pw_v.size else math.nan
    out["praat_median_hz"] = float(np.median(pr_v)) if pr_v.size else math.nan
    if pw_v.size and pr_v.size:
        low = out["praat_median_hz"] * 2.0**-LOW_OCTAVES
        out["pyworld_low_octave_frac"] = float(np.mean(pw_v <= low))
    else:
        out["pyworld_low_octave_frac"] = math.nan
    return out


def score_pair(
    clip_id: str, lang: str, a: dict[str, Any], b: dict[str, Any], trs: dict[int, Any]
) -> dict[str, Any]:
    """Scores of a two-turn sample (original, copy) on every dimension, as a run scores them."""
    from stylebench.metrics.dims.base import ScoreContext, dimension, plain
    from stylebench.records import FeatureRecord
    from stylebench.scoring.cells import perceptual_change
    from stylebench.stages.measure import finish_sample

    done = finish_sample({1: a, 2: b}, trs, lang)
    feats, out = {}, {"errors": {}, "flags": {}, "values": {}, "scores": {}, "change": {}}
    for k, res in done.items():
        if isinstance(res, str):
            out["errors"][k] = res
            continue
        feats[k] = FeatureRecord(clip_id, k, "ok", "bench", values=res[0], flags=res[1])
        out["values"][k], out["flags"][k] = res[0], res[1]
    for d in DIMS:
        vals, _extra = dimension(d).turn_values(None, feats, ScoreContext())
        pair = [plain(vals.get(1)), plain(vals.get(2))]
        out["scores"][d] = [v if isinstance(v, float) else None for v in pair]
        if all(isinstance(v, float) and v > 0 for v in pair):
            out["change"][d] = perceptual_change(d, pair[0], pair[1])
        else:
            out["change"][d] = next((v for v in pair if isinstance(v, str)), "no score")
    return out


def measure_clip(
    clip: dict[str, Any], todo: list[Change], cache: Path, use_asr: bool
) -> dict[str, Any]:
    """Make the clip's copies and measure every (original, copy) pair. Runs in a worker."""
    from stylebench.audio import load_audio
    from stylebench.stages.measure import ANALYSIS_SR, FeatureConfig, analyse_reply

    t0 = time.perf_counter()
    paths, info = make_versions(clip, todo, cache)
    cfg, parts, trs, diag, errors = FeatureConfig(), {}, {}, {}, {}
    for name, p in paths.items():
        wave, sr = load_audio(p, target_sr=ANALYSIS_SR)
        try:
            parts[name] = analyse_reply(wave, sr, cfg)
        except ValueError as exc:
            errors[name] = f"analyse_reply: {exc}"
            continue
        diag[name] = diagnostics(parts[name], wave, sr)
        if use_asr:
            trs[name] = transcript(p, wave, sr, clip["lang"], cache)
            diag[name]["asr_text"] = trs[name].text
    pairs = {}
    for ch in todo:
        if "orig" in errors or ch.name in errors:
            pairs[ch.name] = {"errors": {0: errors.get("orig") or errors[ch.name]}}
            continue
        t = {1: trs["orig"], 2: trs[ch.name]} if use_asr else {}
        pairs[ch.name] = score_pair(clip["id"], clip["lang"], parts["orig"], parts[ch.name], t)
    keep = ("id", "lang", "sex", "f0_class", "style", "duration_s")
    return {
        **{k: clip[k] for k in keep},
        "split": clip.get("split", ""),
        "traits": clip.get("speaker_traits", []),
        "levels": info,
        "diagnostics": diag,
        "errors": errors,
        "pairs": pairs,
        "seconds": time.perf_counter() - t0,
    }


def run(
    clip_ids: list[str] | None = None,
    *,
    use_asr: bool = True,
    jobs: int = 1,
    cache: Path | None = None,
    corpus: str = "speech",
    every: int = 1,
    folder: Path | None = None,
    lang: str = "en",
    words: bool = True,
) -> dict[str, Any]:
    """Measure every selected clip and summarise; the whole result as one JSON-ready dict."""
    from stylebench.paths import cache_root

    cache = cache or cache_root() / "real_speech"
    if corpus == "folder":
        clips = load_folder(folder or Path("."), lang)
    else:
        clips = load_manifest() if corpus == "speech" else load_vstyle(every=every)
    if clip_ids:
        unknown = set(clip_ids) - {c["id"] for c in clips}
        if unknown:
            raise ValueError(
                f"unknown clip ids {sorted(unknown)}; known: {[c['id'] for c in clips]}"
            )
        clips = [c for c in clips if c["id"] in clip_ids]
    shifter = "rubberband" if has_rubberband() else "world"
    todo = changes(shifter)
    t0 = time.perf_counter()
    if jobs > 1:
        with ProcessPoolExecutor(max_workers=jobs) as pool:
            futures = [pool.submit(measure_clip, c, todo, cache, use_asr) for c in clips]
            results = [f.result() for f in futures]
    else:
        results = [measure_clip(c, todo, cache, use_asr) for c in clips]
    # one voice per reply is the target; clips of several speakers are stress cases, apart
    single = [r for r in results if "multi_speaker" not in r["traits"]]
    multi = [r for r in results if "multi_speaker" in r["traits"]]
    splits = sorted({r["split"] for r in single if r["split"]})
    out = {
        "formant_shifter": shifter,
        "asr": "faster-whisper:base" if use_asr else None,
        "isa": _isa(),
        "changes": [vars(c) | {"direction": c.direction} for c in todo],
        "clips": results,
        "summary": summarise(single, todo, use_asr),
        "by_split": {
            sp: summarise([r for r in single if r["split"] == sp], todo, use_asr) for sp in splits
        },
        "multi_speaker": summarise(multi, todo, use_asr) if multi else None,
    }
    if use_asr and corpus == "speech":
        out["asr_path"] = asr_path(results, {c["id"]: c for c in clips})
        out["different_words"] = different_words(clips, todo, cache) if words else None
    out["seconds"] = time.perf_counter() - t0
    return out


def _isa() -> str:
    """CTranslate2's CPU code path here (instruction set and GEMM backend), as the ASR cache
    keys it: transcripts, so speed, may differ between paths (docs/metrics.md)."""
    from stylebench.metrics.asr.isa import ct2_cpu

    return ct2_cpu().key()


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--clips", help="comma-separated clip ids (default: all)")
    ap.add_argument(
        "--corpus",
        choices=("speech", "vstyle", "folder"),
        default="speech",
        help="speech: the 11-clip corpus the extractors were designed on; vstyle: held-out real "
        "model replies (shared/real_replies/vstyle) with the same known changes; folder: every "
        "audio file of --folder, spoken in --lang (e.g. synthetic speech)",
    )
    ap.add_argument("--folder", type=Path, help="--corpus folder: the audio files' folder")
    ap.add_argument("--lang", choices=("en", "zh"), default="en", help="--corpus folder: language")
    ap.add_argument("--every", type=int, default=1, help="vstyle: keep every n-th reply")
    ap.add_argument("--no-asr", action="store_true", help="skip transcripts, so skip speed")
    ap.add_argument(
        "--no-words",
        action="store_true",
        help="skip the different-words speed test (pairs of different clips, truth from the "
        "reference texts)",
    )
    ap.add_argument("--jobs", type=int, default=1, help="clips measured in parallel (processes)")
    ap.add_argument("--json", type=Path, help="write the full results here")
    ap.add_argument(
        "--cache", type=Path, help="cache folder (default $STYLEBENCH_CACHE/real_speech)"
    )
    args = ap.parse_args(argv)
    if args.corpus == "folder" and args.folder is None:
        ap.error("--corpus folder needs --folder DIR")
    ids = [c.strip() for c in args.clips.split(",") if c.strip()] if args.clips else None
    try:
        result = run(
            ids,
            use_asr=not args.no_asr,
            jobs=max(1, args.jobs),
            cache=args.cache,
            corpus=args.corpus,
            every=args.every,
            folder=args.folder,
            lang=args.lang,
            words=not args.no_words,
        )
    except (FileNotFoundError, ValueError) as exc:  # no corpus audio, an unknown clip id
        print(f"real_speech: {exc}", file=sys.stderr)
        return 2
    print(render(result))
    if args.json:
        args.json.write_text(json.dumps(result, indent=1, ensure_ascii=False, default=str) + "\n")
    return 0 if result["summary"]["targets"]["all_pass"] else 1


if __name__ == "__main__":
    sys.exit(main())
