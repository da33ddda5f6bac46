"""When does the speed dimension take two turns as the same words, and what does that cost?

Two turns whose audio says the same words (``stylebench.metrics.validity.same_words``: the DTW
cost of their spectra under 1.7) share one syllable count, and their change of pace is the
aligned tempo (``stylebench.metrics.alignment.align``): no transcript enters it. This benchmark
measures that route where it can go wrong:

- **copies** of each single-speaker corpus clip (tempo x0.8 / x1.25, pitch +-2 st by resampling
  and by a formant-preserving shifter): the same words, with a known change of pace (the
  tempo's, or none); the aligned tempo against the ratio of the detected speech spans;
- **partial repeats**: the clip with a word taken out at the start, in the middle or at the end,
  its first fifth taken out, or two of its words said again before it (a lead-in): the words
  differ by a little, the pace does not. Word times come from Whisper base's transcript of the
  clip (cached as the real-speech benchmark caches it). Each variant either goes to the
  same-words route (its error is the aligned tempo's change, where the truth is none) or to
  each turn's own count (the transcripts);
- **real replies that say other words**: every pair of VStyle replies by one model in one
  language (``--vstyle``): how many the test takes as the same words.

    STYLEBENCH_REAL_SPEECH=../shared/real_speech .venv/bin/python benchmarks/same_words.py \\
        [--clips a,b] [--vstyle] [--json out.json]
"""

from __future__ import annotations

import argparse
import copy
import itertools
import json
import math
import sys
from pathlib import Path
from typing import Any

import numpy as np

SR = 16000
#: the true change of pace of each copy (percent), the rest none
TEMPO_TRUTH = {"tempo_x0.8": -20.0, "tempo_x1.25": 25.0}


def splice(wave: np.ndarray, cuts: list[tuple[float, float]]) -> np.ndarray:
    """``wave`` without the ``[start, end)`` second ranges, joined with 10 ms crossfades."""
    pieces, pos = [], 0
    for a, b in sorted(cuts):
        pieces.append(wave[pos : int(a * SR)])
        pos = int(b * SR)
    pieces.append(wave[pos:])
    out, fade = pieces[0], int(0.01 * SR)
    for seg in pieces[1:]:
        if out.size > fade and seg.size > fade:
            r = np.linspace(0.0, 1.0, fade, dtype=np.float32)
            out = np.concatenate([out[:-fade], out[-fade:] * (1 - r) + seg[:fade] * r, seg[fade:]])
        else:
            out = np.concatenate([out, seg])
    return out


def partial_repeats(wave: np.ndarray, words: list[list[Any]]) -> dict[str, np.ndarray]:
    """The clip's partial repeats (module text) from its transcript's word times; none for a
    transcript of fewer than five timed words."""
    w = [(float(x[1]), float(x[2])) for x in words if float(x[2]) > float(x[1])]
    if len(w) < 5:
        return {}
    mid, fifth = len(w) // 2, max(2, len(w) // 5)
    lead = wave[int(max(0.0, w[-2][0] - 0.02) * SR) : int((w[-1][1] + 0.05) * SR)]
    return {
        "drop_first_word": splice(wave, [(max(0.0, w[0][0] - 0.02), w[1][0] - 0.02)]),
        "drop_mid_word": splice(wave, [(w[mid][0], w[mid + 1][0])]),
        "drop_last_word": splice(wave, [(w[-1][0] - 0.02, wave.size / SR)]),
        "drop_first_fifth": splice(wave, [(max(0.0, w[0][0] - 0.02), w[fifth][0] - 0.02)]),
        "add_lead_2words": np.concatenate([lead, np.zeros(int(0.2 * SR), np.float32), wave]),
    }


def measure_clip(clip: dict[str, Any], cache: Path) -> list[dict[str, Any]]:
    """Every copy and partial repeat of one clip, paired with its original and measured as a
    two-turn sample (``finish_sample``)."""
    from asr_cache import cached_transcript
    from real_speech_transforms import changes, make_versions

    from stylebench.audio import load_audio
    from stylebench.stages.measure import FeatureConfig, analyse_reply, finish_sample

    todo = [ch for ch in changes("rubberband") if ch.dim in ("speed", "pitch")]
    paths, _ = make_versions(clip, todo, cache)
    orig, _ = load_audio(paths["orig"], target_sr=SR)
    _, tr = cached_transcript(orig, SR, clip["lang"], cache)
    variants = {ch.name: load_audio(paths[ch.name], target_sr=SR)[0] for ch in todo}
    variants.update(partial_repeats(orig, tr["words"]))
    base = analyse_reply(orig, SR, FeatureConfig())
    rows = []
    for name, wave in variants.items():
        row: dict[str, Any] = {"clip": clip["id"], "split": clip.get("split", ""), "kind": name}
        try:
            part = analyse_reply(wave.astype(np.float32), SR, FeatureConfig())
        except ValueError as exc:
            rows.append({**row, "error": str(exc)})
            continue
        done = finish_sample(copy.deepcopy({1: base, 2: part}), {}, clip["lang"])
        if any(isinstance(v, str) for v in done.values()):
            rows.append({**row, "error": "; ".join(v for v in done.values() if isinstance(v, str))})
            continue
        v1, v2 = done[1][0], done[2][0]
        truth = TEMPO_TRUTH.get(name, 0.0)
        row.update(
            cost=v2.get("dtw_cost_prev", math.nan),
            span_pct=100.0 * (v1["span_s"] / v2["span_s"] - 1.0) - truth,
            aligned_pct=100.0 * (1.0 / v2["dtw_tempo_prev"] - 1.0) - truth,
        )
        rows.append(row)
    return rows


def vstyle_costs(root: Path) -> list[dict[str, Any]]:
    """The DTW cost of every pair of VStyle replies by one model in one language."""
    from stylebench.audio import load_audio
    from stylebench.metrics import alignment, vad
    from stylebench.metrics.rate import count_syllables

    entries = [
        m for m in json.loads((root / "manifest.json").read_text()) if "replies/" in m["file"]
    ]
    spectra = {}
    for m in entries:
        try:
            w, sr = load_audio(root / m["file"], target_sr=SR)
            span = vad.speech_span(w, sr)
            mf = alignment.mfcc(w, sr)[
                int(span.start / alignment.HOP_S) : int(span.end / alignment.HOP_S) + 1
            ]
        except ValueError as exc:  # silence, a bad file: said, and left out of the pairs
            print(f"vstyle: {m['file']} left out: {exc}", file=sys.stderr)
            continue
        if len(mf) >= 3:
            spectra[m["file"]] = (mf, m["model"], m["lang"], m.get("response_text", ""), span)
    out = []
    for a, b in itertools.combinations(sorted(spectra), 2):
        (ma, mod_a, lang_a, ta, sa), (mb, mod_b, lang_b, tb, sb) = spectra[a], spectra[b]
        if mod_a == mod_b and lang_a == lang_b:
            al = alignment.align(ma, mb)
            row = {"a": a, "b": b, "model": mod_a, "lang": lang_a, "cost": al.cost}
            row["texts"] = [ta, tb]
            # what each route would call the change: the aligned tempo, and the page's texts'
            # syllables over the speech spans (the counts a faithful transcript would give)
            row["aligned_pct"] = 100.0 * (1.0 / al.tempo - 1.0)
            counts = [count_syllables(t, lang_a) for t in (ta, tb)]
            if all(counts):
                rates = [c / sp.duration_s for c, sp in zip(counts, (sa, sb), strict=True)]
                row["text_count_pct"] = 100.0 * (rates[1] / rates[0] - 1.0)
            out.append(row)
    return out


def summary(rows: list[dict[str, Any]], threshold: float) -> list[str]:
    """The printed tables."""
    out = []
    kinds: dict[str, list[dict[str, Any]]] = {}
    for r in rows:
        kinds.setdefault(r["kind"], []).append(r)
    out.append(
        f"{'kind':20} {'n':>3} {'same':>5}  {'cost max':>8}  |aligned err| med / max  |span err| med / max"
    )
    for kind, rs in kinds.items():
        ok = [r for r in rs if "cost" in r]
        same = [r for r in ok if r["cost"] < threshold]
        al = np.abs([r["aligned_pct"] for r in same]) if same else np.array([math.nan])
        sp = np.abs([r["span_pct"] for r in same]) if same else np.array([math.nan])
        out.append(
            f"{kind:20} {len(rs):3d} {len(same):5d}  {max((r['cost'] for r in ok), default=math.nan):8.2f}"
            f"  {np.median(al):6.2f} / {al.max():6.2f}      {np.median(sp):6.2f} / {sp.max():6.2f}"
        )
    copies = [r for r in rows if "cost" in r and not r["kind"].startswith(("drop", "add"))]
    partial = [r for r in rows if "cost" in r and r["kind"].startswith(("drop", "add"))]
    same_p = [r for r in partial if r["cost"] < threshold]
    for name, key in (("aligned tempo", "aligned_pct"), ("span ratio", "span_pct")):
        out.append(
            f"{name}: copies |error| >= 2%: {sum(abs(r[key]) >= 2 for r in copies)}/{len(copies)} "
            f"(max {max((abs(r[key]) for r in copies), default=math.nan):.2f}); partial repeats "
            f"taken as the same words {len(same_p)}/{len(partial)}, of which a fake change of 5% "
            f"or more: {sum(abs(r[key]) >= 5 for r in same_p)}, of 2.5% or more: "
            f"{sum(abs(r[key]) >= 2.5 for r in same_p)}"
        )
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--clips", help="comma-separated clip ids (default: every single-speaker clip)")
    ap.add_argument("--vstyle", action="store_true", help="also every same-model VStyle pair")
    ap.add_argument("--json", type=Path, help="write every row here")
    ap.add_argument(
        "--cache", type=Path, help="cache folder (default $STYLEBENCH_CACHE/real_speech)"
    )
    args = ap.parse_args(argv)
    from real_speech_transforms import load_manifest

    from stylebench.metrics.validity import SAME_CONTENT_COST
    from stylebench.paths import cache_root

    cache = args.cache or cache_root() / "real_speech"
    try:
        clips = [c for c in load_manifest() if "multi_speaker" not in c["speaker_traits"]]
    except FileNotFoundError as exc:
        print(f"same_words: {exc}", file=sys.stderr)
        return 2
    if args.clips:
        want = {c.strip() for c in args.clips.split(",")}
        clips = [c for c in clips if c["id"] in want]
    rows = [r for c in clips for r in measure_clip(c, cache)]
    lines = [f"same-words test on {len(clips)} single-speaker clips (cost < {SAME_CONTENT_COST})"]
    for split in sorted({r["split"] for r in rows}):
        lines += [
            "",
            f"{split} half:",
            *summary([r for r in rows if r["split"] == split], SAME_CONTENT_COST),
        ]
    result: dict[str, Any] = {"rows": rows}
    if args.vstyle:
        root = Path(__file__).resolve().parents[2] / "shared" / "real_replies" / "vstyle"
        pairs = vstyle_costs(root)
        costs = np.array([p["cost"] for p in pairs])
        under = sorted((p for p in pairs if p["cost"] < SAME_CONTENT_COST), key=lambda p: p["cost"])
        lines += [
            "",
            f"VStyle: {len(pairs)} pairs of replies by one model in one language (other "
            f"instructions); cost min {costs.min():.2f}, 1st percentile "
            f"{np.percentile(costs, 1):.2f}, median {np.median(costs):.2f}; taken as the same "
            f"words: {len(under)}",
        ]
        lines += [
            f"  {p['cost']:.2f} {p['model']} {p['lang']}: aligned {p['aligned_pct']:+.1f}% vs "
            f"text counts {p.get('text_count_pct', math.nan):+.1f}%: {p['texts'][0][:40]!r} | "
            f"{p['texts'][1][:40]!r}"
            for p in under
        ]
        result["vstyle"] = pairs
    print("\n".join(lines))
    if args.json:
        args.json.write_text(json.dumps(result, indent=1, ensure_ascii=False, default=str) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
