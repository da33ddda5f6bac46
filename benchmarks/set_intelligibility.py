"""The intelligibility check's numbers on a built set: per-voice WER / syllable error rate / CER
and DNSMOS OVRL, and the distribution of the per-turn error rate (to choose the check's bound).

    .venv/bin/python benchmarks/set_intelligibility.py SET_DIR [--langs en] [--json out.json]
    .venv/bin/python benchmarks/set_intelligibility.py --real ../shared/real_speech  # DNSMOS of real clips

Uses the set's ``intelligibility.jsonl`` when it has one (written by ``build-dialogues``);
otherwise transcribes every user turn now (Whisper base, DNSMOS), e.g. for a set built with
``--no-asr-check`` or by an older builder.
"""

from __future__ import annotations

import argparse
import json
import math
import time
from pathlib import Path

import numpy as np

from stylebench.dialogues.intelligibility import (
    MAX_ERROR,
    Checker,
    TurnCheck,
    check_set,
    per_voice,
)


def load_or_check(root: Path, langs: tuple[str, ...]) -> tuple[list[TurnCheck], float | None]:
    done = root / "intelligibility.jsonl"
    if done.is_file():
        rows = [json.loads(line) for line in done.read_text().splitlines() if line.strip()]
        checks = [TurnCheck(**{"cer": None, "ovrl": None, **r}) for r in rows if r["lang"] in langs]
        return checks, None
    t0 = time.perf_counter()
    from stylebench.dialogues.sets import load_set

    checks = check_set(root, load_set(root)[0], Checker(), langs)
    return checks, time.perf_counter() - t0


def quantiles(xs: list[float]) -> str:
    q = np.quantile(xs, [0.5, 0.9, 0.95, 0.99])
    return (
        f"n {len(xs)}, mean {np.mean(xs):.3f}, median {q[0]:.3f}, p90 {q[1]:.3f}, "
        f"p95 {q[2]:.3f}, p99 {q[3]:.3f}, max {max(xs):.3f}, "
        f"zero {sum(x == 0 for x in xs)}, > 0.2 {sum(x > 0.2 for x in xs)}, "
        f"> 0.5 {sum(x > 0.5 for x in xs)}"
    )


def real_speech(folder: Path, langs: tuple[str, ...]) -> None:
    """DNSMOS OVRL of each real clip (benchmarks/corpus/manifest.json lists them)."""
    from stylebench.audio import load_audio
    from stylebench.metrics.quality import dnsmos

    for lang in langs:
        scores = {}
        for f in sorted(folder.glob(f"{lang}_*.flac")):
            wave, sr = load_audio(f)
            scores[f.stem] = round(dnsmos(wave, sr).ovrl, 2)
        if scores:
            vals = list(scores.values())
            print(
                f"real {lang} DNSMOS OVRL: {scores}; mean {np.mean(vals):.2f} "
                f"({min(vals):.2f}-{max(vals):.2f})"
            )


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("set_dir", type=Path, nargs="?")
    ap.add_argument("--real", type=Path, help="also: DNSMOS OVRL of the real-speech clips here")
    ap.add_argument("--langs", default="en,zh")
    ap.add_argument("--json", type=Path)
    ap.add_argument("--worst", type=int, default=5, help="list the N worst turns per language")
    a = ap.parse_args()
    langs = tuple(a.langs.split(","))
    if a.real:
        real_speech(a.real, langs)
    if a.set_dir is None:
        return
    checks, took = load_or_check(a.set_dir, langs)
    print(
        f"set {a.set_dir.name}: {len(checks)} user turns"
        + (f", checked in {took:.0f} s" if took else "")
    )
    print("| voice | lang | turns | measure | mean | median | max | CER (zh) | DNSMOS OVRL |")
    print("|---|---|---|---|---|---|---|---|---|")
    pv = per_voice(checks, MAX_ERROR)
    for v, r in pv.items():
        cer = "-" if r["cer_mean"] is None else f"{r['cer_mean']:.3f}"
        ovrl = "-" if r["dnsmos_ovrl_mean"] is None else f"{r['dnsmos_ovrl_mean']:.2f}"
        print(
            f"| {v} | {r['lang']} | {r['n_turns']} | {r['measure']} | {r['mean']:.3f} "
            f"| {r['median']:.3f} | {r['max']:.3f} | {cer} | {ovrl} |"
        )
    for lang in langs:
        ers = [c.error_rate for c in checks if c.lang == lang and not math.isnan(c.error_rate)]
        if not ers:
            continue
        print(f"{lang} per-turn error rate: {quantiles(ers)}")
        ov = [c.ovrl for c in checks if c.lang == lang and c.ovrl is not None]
        if ov:
            print(f"{lang} DNSMOS OVRL: mean {np.mean(ov):.3f}, min {min(ov):.2f}")
        for c in sorted((c for c in checks if c.lang == lang), key=lambda c: -c.error_rate)[
            : a.worst
        ]:
            print(
                f"  {c.error_rate:.3f} {c.sample_id} t{c.turn} {c.voice}: {c.text!r} -> {c.transcript!r}"
            )
    if a.json:
        a.json.write_text(json.dumps({"per_voice": pv, "checked_s": took}, indent=2))


if __name__ == "__main__":
    main()
