"""The driver that ``pitch_rules.py`` and ``volume_rules.py`` share: clips in, one table out.

A rule benchmark measures every clip (the corpus, or VStyle replies with ``--corpus vstyle``)
in a worker, getting back ``(clip id, split, {copy: {rule: error}})``, and prints per rule the
worst |error| and how many copies reach ``limit``, for all clips and per corpus half.
"""

from __future__ import annotations

import argparse
import math
import sys
from collections.abc import Callable, Sequence
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path
from typing import Any

from real_speech_transforms import load_manifest, load_vstyle

Result = tuple[str, str, dict[str, dict[str, float]]]


def run(
    name: str,
    doc: str,
    measure_clip: Callable[[dict[str, Any], Path], Result],
    rule_names: Sequence[str],
    *,
    limit: float,
    unit: str,
    argv: list[str] | None = None,
) -> int:
    """Parse the shared options, measure every clip, print the table; the exit status."""
    ap = argparse.ArgumentParser(description=doc.split("\n\n")[0])
    ap.add_argument("--corpus", choices=("speech", "vstyle"), default="speech")
    ap.add_argument("--every", type=int, default=2, help="vstyle: keep every n-th reply")
    ap.add_argument("--jobs", type=int, default=1)
    ap.add_argument("--cache", type=Path, help="copies' cache (default $STYLEBENCH_CACHE/...)")
    ap.add_argument("--list", action="store_true", help=f"print every copy at {limit:g} {unit}+")
    args = ap.parse_args(argv)
    from stylebench.paths import cache_root

    cache = args.cache or cache_root() / "real_speech"
    try:
        clips = load_manifest() if args.corpus == "speech" else load_vstyle(every=args.every)
    except FileNotFoundError as exc:
        print(f"{name}: {exc}", file=sys.stderr)
        return 2
    with ProcessPoolExecutor(max(1, args.jobs)) as pool:
        results: list[Result] = list(pool.map(measure_clip, clips, [cache] * len(clips)))
    groups = {"all": results}
    for split in sorted({s for _, s, _ in results if s}):
        groups[f"{split} half"] = [r for r in results if r[1] == split]
    print(
        f"{args.corpus}: {len(results)} clips; per rule: worst |change| {unit} (copies >= {limit})"
    )
    for gname, rows in groups.items():
        print(f"  {gname} ({len(rows)} clips, {sum(len(o) for _, _, o in rows)} copies)")
        for rule in rule_names:
            vals = [abs(o[v][rule]) for _, _, o in rows for v in o if not math.isnan(o[v][rule])]
            worst = max(vals, default=math.nan)
            print(f"    {rule:44s} {worst:5.2f} ({sum(v >= limit for v in vals)})")
            if args.list and gname == "all":
                for cid, _, o in rows:
                    for v in o:
                        if abs(o[v][rule]) >= limit:
                            print(f"        {cid} {v} {o[v][rule]:+.2f}")
    return 0
