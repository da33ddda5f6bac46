"""Do ``benchmarks/real_speech.py``'s verdicts depend on the CPU code path the ASR ran on?

Reads the ``--json`` results of several runs (one per ``CT2_FORCE_CPU_ISA``, each with its own
cache) and lists, for every copy of every single-speaker clip, the verdicts that differ between
them: scored or unscored per dimension, the copy's own change detected or not, and leaks into
another dimension. Transcripts may differ between code paths (CTranslate2 picks kernels per ISA:
docs/metrics.md, "Machine independence"); the verdicts should not. It also sets the ASR-path
table (syllable counts against the reference texts) and the different-words speed test of each
run side by side.

    .venv/bin/python benchmarks/real_speech_isa.py GENERIC=g.json AVX2=a.json AVX512=x.json
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from real_speech_report import _row

DIMS = ("pitch", "volume", "speed")


def verdicts(result: dict[str, Any]) -> dict[tuple[str, str], dict[str, Any]]:
    """Per (clip, copy) of the single-speaker clips: what the run decided."""
    from real_speech_transforms import Change

    from stylebench.scoring.cells import Thresholds

    thr = Thresholds()
    todo = [Change(**{k: v for k, v in c.items() if k != "direction"}) for c in result["changes"]]
    out = {}
    for clip in result["clips"]:
        if "multi_speaker" in clip.get("traits", []):
            continue
        for ch in todo:
            r = _row(clip, ch, DIMS, thr)
            pair = clip["pairs"][ch.name]
            scored = {d: not isinstance(pair.get("change", {}).get(d, "x"), str) for d in DIMS}
            out[(clip["id"], ch.name)] = {
                "scored": scored,
                "detected": r["detected"],
                "leaks": sorted(x.split()[0] for x in r["leaks"]),
            }
    return out


def compare(runs: dict[str, dict[str, Any]]) -> list[str]:
    """The report lines: verdicts that differ, then the ASR path and different-words tables."""
    names = list(runs)
    per = {n: verdicts(r) for n, r in runs.items()}
    keys = sorted(set().union(*(set(v) for v in per.values())))
    out = [f"verdicts of {len(keys)} copies of single-speaker clips under {', '.join(names)}:"]
    differ = []
    for key in keys:
        seen = {n: per[n].get(key) for n in names}
        if len({json.dumps(v, sort_keys=True) for v in seen.values()}) > 1:
            differ.append((key, seen))
    out.append(f"  verdicts that differ between the runs: {len(differ)}")
    for (cid, copy), seen in differ:
        out.append(f"    {cid} {copy}: " + "; ".join(f"{n} {v}" for n, v in seen.items()))
    out += ["", "ASR path: transcript syllables of each clip's original (error vs reference)"]
    asr = {n: r.get("asr_path", {}) for n, r in runs.items()}
    clips = sorted(set().union(*(set(a) for a in asr.values())))
    n_count_differ = 0
    for cid in clips:
        cells = []
        counts = set()
        for n in names:
            row = asr[n].get(cid)
            if row is None:
                cells.append(f"{n} -")
                continue
            o = row["versions"].get("orig", {})
            counts |= {v["syllables"] for v in row["versions"].values()} if n == names[0] else set()
            cells.append(
                f"{n} {o.get('syllables', '?')} ({o.get('error_pct', float('nan')):+.1f}%)"
            )
        ref = next((asr[n][cid]["reference_syllables"] for n in names if cid in asr[n]), "?")
        per_version = {
            v: {asr[n][cid]["versions"].get(v, {}).get("syllables") for n in names if cid in asr[n]}
            for v in next(iter(asr[n][cid] for n in names if cid in asr[n]))["versions"]
        }
        moved = [v for v, s in per_version.items() if len(s) > 1]
        n_count_differ += len(moved)
        out.append(
            f"  {cid:18} ref {ref:>3} | "
            + " | ".join(cells)
            + (f" | count differs between runs on {len(moved)} versions" if moved else "")
        )
    out.append(f"  versions whose syllable count differs between the runs: {n_count_differ}")
    out += ["", "different-words speed test per run:"]
    for n, r in runs.items():
        w = (r.get("different_words") or {}).get("summary")
        if not w:
            out.append(f"  {n}: not run")
            continue
        out.append(
            f"  {n}: {w['n_scored']}/{w['n']} scored; detected {w['n_detected']}/"
            f"{w['n_true_valid']}; false changes {w['n_false_change']}/{w['n_true_small']}; "
            f"|error| median {w['abs_error_median']:.2f} max {w['abs_error_max']:.2f}; bias "
            f"{w['bias_pct']:+.2f} points"
        )
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("runs", nargs="+", help="NAME=result.json (real_speech.py --json), one per ISA")
    args = ap.parse_args(argv)
    runs = {}
    for spec in args.runs:
        name, _, path = spec.partition("=")
        if not path:
            print(f"real_speech_isa: {spec!r}: give NAME=path.json", file=sys.stderr)
            return 2
        try:
            runs[name] = json.loads(Path(path).read_text(encoding="utf-8"))
        except (OSError, ValueError) as exc:
            print(f"real_speech_isa: {path}: {exc}", file=sys.stderr)
            return 2
    print("\n".join(compare(runs)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
