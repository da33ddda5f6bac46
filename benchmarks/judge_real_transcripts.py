"""The offline judge on a run's real transcripts: own content versus a shuffled emulation.

Reads a finished (or partial) run folder of a content-keeping model (``neutral`` or
``reference``): its ``transcribe.jsonl`` and the dialogue set named in ``manifest.json``. For every
sample with three transcripts it judges SRD and MRD as the judge stage does, and an emulated
``shuffled`` MRD: turn 1 of the sample with turns 2 and 3 taken from the transcripts of two
samples whose content differs. It also prints the distribution of MRD coverage (turn 2/3 against
turn 1) for the same sample and across samples, per language.

    python benchmarks/judge_real_transcripts.py runs/<neutral run>
"""

from __future__ import annotations

import argparse
import json
from collections import Counter, defaultdict
from pathlib import Path

import numpy as np

from stylebench.dialogues.sets import load_set
from stylebench.metrics.judges.base import JudgeRequest
from stylebench.metrics.judges.embed import EmbeddingJudge, coverage


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("run", type=Path, help="run folder with manifest.json and transcribe.jsonl")
    args = ap.parse_args(argv)
    manifest = json.loads((args.run / "manifest.json").read_text())
    samples = {s.id: s for s in load_set(manifest["dialogues"]["path"])[0]}
    text: dict[str, dict[int, str]] = defaultdict(dict)
    for line in (args.run / "transcribe.jsonl").read_text().splitlines():
        rec = json.loads(line) if line.strip() else {}
        if rec.get("status") == "ok":  # latest record per key wins, as in the run store
            text[rec["sample_id"]][rec["turn"]] = rec.get("text") or ""
    ids = sorted(k for k, v in text.items() if len(v) == 3 and k in samples)
    judge = EmbeddingJudge()
    counts: dict[tuple[str, str], Counter[str]] = defaultdict(Counter)
    for n, sid in enumerate(ids):
        s, t = samples[sid], text[sid]
        user = [turn.text for turn in s.turns]
        v = judge.judge(JudgeRequest("srd", s.lang, ((user[0], t[1]),)))
        counts[("srd", s.lang)][v.label] += 1
        v = judge.judge(
            JudgeRequest("mrd", s.lang, tuple(zip(user, (t[1], t[2], t[3]), strict=True)))
        )
        counts[("mrd own content", s.lang)][v.label] += 1
        others = [o for o in ids if samples[o].lang == s.lang and samples[o].content != s.content]
        if len(others) >= 2:
            a, b = others[n % len(others)], others[(n + 1) % len(others)]
            swapped = (t[1], text[a][2], text[b][3])
            v = judge.judge(JudgeRequest("mrd", s.lang, tuple(zip(user, swapped, strict=True))))
            counts[("mrd shuffled emulation", s.lang)][v.label] += 1
    print(f"{args.run}: {len(ids)} samples with three transcripts")
    for key in sorted(counts):
        print(
            f"  {key[0]:<24} {key[1]}  "
            + ", ".join(f"{k} {c}" for k, c in sorted(counts[key].items()))
        )
    for lang in ("en", "zh"):
        ks = [k for k in ids if samples[k].lang == lang and text[k][1]]
        same = [coverage(text[a][1], text[a][t]) for a in ks for t in (2, 3)]
        cross = [
            coverage(text[a][1], text[b][t])
            for a in ks
            for b in ks
            if samples[a].content != samples[b].content
            for t in (2, 3)
        ]
        if same and cross:
            print(
                f"  coverage {lang}: same sample min {min(same):.2f}, 10th pct {np.percentile(same, 10):.2f} (n={len(same)}); "
                f"other samples max {max(cross):.2f}, 99th pct {np.percentile(cross, 99):.2f} (n={len(cross)})"
            )


if __name__ == "__main__":
    main()
