"""The transcript route of the speed score, measured against the texts the corpus' sources publish
(``benchmarks/corpus/manifest.json``, ``reference``; for ``benchmarks/real_speech.py``).

Turns that say the same words share one syllable count, so their speed change is the ratio of
their speech spans and no transcript enters it (``metrics/dims/speed.py``). Turns that say other
words, as a real model's rephrased replies do, are counted from their own transcripts: this module
measures that route.

- **ASR path**: per clip with a reference text (``reference.counts`` ``human`` or ``model_output``)
  and per version of it (the original and its copies), the transcript's syllable count against
  the reference's (:func:`stylebench.metrics.rate.count_syllables` on both).
- **Different-words speed test**: two-turn samples of two different clips of one language and one
  half of the corpus (turn 1 = clip A's original, turn 2 = clip B's original or a tempo copy of
  it), scored exactly as a run scores them (``finish_sample``, the speed dimension's
  ``turn_values``). The true change is the reference counts' rate ratio over the same speech
  spans: ``(ref_B / span_B) / (ref_A / span_A)``. A pair is *detected* when the measurement would
  call the true change valid (the true change's sign, at least the threshold) and the truth does
  too; it is a *false change* when the measurement calls it valid and the truth does not.
"""

from __future__ import annotations

import copy
import itertools
import math
from pathlib import Path
from typing import Any

import numpy as np

#: reference kinds whose syllable count may stand as the truth
COUNTABLE = ("human", "model_output")
#: the versions of clip B a different-words sample takes
B_VERSIONS = ("orig", "tempo_x0.8", "tempo_x1.25")


def reference_syllables(clip: dict[str, Any]) -> int | None:
    """The reference text's syllable count, or None when the clip has no countable reference."""
    from stylebench.metrics.rate import count_syllables

    ref = clip.get("reference") or {}
    if ref.get("counts") not in COUNTABLE or not ref.get("text"):
        return None
    return count_syllables(ref["text"], clip["lang"])


def asr_path(results: list[dict[str, Any]], clips: dict[str, dict[str, Any]]) -> dict[str, Any]:
    """Per clip with a countable reference: the reference's syllables and, per version, the
    transcript's count and its error in percent of the reference."""
    from stylebench.metrics.rate import count_syllables

    rows = {}
    for r in results:
        ref = reference_syllables(clips[r["id"]])
        if ref is None:
            continue
        per = {}
        for version, d in r["diagnostics"].items():
            text = d.get("asr_text")
            if text is None:
                continue
            n = count_syllables(text, r["lang"])
            per[version] = {"syllables": n, "error_pct": 100.0 * (n - ref) / ref}
        errs = [abs(v["error_pct"]) for v in per.values()]
        rows[r["id"]] = {
            "lang": r["lang"],
            "split": r["split"],
            "multi_speaker": "multi_speaker" in r.get("traits", []),
            "reference_syllables": ref,
            "kind": clips[r["id"]]["reference"]["counts"],
            "versions": per,
            "max_abs_error_pct": max(errs) if errs else math.nan,
        }
    return rows


def _analysed(clip: dict[str, Any], version: str, path: Path, cache: Path) -> dict[str, Any]:
    from asr_cache import cached_transcript

    from stylebench.audio import load_audio
    from stylebench.records import TranscriptRecord
    from stylebench.stages.measure import ANALYSIS_SR, FeatureConfig, analyse_reply

    wave, sr = load_audio(path, target_sr=ANALYSIS_SR)
    key, d = cached_transcript(wave, sr, clip["lang"], cache)
    return {
        "part": analyse_reply(wave, sr, FeatureConfig()),
        "transcript": TranscriptRecord("bench", 1, "ok", key[:16], **d),
    }


def different_words(
    clips: list[dict[str, Any]], todo: list[Any], cache: Path, threshold: float | None = None
) -> dict[str, Any]:
    """The different-words speed test over every ordered pair of single-speaker clips with a
    countable reference, one language and one half of the corpus at a time."""
    from real_speech_transforms import make_versions

    from stylebench.metrics.dims.base import ScoreContext, dimension, plain
    from stylebench.records import FeatureRecord
    from stylebench.scoring.cells import Thresholds, is_valid
    from stylebench.stages.measure import finish_sample

    thr = Thresholds() if threshold is None else Thresholds(speed_pct=threshold)
    usable = [
        c
        for c in clips
        if reference_syllables(c) is not None and "multi_speaker" not in c["speaker_traits"]
    ]
    tempo = [ch for ch in todo if ch.dim == "speed"]
    files: dict[tuple[str, str], dict[str, Any]] = {}
    for c in usable:
        paths, _ = make_versions(c, tempo, cache)
        for v in B_VERSIONS:
            if v in paths:
                files[(c["id"], v)] = _analysed(c, v, paths[v], cache)
    rows = []
    speed = dimension("speed")
    for a, b in itertools.permutations(usable, 2):
        if a["lang"] != b["lang"] or a.get("split") != b.get("split"):
            continue
        for v in B_VERSIONS:
            fa, fb = files.get((a["id"], "orig")), files.get((b["id"], v))
            if fa is None or fb is None:
                continue
            parts = copy.deepcopy({1: fa["part"], 2: fb["part"]})
            done = finish_sample(parts, {1: fa["transcript"], 2: fb["transcript"]}, a["lang"])
            row: dict[str, Any] = {"a": a["id"], "b": b["id"], "b_version": v, "lang": a["lang"]}
            row["split"] = a.get("split", "")
            if any(isinstance(x, str) for x in done.values()):
                row["error"] = "; ".join(str(x) for x in done.values() if isinstance(x, str))
                rows.append(row)
                continue
            feats = {
                k: FeatureRecord("bench", k, "ok", "bench", values=x[0], flags=x[1])
                for k, x in done.items()
                if not isinstance(x, str)
            }
            spans = [feats[k].values.get("span_s", math.nan) for k in (1, 2)]
            refs = [reference_syllables(a), reference_syllables(b)]
            row["true_pct"] = 100.0 * ((refs[1] / spans[1]) / (refs[0] / spans[0]) - 1.0)
            row["dtw_cost"] = feats[2].values.get("dtw_cost_prev")
            row["syllables"] = [feats[k].values.get("syllables") for k in (1, 2)]
            vals, _ = speed.turn_values(None, feats, ScoreContext())
            va, vb = plain(vals.get(1)), plain(vals.get(2))
            direction = "intensify" if row["true_pct"] > 0 else "attenuate"
            row["true_valid"] = abs(row["true_pct"]) >= thr.speed_pct
            if isinstance(va, float) and isinstance(vb, float):
                row["same_words"] = speed_shared(vals)
                row["measured_pct"] = speed.change(va, vb)
                row["measured_valid"] = is_valid("speed", direction, va, vb, thr)
            else:
                row["unscored"] = next(str(x) for x in (va, vb) if not isinstance(x, float))
            rows.append(row)
    return {"rows": rows, "summary": summarise_words(rows, thr.speed_pct)}


def speed_shared(vals: dict[int, Any]) -> bool:
    """True when the two turns were measured as saying the same words (one shared count)."""
    from stylebench.metrics.dims.base import Shared

    v = vals.get(2)
    return isinstance(v, Shared) and 1 in v.turns


def summarise_words(rows: list[dict[str, Any]], threshold: float) -> dict[str, Any]:
    """Scored share, unscored reasons, error against the truth, detection and false changes."""
    scored = [r for r in rows if "measured_pct" in r]
    err = [r["measured_pct"] - r["true_pct"] for r in scored]
    true_valid = [r for r in scored if r["true_valid"]]
    not_valid = [r for r in scored if not r["true_valid"]]
    reasons: dict[str, int] = {}
    for r in rows:
        if "unscored" in r or "error" in r:
            why = r.get("unscored") or r.get("error", "")
            reasons[why] = reasons.get(why, 0) + 1
    return {
        "n": len(rows),
        "n_scored": len(scored),
        "n_same_words": sum(bool(r.get("same_words")) for r in scored),
        "unscored": reasons,
        "threshold": threshold,
        "bias_pct": float(np.mean(err)) if err else math.nan,
        "abs_error_median": float(np.median(np.abs(err))) if err else math.nan,
        "abs_error_p90": float(np.percentile(np.abs(err), 90)) if err else math.nan,
        "abs_error_max": float(np.max(np.abs(err))) if err else math.nan,
        "n_true_valid": len(true_valid),
        "n_detected": sum(r["measured_valid"] for r in true_valid),
        "n_true_small": len(not_valid),
        "n_false_change": sum(r["measured_valid"] for r in not_valid),
    }


def render_lines(asr: dict[str, Any], words: dict[str, Any] | None) -> list[str]:
    """The two tables as printed lines."""
    out = [
        "",
        "ASR path: transcript syllables against the reference text (per version: orig and copies)",
    ]
    for cid, r in sorted(asr.items(), key=lambda kv: (kv[1]["split"], kv[0])):
        vs = r["versions"]
        orig = vs.get("orig", {})
        errs = [v["error_pct"] for v in vs.values()]
        out.append(
            f"  {cid:18} {r['split']:7} ref {r['reference_syllables']:3d} ({r['kind']}) | orig "
            f"{orig.get('syllables', '?')!s:>3} ({orig.get('error_pct', math.nan):+5.1f}%) | "
            f"copies {min(errs):+5.1f}..{max(errs):+5.1f}%"
            + ("  [multi-speaker]" if r["multi_speaker"] else "")
        )
    if words is None:
        return out
    s = words["summary"]
    out += [
        "",
        "different-words speed test (turn 1 = clip A, turn 2 = clip B or its tempo copy; truth "
        "from the reference counts over the same spans):",
        f"  {s['n_scored']}/{s['n']} pairs scored ({s['n_same_words']} of them taken as the same "
        f"words); |measured - true| median {s['abs_error_median']:.2f}, 90th percentile "
        f"{s['abs_error_p90']:.2f}, max {s['abs_error_max']:.2f} points; bias "
        f"{s['bias_pct']:+.2f} points",
        f"  detected {s['n_detected']}/{s['n_true_valid']} true changes of {s['threshold']:g}% or "
        f"more; false changes {s['n_false_change']}/{s['n_true_small']} where the truth is under "
        f"{s['threshold']:g}%",
        "  unscored: "
        + ("; ".join(f"{k} x{n}" for k, n in sorted(s["unscored"].items())) or "none"),
    ]
    by_split: dict[str, list[dict[str, Any]]] = {}
    for r in words["rows"]:
        by_split.setdefault(r["split"], []).append(r)
    for split, rows in sorted(by_split.items()):
        sub = summarise_words(rows, s["threshold"])
        out.append(
            f"  {split}: {sub['n_scored']}/{sub['n']} scored, detected {sub['n_detected']}/"
            f"{sub['n_true_valid']}, false {sub['n_false_change']}/{sub['n_true_small']}, "
            f"|error| median {sub['abs_error_median']:.2f} max {sub['abs_error_max']:.2f}, bias "
            f"{sub['bias_pct']:+.2f}"
        )
    return out
