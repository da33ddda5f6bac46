"""How do stylebench's measurements behave on real model replies (VStyle project page)?

Seven models' replies (English and Mandarin MP3) to single-turn speaking-style instructions, read
from ``$STYLEBENCH_REAL_REPLIES`` (default ``../shared/real_replies/vstyle`` beside the checkout;
see its SOURCES.md; the audio is not in the repository). Each reply is measured exactly as a run
measures one: decoded to 16 kHz by stylebench's loader, ``analyse_reply``, a transcript from
``FasterWhisperASR("base")`` on one BLAS thread, the page's transcript as the model's text channel,
then ``finish_sample`` and each dimension's ``turn_values`` (``metrics/dims``), so the scoring rules
in force are the ones measured. Every reply is scored alone (a one-turn sample: the per-reply rows)
and each of the 42 opposite-instruction pairs as a two-turn sample (turn 1 = the "attenuate" reply,
turn 2 = the "intensify" one) with the default thresholds (``stylebench.scoring.cells.is_valid``).

Printed: unscored replies by reason per dimension, flag rates, volume against FFmpeg's integrated
loudness, speed against the text channel and duration, pitch against Praat alone and pyworld
harvest, moved-as-asked per model next to the published Gemini scores, and synthetic non-speech
probes that should come out unscored.

    .venv/bin/python benchmarks/real_replies.py [--jobs 2] [--json out.json] [--no-asr]
                                                [--files en/replies/a.mp3,...]
"""

from __future__ import annotations

import argparse
import copy
import json
import sys
import time
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path
from typing import Any

import numpy as np
import real_replies_refs as refs
from asr_cache import cached_transcript
from real_replies_report import render, summarise

DIMS = ("pitch", "volume", "speed")
CROP_SOURCE = "en/replies/acoustic_properties-pitch-50-Baichuan-Audio.mp3"  # "One, two, ..."


def transcript(wave: np.ndarray, sr: int, lang: str, cache: Path) -> dict[str, Any]:
    """What a run's transcribe stage would record (benchmarks/asr_cache.py)."""
    return cached_transcript(wave, sr, lang, cache)[1]


def _record(d: dict[str, Any] | None) -> Any:
    from stylebench.records import TranscriptRecord

    return None if d is None else TranscriptRecord("bench", 1, "ok", "bench", **d)


def measure_wave(
    wave: np.ndarray, sr: int, lang: str, cache: Path, use_asr: bool, harvest: bool
) -> dict[str, Any]:
    """``analyse_reply``, the transcript and the reference F0s of one decoded reply."""
    from stylebench.stages.measure import FeatureConfig, analyse_reply

    out: dict[str, Any] = {"error": None, "part": None, "transcript": None, "refs": {}}
    out["refs"]["praat_alone_f0"] = refs.praat_mean_f0(wave, sr)
    out["refs"]["harvest_f0"] = refs.harvest_mean_f0(wave, sr) if harvest else None
    try:
        out["part"] = analyse_reply(wave, sr, FeatureConfig())
    except ValueError as exc:
        out["error"] = f"analyse_reply: {exc}"
        return out
    if use_asr:
        out["transcript"] = transcript(wave, sr, lang, cache)
    return out


def measure_file(
    entry: dict[str, Any], folder: Path, cache: Path, use_asr: bool, harvest: bool
) -> dict[str, Any]:
    """Decode and measure one reply file; a load error is the reply's result. Runs in a worker."""
    from stylebench.audio import AudioError, load_audio
    from stylebench.stages.measure import ANALYSIS_SR

    t0 = time.perf_counter()
    path = folder / entry["file"]
    out: dict[str, Any] = {"error": None, "part": None, "transcript": None, "refs": {}}
    try:
        out["refs"]["lufs"] = refs.integrated_loudness(path)
    except ValueError as exc:
        out["refs"]["lufs"], out["refs"]["lufs_error"] = None, str(exc)
    try:
        wave, sr = load_audio(path, target_sr=ANALYSIS_SR)
    except AudioError as exc:
        out["error"] = f"audio: {exc}"
    else:
        lufs = out["refs"]
        out = measure_wave(wave, sr, entry["lang"], cache, use_asr, harvest)
        out["refs"] = {**lufs, **out["refs"]}
    out["seconds"] = time.perf_counter() - t0
    return out


def score_sample(
    parts: dict[int, dict[str, Any]],
    trs: dict[int, dict[str, Any] | None],
    lang: str,
    texts: dict[int, str],
) -> dict[str, Any]:
    """Each turn's values, flags and per-dimension score (or why none) and the change from turn 1
    to turn 2, as a run scores one sample (copies of ``parts``: ``finish_sample`` updates them)."""
    from stylebench.metrics.dims.base import ScoreContext, dimension, plain
    from stylebench.records import FeatureRecord
    from stylebench.scoring.cells import perceptual_change
    from stylebench.stages.measure import finish_sample

    records = {k: r for k, t in trs.items() if (r := _record(t)) is not None}
    done = finish_sample(copy.deepcopy(parts), records, lang, texts)
    feats, out = {}, {"errors": {}, "flags": {}, "values": {}, "scores": {}, "change": {}}
    for k, res in done.items():
        if isinstance(res, str):
            out["errors"][k] = res
            continue
        feats[k] = FeatureRecord("bench", k, "ok", "bench", values=res[0], flags=res[1])
        out["values"][k], out["flags"][k] = res[0], res[1]
    for d in DIMS:
        vals, extra = dimension(d).turn_values(None, feats, ScoreContext())
        per = {k: plain(vals.get(k, out["errors"].get(k, "no feature record"))) for k in parts}
        out["scores"][d] = {k: v if isinstance(v, float) else str(v) for k, v in per.items()}
        out.setdefault("sample_flags", {})[d] = list(extra)
        if len(parts) == 2:
            a, b = per[1], per[2]
            ok = all(isinstance(v, float) and v > 0 for v in (a, b))
            out["change"][d] = (
                perceptual_change(d, a, b)
                if ok
                else next((v for v in (a, b) if isinstance(v, str)), "no score")
            )
    return out


def _unscored(error: str) -> dict[str, Any]:
    return {
        "errors": {1: error},
        "flags": {},
        "values": {},
        "change": {},
        "scores": {d: {1: error} for d in DIMS},
    }


def run(
    files: list[str] | None = None,
    *,
    use_asr: bool = True,
    jobs: int = 1,
    cache: Path | None = None,
) -> dict[str, Any]:
    """Measure the replies (all, or ``files`` and no pairs), score them and the pairs; one
    JSON-ready dict (numpy parts dropped)."""
    from stylebench.paths import cache_root

    folder = refs.data_dir()
    cache = cache or cache_root() / "real_replies"
    replies, pairs = refs.load_inputs(folder)
    if files:
        unknown = set(files) - {e["file"] for e in replies}
        if unknown:
            raise FileNotFoundError(f"not in manifest.json: {sorted(unknown)}")
        replies = [e for e in replies if e["file"] in files]
        pairs = [p for p in pairs if {p["attenuate_file"], p["intensify_file"]} <= set(files)]
    in_pairs = {p[k] for p in pairs for k in ("attenuate_file", "intensify_file")}
    t0 = time.perf_counter()
    args = [(e, folder, cache, use_asr, e["file"] in in_pairs) for e in replies]
    if jobs > 1:
        with ProcessPoolExecutor(max_workers=jobs) as pool:
            measured = list(pool.map(measure_file, *zip(*args, strict=True)))
    else:
        measured = [measure_file(*a) for a in args]
    by_file = {e["file"]: m for e, m in zip(replies, measured, strict=True)}
    rows = [_reply_row(e, by_file[e["file"]]) for e in replies]
    entries = {e["file"]: e for e in replies}
    pair_rows = [_pair_row(p, entries, by_file) for p in pairs]
    probe_rows = _probes(folder, cache, use_asr)
    return {
        "folder": str(folder),
        "asr": "faster-whisper:base" if use_asr else None,
        "replies": rows,
        "pairs": pair_rows,
        "probes": probe_rows,
        "summary": summarise(rows, pair_rows, probe_rows),
        "seconds": time.perf_counter() - t0,
    }


def _text(entry: dict[str, Any]) -> str:
    return (entry.get("response_text") or "").strip()


def _reply_row(entry: dict[str, Any], m: dict[str, Any]) -> dict[str, Any]:
    keep = ("file", "model", "lang", "ability", "expected_direction", "duration_s")
    row = {k: entry.get(k) for k in keep}
    row["gemini_score"] = (entry.get("published_judgment") or {}).get("gemini_score")
    row |= {
        "text": _text(entry),
        "refs": m["refs"],
        "seconds": m["seconds"],
        "asr_text": (m["transcript"] or {}).get("text"),
    }
    if m["error"]:
        row["result"] = _unscored(m["error"])
    else:
        row["result"] = score_sample(
            {1: m["part"]}, {1: m["transcript"]}, entry["lang"], {1: row["text"]}
        )
        row["spans"] = {b: s["span_s"] for b, s in m["part"]["spans"].items()}
    return row


def _pair_row(
    pair: dict[str, Any], entries: dict[str, dict[str, Any]], by_file: dict[str, dict[str, Any]]
) -> dict[str, Any]:
    files = (pair["attenuate_file"], pair["intensify_file"])
    row = {**pair, "refs": [by_file[f]["refs"] for f in files]}
    errors = [by_file[f]["error"] for f in files if by_file[f]["error"]]
    if errors:
        row["result"] = {
            "errors": {0: errors[0]},
            "change": dict.fromkeys(DIMS, errors[0]),
            "scores": {},
            "values": {},
            "flags": {},
        }
        return row
    parts = {k + 1: by_file[f]["part"] for k, f in enumerate(files)}
    trs = {k + 1: by_file[f]["transcript"] for k, f in enumerate(files)}
    texts = {k + 1: _text(entries[f]) for k, f in enumerate(files)}
    row["result"] = score_sample(parts, trs, pair["lang"], texts)
    return row


def _probes(folder: Path, cache: Path, use_asr: bool) -> list[dict[str, Any]]:
    """The synthetic non-speech controls, each measured and scored as a one-turn English reply."""
    from stylebench.audio import load_audio
    from stylebench.stages.measure import ANALYSIS_SR

    crop, start = None, None
    src = folder / CROP_SOURCE
    if src.is_file():
        wave, sr = load_audio(src, target_sr=ANALYSIS_SR)
        m = measure_wave(wave, sr, "en", cache, False, False)
        spans = (m["part"] or {}).get("spans", {})
        start = next((s["span_start"] for s in spans.values()), None)
        crop = None if start is None else refs.syllable_crop(wave, sr, start)
    out = []
    for name, wave in refs.probes(crop, ANALYSIS_SR).items():
        m = measure_wave(wave, ANALYSIS_SR, "en", cache, use_asr, True)
        res = (
            _unscored(m["error"])
            if m["error"]
            else score_sample({1: m["part"]}, {1: m["transcript"]}, "en", {})
        )
        row = {
            "probe": name,
            "duration_s": wave.size / ANALYSIS_SR,
            "refs": m["refs"],
            "asr_text": (m["transcript"] or {}).get("text"),
            "result": res,
        }
        if name.startswith("syllable"):
            row["source"] = f"{CROP_SOURCE} from {start:.2f} s"
        out.append(row)
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument(
        "--files", help="comma-separated reply files as in manifest.json (default: all)"
    )
    ap.add_argument(
        "--no-asr", action="store_true", help="skip transcripts (speed from the text channel)"
    )
    ap.add_argument("--jobs", type=int, default=1, help="replies measured in parallel (processes)")
    ap.add_argument("--json", type=Path, help="write the full results here")
    ap.add_argument(
        "--cache", type=Path, help="cache folder (default $STYLEBENCH_CACHE/real_replies)"
    )
    args = ap.parse_args(argv)
    files = [f.strip() for f in args.files.split(",") if f.strip()] if args.files else None
    try:
        result = run(files, use_asr=not args.no_asr, jobs=max(1, args.jobs), cache=args.cache)
    except FileNotFoundError as exc:  # no replies folder, a file not in the manifest
        print(f"real_replies: {exc}", file=sys.stderr)
        return 2
    print(render(result))
    if args.json:
        args.json.write_text(json.dumps(result, indent=1, ensure_ascii=False, default=str) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
