"""Score real replies made elsewhere with ``stylebench pairs`` and ``stylebench measure``.

The VStyle replies (``$STYLEBENCH_REAL_REPLIES``, default ``../shared/real_replies/vstyle``
beside the checkout; see its SOURCES.md, the audio is not in the repository) hold 42 pairs of
replies by one model to opposite instructions on one dimension (``pairs.json``). Each pair
becomes a row of a pairs CSV: ``a`` = the reply to the "attenuate" instruction (very low, very
slow, softly), ``b`` = the reply to the "intensify" one, direction ``intensify``, group = the
model. ``stylebench pairs`` then prints, per model and dimension, how many pairs moved as asked
out of those scored, the mean change toward the instruction and the CIs, and per dimension over
all models.

The CSV is written into ``--out`` (the replies' folder is not written to), so its paths are
absolute and the command is run with ``--allow-outside``. ``--measure`` also measures every
reply (182 files) through the Python API, writes ``measure.csv`` and prints how many are
unscored per dimension and reason.

    .venv/bin/python benchmarks/vstyle_pairs.py [--out DIR] [--asr none] [--jobs 2] [--measure]
                                                [--per-pair] [--limit N]
"""

from __future__ import annotations

import argparse
import csv
import json
import os
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
ENV = "STYLEBENCH_REAL_REPLIES"
DEFAULT = ROOT.parent / "shared" / "real_replies" / "vstyle"
COLUMNS = ("id", "a", "b", "dim", "direction", "lang", "group")


def replies_dir(folder: str | None = None) -> Path:
    """The VStyle replies: ``folder``, ``$STYLEBENCH_REAL_REPLIES`` or the default.

    Raises:
        FileNotFoundError: no pairs.json / manifest.json there.
    """
    path = Path(folder or os.environ.get(ENV) or DEFAULT).expanduser()
    missing = [n for n in ("manifest.json", "pairs.json") if not (path / n).is_file()]
    if missing:
        raise FileNotFoundError(
            f"the VStyle real replies are not in {path} (no {', '.join(missing)}); set {ENV} "
            "to the folder holding them"
        )
    return path


def pair_rows(folder: Path) -> list[dict[str, str]]:
    """``pairs.json`` as pairs-CSV rows (a = attenuate reply, b = intensify reply)."""
    entries = json.loads((folder / "pairs.json").read_text(encoding="utf-8"))
    rows = []
    for e in entries:
        a, b = e["attenuate_file"], e["intensify_file"]
        rows.append(
            {
                "id": f"{e['lang']}-{e['dimension']}-{e['model']}",
                "a": str(folder / a),
                "b": str(folder / b),
                "dim": e["dimension"],
                "direction": "intensify",
                "lang": e["lang"],
                "group": e["model"],
            }
        )
    return rows


def write_csv(rows: list[dict[str, str]], path: Path) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "w", newline="", encoding="utf-8") as fh:
        w = csv.DictWriter(fh, COLUMNS)
        w.writeheader()
        w.writerows(rows)
    return path


def replies(folder: Path) -> list[dict[str, Any]]:
    """The manifest's model replies (the spoken prompts left out)."""
    entries = json.loads((folder / "manifest.json").read_text(encoding="utf-8"))
    return [e for e in entries if e.get("role") != "user_prompt"]


def measure_all(folder: Path, out: Path, settings: dict[str, Any], jobs: int) -> str:
    """Every reply through :func:`stylebench.measure`; the summary ``stylebench measure``
    prints."""
    import stylebench
    from stylebench.cli.measure import summary

    entries = replies(folder)
    df = stylebench.measure(
        [folder / e["file"] for e in entries],
        lang=[e["lang"] for e in entries],
        jobs=jobs,
        progress=True,
        **settings,
    )
    df.to_csv(out / "measure.csv", index=False)
    return summary(df.to_dict("records"))


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--replies", default=None, help=f"the VStyle folder (default ${ENV})")
    ap.add_argument("--out", default=str(ROOT / "runs" / "vstyle_pairs"), help="output folder")
    ap.add_argument("--asr", default=None, help="ASR backend, or none (default: the run's)")
    ap.add_argument("--jobs", type=int, default=1, help="processes")
    ap.add_argument("--measure", action="store_true", help="also measure every reply")
    ap.add_argument("--per-pair", action="store_true", help="print every pair too")
    ap.add_argument("--limit", type=int, default=None, help="only the first N pairs (a quick look)")
    args = ap.parse_args(argv)
    from stylebench.cli import main as stylebench

    folder = replies_dir(args.replies)
    out = Path(args.out)
    table = write_csv(pair_rows(folder)[: args.limit], out / "vstyle_pairs.csv")
    print(f"{table}: {sum(1 for _ in open(table, encoding='utf-8')) - 1} pairs", flush=True)
    extra = ["--asr", args.asr] if args.asr else []
    cmd = ["pairs", str(table), "--allow-outside", "--jobs", str(args.jobs), *extra]
    cmd += ["--per-pair-out", str(out / "vstyle_pairs_per_pair.csv")]
    cmd += ["--per-pair"] if args.per_pair else []
    t0 = time.perf_counter()
    rc = stylebench(cmd)
    print(f"pairs: {time.perf_counter() - t0:.0f} s", file=sys.stderr)
    if rc or not args.measure:
        return rc
    t0 = time.perf_counter()
    settings = {"asr": args.asr} if args.asr else {}
    print("\nmeasure, every reply\n" + measure_all(folder, out, settings, args.jobs), end="")
    print(f"measure: {time.perf_counter() - t0:.0f} s", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
