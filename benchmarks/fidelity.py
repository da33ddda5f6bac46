"""Transcript fidelity speed: the bit-parallel edit distance against the textbook programme.

Prints, for growing reply lengths, the time of each and their ratio, measured in the same run on
the same token sequences (Mandarin-like: one token per character, 20% of them changed).

    .venv/bin/python benchmarks/fidelity.py
"""

from __future__ import annotations

import random
import time

from stylebench.metrics.fidelity import edit_distance, edit_distance_reference


def timed(fn, a, b) -> tuple[float, int]:
    t0 = time.perf_counter()
    d = fn(a, b)
    return time.perf_counter() - t0, d


def main() -> None:
    rng = random.Random(0)
    alphabet = [chr(0x4E00 + i) for i in range(500)]
    edit_distance(["a"], ["b"])  # import rapidfuzz before timing
    print(f"{'tokens':>7} {'reference s':>12} {'ours s':>10} {'ratio':>8}")
    for n in (200, 1000, 3000):
        ref = [rng.choice(alphabet) for _ in range(n)]
        hyp = [t if rng.random() > 0.2 else rng.choice(alphabet) for t in ref]
        slow, d1 = timed(edit_distance_reference, ref, hyp)
        fast, d2 = timed(edit_distance, ref, hyp)
        assert d1 == d2, (d1, d2)
        print(f"{n:>7} {slow:>12.4f} {fast:>10.5f} {slow / fast:>7.0f}x")


if __name__ == "__main__":
    main()
