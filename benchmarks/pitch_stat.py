"""Which pitch statistic follows a real voice: the plain mean F0 over the three-tracker vote's
frames (``f0_mean_agreed``, the paper's "mean F0 over voiced frames") or their amplitude-weighted
mean (``f0_mean_weighted``)? And what does the F0 search range cost or buy (``--f0-ceil``)?

Every file is measured as a run measures a reply (decoded to 16 kHz by stylebench's loader,
``analyse_reply``, ``finish_sample`` as a one-turn sample without a transcript, each statistic
read through the pitch dimension's blocking flags), and beside it by an independent reference:
Praat alone (parselmouth ``to_pitch``), in two passes with the speaker's own range (De Looze &
Hirst: a first pass at 50-1100 Hz, then floor = 0.72 x its 35th percentile and ceiling = 1.9 x
its 65th), whose plain mean and median over its voiced frames are the reference pitch. Three
sets of changes (``--parts corpus`` the first two, ``vstyle`` the third):

- **invariance**: every corpus clip against its tempo (x0.8, x1.25) and gain (+-4 dB) copies
  (``real_speech_transforms``): the change should be 0. Per corpus half, the multi-speaker clips
  (``speaker_traits``) in their own group: they are outside the target (a reply is one voice).
- **corpus pairs**: every clip against its +-2 st copies (resampled, formant-preserving), where
  the change is known, and the first half of every clip against its second half (cut at the
  quietest 100 ms between 35% and 65% of its length): one voice, other words, a change only
  Praat's reference knows.
- **VStyle pairs**: every pair of real replies by one model in one language (``--replies``,
  default ``$STYLEBENCH_REAL_REPLIES``), and the 42 opposite-instruction pairs of ``pairs.json``.

Per statistic and reference: how many pairs are scored, the median |change - reference change|,
how many are off by 0.5 st and by 1 st or more, and the bias: the mean of (change - reference
change) with each pair ordered so that the reference change is >= 0 (positive: the statistic
exaggerates changes). Range diagnostics per group: f0_octave_share, f0_agreement, the flags, and
how close the reply's F0 comes to the ceiling. Results are cached per file (``--cache``).

    STYLEBENCH_REAL_SPEECH=../shared/real_speech .venv/bin/python benchmarks/pitch_stat.py \
        [--parts corpus,vstyle] [--f0-ceil 800] [--jobs 1] [--json out.json] [--limit N]
    .venv/bin/python benchmarks/pitch_stat.py --real-speech-json RESULT.json
"""

from __future__ import annotations

import argparse
import hashlib
import itertools
import json
import math
import sys
import time
from collections.abc import Callable, Iterable
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path
from typing import Any

import numpy as np
from real_speech_transforms import changes, has_rubberband, load_manifest, make_versions

#: label -> the feature that is that statistic's score (``--pitch-stat`` names in brackets)
STATS = {
    "plain mean (agreed_mean)": "f0_mean_agreed",
    "weighted (weighted_mean)": "f0_mean_weighted",
}
#: the reference's first pass and its speaker-range rule (De Looze & Hirst 2008)
REF_PASS1 = (50.0, 1100.0)
REF_LO_Q, REF_LO_K, REF_HI_Q, REF_HI_K = 35, 0.72, 65, 1.9
REFS = ("praat_mean", "praat_median")
#: bump when what a cached file result holds changes
VERSION = "2"
SR = 16000


def praat_reference(wave: np.ndarray, sr: int) -> dict[str, float]:
    """Praat alone, two passes (the module text): mean and median F0 of its voiced frames, and
    the range it chose. NaN where it finds fewer than 3 voiced frames."""
    import parselmouth

    sound = parselmouth.Sound(np.asarray(wave, dtype=np.float64), sampling_frequency=float(sr))

    def voiced(lo: float, hi: float) -> np.ndarray:
        p = sound.to_pitch(time_step=0.01, pitch_floor=lo, pitch_ceiling=hi)
        f = np.asarray(p.selected_array["frequency"], dtype=np.float64)
        return f[np.isfinite(f) & (f > 0)]

    nan = {"praat_mean": math.nan, "praat_median": math.nan, "praat_lo": math.nan}
    first = voiced(*REF_PASS1)
    if first.size < 3:
        return {**nan, "praat_hi": math.nan}
    lo = max(30.0, REF_LO_K * float(np.percentile(first, REF_LO_Q)))
    hi = REF_HI_K * float(np.percentile(first, REF_HI_Q))
    f = voiced(lo, hi)
    if f.size < 3:
        return {**nan, "praat_hi": hi}
    return {
        "praat_mean": float(f.mean()),
        "praat_median": float(np.median(f)),
        "praat_lo": lo,
        "praat_hi": hi,
    }


def measure_wave(wave: np.ndarray, sr: int, lang: str, f0_ceil: float) -> dict[str, Any]:
    """One file as a run measures a one-turn sample: each statistic (a value in Hz, or why the
    pitch dimension leaves it unscored), the range diagnostics and the Praat reference."""
    from stylebench.metrics.dims.base import value_or_reason
    from stylebench.metrics.dims.pitch import Pitch
    from stylebench.stages.measure import FeatureConfig, analyse_reply, finish_sample

    out: dict[str, Any] = {"ref": praat_reference(wave, sr)}
    try:
        part = analyse_reply(wave, sr, FeatureConfig(f0_ceil=f0_ceil))
    except ValueError as exc:
        return {**out, "scores": {k: f"analyse_reply: {exc}" for k in STATS}, "diag": {}}
    res = finish_sample({1: part}, {}, lang)[1]
    if isinstance(res, str):
        return {**out, "scores": dict.fromkeys(STATS, res), "diag": {}}
    values, flags = res
    out["scores"] = {k: value_or_reason(values, flags, f, Pitch.blocking) for k, f in STATS.items()}
    from stylebench.metrics.pitch import ceiling_share

    voted = _voted(part)
    near = voted[voted > 0]
    diag = {k: values[k] for k in ("f0_octave_share", "f0_agreement") if k in values}
    diag["flags"] = sorted({f.split(":")[0] for f in flags})
    if near.size:
        diag["p95_hz"] = float(np.percentile(near, 95))
        diag["max_hz"] = float(near.max())
        diag["median_hz"] = float(np.median(near))
        for st in (1, 2, 3, 4):
            diag[f"share_within_{st}st"] = ceiling_share(near, f0_ceil, st)
    out["diag"] = diag
    return out


def _voted(part: dict[str, Any]) -> np.ndarray:
    """The pitch score's frames (:attr:`ReplyFrames.scored_f0`) of an ``analyse_reply`` result."""
    from stylebench.metrics.dims.base import ReplyFrames

    tracks = (part["track"], part["praat_track"], part["swift_track"])
    return ReplyFrames(part["wave"], part["sr"], tracks, part["level_track"]).scored_f0


def cached(wave: np.ndarray, lang: str, f0_ceil: float, cache: Path) -> dict[str, Any]:
    """:func:`measure_wave` of a 16 kHz wave, from ``cache`` when this version measured it
    (keyed by the features' settings and spec versions; a flag's threshold is not part of the
    key, so a cached result's flags are those of the thresholds it was measured with)."""
    from dataclasses import asdict

    from stylebench.metrics.spec import feature_specs
    from stylebench.stages.measure import FeatureConfig

    x = np.ascontiguousarray(wave, dtype=np.float32)
    cfg = asdict(FeatureConfig(f0_ceil=f0_ceil))
    specs = sorted((s.name, s.version) for s in feature_specs())
    tag = json.dumps([VERSION, lang, cfg, specs])
    key = hashlib.sha256(x.tobytes() + tag.encode()).hexdigest()[:32]
    path = cache / "pitch_stat" / f"{key}.json"
    if path.is_file():
        return json.loads(path.read_text(encoding="utf-8"))
    res = measure_wave(x, SR, lang, f0_ceil)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(res), encoding="utf-8")
    return res


def _load(path: Path | str) -> np.ndarray:
    from stylebench.audio import load_audio

    wave, _ = load_audio(path, target_sr=SR)
    return np.asarray(wave, dtype=np.float32)


def halves(wave: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``wave`` cut at the quietest 100 ms window centred between 35% and 65% of its length."""
    win = int(0.1 * SR)
    power = np.convolve(np.square(wave.astype(np.float64)), np.ones(win) / win, mode="same")
    lo, hi = int(0.35 * wave.size), int(0.65 * wave.size)
    cut = lo + int(np.argmin(power[lo:hi]))
    return wave[:cut], wave[cut:]


def corpus_clip(clip: dict[str, Any], cache: Path, f0_ceil: float) -> dict[str, Any]:
    """The clip, its eight copies and its two halves, measured. Runs in a worker."""
    todo = changes("rubberband" if has_rubberband() else "world")
    paths, _ = make_versions(clip, todo, cache)
    files = {name: cached(_load(p), clip["lang"], f0_ceil, cache) for name, p in paths.items()}
    first, second = halves(_load(paths["orig"]))
    files["half1"] = cached(first, clip["lang"], f0_ceil, cache)
    files["half2"] = cached(second, clip["lang"], f0_ceil, cache)
    return {
        "id": clip["id"],
        "split": clip.get("split", ""),
        "multi": "multi_speaker" in clip.get("speaker_traits", []),
        "low_male": "low_male" in clip.get("speaker_traits", []),
        "applied": {c.name: c.applied for c in todo},
        "dims": {c.name: c.dim for c in todo},
        "files": files,
    }


def vstyle_reply(entry: dict[str, Any], cache: Path, f0_ceil: float) -> dict[str, Any]:
    """One VStyle reply, measured. Runs in a worker."""
    return {**entry, "res": cached(_load(entry["path"]), entry["lang"], f0_ceil, cache)}


# --- pairs and summaries ---------------------------------------------------------------------


def change(a: Any, b: Any) -> float:
    """12 log2(b / a), NaN when either is not a positive number (unscored)."""
    ok = all(isinstance(v, float) and v > 0 and math.isfinite(v) for v in (a, b))
    return 12.0 * math.log2(b / a) if ok else math.nan


def pair_row(a: dict[str, Any], b: dict[str, Any], known: float | None = None) -> dict[str, float]:
    """Each statistic's change and each reference's change from file ``a`` to file ``b``."""
    row = {s: change(a["scores"][s], b["scores"][s]) for s in STATS}
    row.update({r: change(a["ref"][r], b["ref"][r]) for r in REFS})
    if known is not None:
        row["known"] = known
    return row


def agreement(rows: list[dict[str, float]], stat: str, ref: str) -> dict[str, float]:
    """n, median |d|, n |d| >= 0.5 and >= 1, and the bias (mean of d, each pair oriented so the
    reference's change is >= 0), d = the statistic's change - the reference's."""
    d = [
        (r[stat] - r[ref]) * (1.0 if r[ref] >= 0 else -1.0)
        for r in rows
        if math.isfinite(r[stat]) and math.isfinite(r[ref])
    ]
    a = np.abs(d)
    return {
        "n": len(d),
        "median_abs": float(np.median(a)) if d else math.nan,
        "n_ge_0.5": int(np.sum(a >= 0.5)),
        "n_ge_1": int(np.sum(a >= 1.0)),
        "bias": float(np.mean(d)) if d else math.nan,
    }


def agreement_table(title: str, rows: list[dict[str, float]], refs: Iterable[str]) -> list[str]:
    out = [f"{title} ({len(rows)} pairs)"]
    out.append(
        f"  {'statistic':28s} {'reference':13s} {'n':>4s} {'med|d|':>7s} {'>=0.5':>6s} {'>=1':>4s} {'bias':>6s}"
    )
    for ref in refs:
        for s in STATS:
            g = agreement(rows, s, ref)
            out.append(
                f"  {s:28s} {ref:13s} {g['n']:4d} {g['median_abs']:7.2f} {g['n_ge_0.5']:6d} "
                f"{g['n_ge_1']:4d} {g['bias']:+6.2f}"
            )
    return out


def corpus_groups(
    clips: list[dict[str, Any]], multi: Callable[[dict[str, Any]], bool]
) -> dict[str, list[dict[str, Any]]]:
    """The corpus in the three groups every table here reports apart: each half's
    single-speaker clips, and the clips of several speakers (out of the target)."""
    return {
        "tuning half, single speaker": [c for c in clips if c["split"] == "tune" and not multi(c)],
        "held-out half, single speaker": [
            c for c in clips if c["split"] == "heldout" and not multi(c)
        ],
        "multi-speaker clips (out of the target)": [c for c in clips if multi(c)],
    }


def invariance(clips: list[dict[str, Any]]) -> tuple[list[str], dict[str, Any]]:
    """Per group (:func:`corpus_groups`): per statistic the worst |change| under tempo and gain,
    how many copies move 0.3 st or more, the median |change|."""
    groups = corpus_groups(clips, lambda c: c["multi"])
    out, data = ["invariance: |pitch change| under tempo x0.8/x1.25 and gain +-4 dB"], {}
    for gname, group in groups.items():
        out.append(f"  {gname} ({len(group)} clips)")
        data[gname] = {}
        for s in STATS:
            vals, worst_at, unscored = [], "", 0
            for c in group:
                for name, dim in c["dims"].items():
                    if dim == "pitch":
                        continue
                    v = change(c["files"]["orig"]["scores"][s], c["files"][name]["scores"][s])
                    if math.isnan(v):
                        unscored += 1
                        continue
                    if not vals or abs(v) > max(vals):
                        worst_at = f"{c['id']} {name} {v:+.2f}"
                    vals.append(abs(v))
            a = np.asarray(vals)
            stats = {
                "n": int(a.size),
                "unscored": unscored,
                "worst": float(a.max()) if a.size else math.nan,
                "n_ge_0.3": int(np.sum(a >= 0.3)),
                "median": float(np.median(a)) if a.size else math.nan,
                "worst_at": worst_at,
            }
            data[gname][s] = stats
            out.append(
                f"    {s:28s} n={stats['n']:3d} (unscored {unscored}) worst {stats['worst']:.2f} "
                f"({worst_at}), >=0.3: {stats['n_ge_0.3']}, median {stats['median']:.3f}"
            )
    return out, data


def diagnostics(title: str, files: list[dict[str, Any]]) -> tuple[list[str], dict[str, Any]]:
    """The F0 range's effect on a set of files: octave share, agreement, flags, nearness to the
    ceiling."""
    d = [f["diag"] for f in files if f.get("diag")]
    octave = np.array([x.get("f0_octave_share", math.nan) for x in d], dtype=float)
    agree = np.array([x.get("f0_agreement", math.nan) for x in d], dtype=float)
    flags: dict[str, int] = {}
    for x in d:
        for f in x.get("flags", []):
            flags[f] = flags.get(f, 0) + 1
    within = {
        st: np.array([x.get(f"share_within_{st}st", math.nan) for x in d], dtype=float)
        for st in (1, 2, 3, 4)
    }
    data = {
        "n": len(d),
        "octave_share_mean": float(np.nanmean(octave)) if d else math.nan,
        "octave_share_max": float(np.nanmax(octave)) if d else math.nan,
        "agreement_min": float(np.nanmin(agree)) if d else math.nan,
        "flags": flags,
        "max_share_within_st": {
            st: float(np.nanmax(v)) if d else math.nan for st, v in within.items()
        },
        "p95_hz_max": max((x.get("p95_hz", 0.0) for x in d), default=math.nan),
    }
    out = [
        f"  {title}: {data['n']} files; f0_octave_share mean {data['octave_share_mean']:.4f} "
        f"max {data['octave_share_max']:.3f}; f0_agreement min {data['agreement_min']:.3f}; "
        f"highest p95 {data['p95_hz_max']:.0f} Hz; largest share of scored frames within 1/2/3/4 "
        "st of the ceiling "
        + "/".join(f"{v:.3f}" for v in data["max_share_within_st"].values())
        + f"; flags {dict(sorted(flags.items()))}"
    ]
    return out, data


def summarise_corpus(clips: list[dict[str, Any]]) -> tuple[list[str], dict[str, Any]]:
    out, data = invariance(clips)
    single = [c for c in clips if not c["multi"]]
    for gname, group in corpus_groups(clips, lambda c: c["multi"]).items():
        shift = [
            pair_row(c["files"]["orig"], c["files"][n], c["applied"][n])
            for c in group
            for n, dim in c["dims"].items()
            if dim == "pitch"
        ]
        out += agreement_table(f"\n{gname}: +-2 st copies", shift, ("known", *REFS))
        split = [pair_row(c["files"]["half1"], c["files"]["half2"]) for c in group]
        out += agreement_table(f"{gname}: first half vs second half", split, REFS)
        data[f"shift {gname}"] = shift
        data[f"halves {gname}"] = split
    out.append("\nrange diagnostics (every version of every clip)")
    for gname, group in (
        ("all single-speaker clips", single),
        ("low male clips", [c for c in single if c["low_male"]]),
        ("multi-speaker clips", [c for c in clips if c["multi"]]),
    ):
        lines, d = diagnostics(gname, [f for c in group for f in c["files"].values()])
        out += lines
        data[f"diag {gname}"] = d
    return out, data


def summarise_vstyle(
    replies: list[dict[str, Any]], pairs: list[dict[str, Any]]
) -> tuple[list[str], dict[str, Any]]:
    by_file = {r["file"]: r["res"] for r in replies}
    groups: dict[tuple[str, str], list[dict[str, Any]]] = {}
    for r in replies:
        groups.setdefault((r["model"], r["lang"]), []).append(r)
    every = [
        pair_row(a["res"], b["res"])
        for g in groups.values()
        for a, b in itertools.combinations(g, 2)
    ]
    listed = [pair_row(by_file[p["attenuate_file"]], by_file[p["intensify_file"]]) for p in pairs]
    out = agreement_table("VStyle: every pair of replies by one model in one language", every, REFS)
    out += agreement_table("\nVStyle: the 42 opposite-instruction pairs (pairs.json)", listed, REFS)
    offsets = ["\nVStyle: score - Praat median per reply, st (median, 5th-95th percentile)"]
    for s in STATS:
        v = np.array(
            [change(r["res"]["ref"]["praat_median"], r["res"]["scores"][s]) for r in replies]
        )
        v = v[np.isfinite(v)]
        offsets.append(
            f"  {s:28s} n={v.size} median {np.median(v):+.2f} "
            f"({np.percentile(v, 5):+.2f} to {np.percentile(v, 95):+.2f})"
        )
    lines, diag = diagnostics("VStyle replies", [r["res"] for r in replies])
    return out + offsets + ["\nrange diagnostics"] + lines, {
        "every": every,
        "listed": listed,
        "diag": diag,
    }


def real_speech_groups(path: Path) -> list[str]:
    """The pitch lines of a ``real_speech.py --json`` result, per group: tuning and held-out
    single-speaker clips and the multi-speaker clips apart (``real_speech_report.summarise`` on
    each subset)."""
    from real_speech_report import summarise
    from real_speech_transforms import Change

    result = json.loads(path.read_text(encoding="utf-8"))
    todo = [
        Change(c["name"], c["dim"], c["applied"], c["shifter"], c["factor"])
        for c in result["changes"]
    ]
    groups = corpus_groups(result["clips"], lambda c: "multi_speaker" in c["traits"])
    out = [f"{path}: pitch per group ({result['formant_shifter']} shifter)"]
    for gname, sub in groups.items():
        s = summarise(sub, todo, result["asr"] is not None)
        out.append(f"  {gname} ({len(sub)} clips)")
        for name, g in s["groups"].items():
            bias = ", ".join(
                f"bias {k} {d['bias']:+.2f}"
                for k, d in g["by_direction"].items()
                if g["dim"] == "pitch"
            )
            out.append(
                f"    {name}: detected {g['n_detected']}/{g['n']}, leaks {g['n_leaks']}"
                + (f", {bias}" if bias else "")
            )
        tempo_leaks = len(s["tempo_without_asr"]["leaks"])
        d = s["pitch_drift"]
        clip, copy, moved = d["worst"]
        out.append(
            f"    tempo copies leaking into pitch or volume: {tempo_leaks}; |pitch change| under "
            f"tempo and gain: worst {d['max']:.2f} st ({clip} {copy} {moved:+.2f}), "
            f"{d['n_over']} of {d['n']} at 0.3 st or more"
        )
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--parts", default="corpus,vstyle", help="corpus, vstyle or both")
    ap.add_argument("--f0-ceil", type=float, default=None, help="F0 ceiling (default: the run's)")
    ap.add_argument("--jobs", type=int, default=1)
    ap.add_argument("--cache", type=Path, help="copies' and results' cache")
    ap.add_argument("--replies", type=Path, help="VStyle folder (default $STYLEBENCH_REAL_REPLIES)")
    ap.add_argument("--json", type=Path, help="write every pair and summary here")
    ap.add_argument("--limit", type=int, help="only the first N clips and replies (a quick look)")
    ap.add_argument(
        "--real-speech-json",
        type=Path,
        help="instead: the pitch lines of a real_speech.py --json result, per corpus half and "
        "with the multi-speaker clips apart",
    )
    args = ap.parse_args(argv)
    if args.real_speech_json:
        print("\n".join(real_speech_groups(args.real_speech_json)))
        return 0
    from stylebench.paths import cache_root
    from stylebench.stages.measure import FeatureConfig

    parts = set(args.parts.split(","))
    ceil = args.f0_ceil or FeatureConfig().f0_ceil
    cache = args.cache or cache_root() / "real_speech"
    result: dict[str, Any] = {"f0_ceil": ceil}
    t0 = time.perf_counter()
    lines = [f"pitch_stat: F0 ceiling {ceil:g} Hz; statistics {', '.join(STATS.values())}"]
    with ProcessPoolExecutor(max(1, args.jobs)) as pool:
        if "corpus" in parts:
            try:
                clips = load_manifest()[: args.limit]
            except FileNotFoundError as exc:
                print(f"pitch_stat: {exc}", file=sys.stderr)
                return 2
            done = list(pool.map(corpus_clip, clips, [cache] * len(clips), [ceil] * len(clips)))
            text, data = summarise_corpus(done)
            lines += ["", *text]
            result["corpus"] = {"clips": done, **data}
        if "vstyle" in parts:
            import real_replies_refs as refs

            try:
                folder = args.replies or refs.data_dir()
                entries, pairs = refs.load_inputs(folder)
            except FileNotFoundError as exc:
                print(f"pitch_stat: {exc}", file=sys.stderr)
                return 2
            todo = [{**e, "path": str(folder / e["file"])} for e in entries][: args.limit]
            names = {e["file"] for e in todo}
            pairs = [p for p in pairs if {p["attenuate_file"], p["intensify_file"]} <= names]
            done = list(pool.map(vstyle_reply, todo, [cache] * len(todo), [ceil] * len(todo)))
            text, data = summarise_vstyle(done, pairs)
            lines += ["", *text]
            result["vstyle"] = {"replies": done, **data}
    lines.append(f"\n{time.perf_counter() - t0:.0f} s")
    print("\n".join(lines))
    if args.json:
        args.json.write_text(json.dumps(result, default=str) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
