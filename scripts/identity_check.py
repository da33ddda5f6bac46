"""Byte-identity check for refactors that must not change behaviour.

``make`` builds a fixed set of runs into a folder and writes ``identity.json`` there: the sha256
of every file whose bytes a refactor must not change. ``diff`` compares two such files.

The runs (what issue 32 names): reference, neutral and shuffled on ``--dim all --lang all
--limit 2``; their ``compare``; an emotion run with a human-ratings import (sheets filled by a
fixed rule from the key, so the same export gives the same answers); a captioned pitch run
(``--captioner features --caption-judge lexicon``).

What is hashed, per run folder: every stage record file (``*.jsonl``, except ``timings.jsonl``),
``report.csv``, ``report.json``, ``report.md``; and ``compare.md`` / ``compare.json``. Two things are
masked, both named here so that nothing else can hide a change:

- ``elapsed_s`` in records: seconds spent, a measurement of this machine;
- ``cached`` in records: whether a judge verdict came from the judge cache (which the earlier
  of two checks on one machine fills), not what the verdict is;
- in ``compare.json``'s provenance: ``git`` (the commit that made each run) and
  ``manifest_sha256`` (each run's manifest, which records that commit and its time);
- the output folder's absolute path, replaced by ``<OUT>``, so two folders can be compared.

    python scripts/identity_check.py make --out /tmp/id-before      # on the old commit
    python scripts/identity_check.py make --out /tmp/id-after       # on the new one
    python scripts/identity_check.py diff /tmp/id-before /tmp/id-after
"""

from __future__ import annotations

import argparse
import csv
import hashlib
import json
import subprocess
import sys
from pathlib import Path

MODELS = ("reference", "neutral", "shuffled")
MASKED_KEYS = frozenset({"elapsed_s", "cached"})
PROVENANCE_KEYS = frozenset({"git", "manifest_sha256"})
REPORT_FILES = ("report.csv", "report.json", "report.md")
COMPARE_FILES = ("compare.md", "compare.json")


def _sb(*args: str) -> None:
    exe = Path(sys.executable).with_name("stylebench")
    cmd = [str(exe), *args]
    print("+", " ".join(cmd), flush=True)
    res = subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    if res.returncode != 0:
        sys.exit(f"identity_check: {' '.join(args[:2])} failed:\n{res.stderr[-2000:]}")


def _fill_sheets(export: Path, key: dict) -> list[Path]:
    """Answer every sheet by a fixed rule: checks as the key says; a sample as its direction asks
    (intensify: the later turn, intensities 2-3-4; attenuate: the earlier, 4-3-2)."""
    items = key["items"]
    out = []
    for sheet in sorted(export.glob("sheet_r*.csv")):
        with open(sheet, newline="", encoding="utf-8") as fh:
            rows = list(csv.DictReader(fh))
        for row in rows:
            it = items[row["item_id"]]
            if it["kind"] == "check":
                row["choice_1_2"], row["choice_2_3"] = it["answers"]["1-2"], it["answers"]["2-3"]
                row["intensity_1"], row["intensity_2"], row["intensity_3"] = "3", "3", "3"
            elif it["direction"] == "intensify":
                row.update(choice_1_2="2", choice_2_3="3", intensity_1="2")
                row.update(intensity_2="3", intensity_3="4")
            else:
                row.update(choice_1_2="1", choice_2_3="2", intensity_1="4")
                row.update(intensity_2="3", intensity_3="2")
        filled = sheet.with_name(sheet.name.replace("sheet_", "filled_"))
        with open(filled, "w", newline="", encoding="utf-8") as fh:
            w = csv.DictWriter(fh, fieldnames=list(rows[0]))
            w.writeheader()
            w.writerows(rows)
        out.append(filled)
    return out


def make(out: Path) -> None:
    out.mkdir(parents=True, exist_ok=True)
    runs = out / "runs"
    common = ("--out", str(runs), "--limit", "2")
    for m in MODELS:
        _sb("run", "--model", m, "--dim", "all", "--lang", "all", *common, "--run-id", f"all-{m}")
    _sb("compare", *(str(runs / f"all-{m}") for m in MODELS), "--out", str(out / "compare"))
    emo = runs / "emotion-reference"
    _sb(
        "run",
        "--model",
        "reference",
        "--dim",
        "emotion",
        "--lang",
        "all",
        *common,
        "--run-id",
        emo.name,
    )
    export = out / "listening"
    _sb("export-ratings", str(emo), "--out", str(export), "--raters", "3", "--seed", "0")
    key = json.loads((export / "key.json").read_text(encoding="utf-8"))
    _sb("import-ratings", str(emo), *(str(p) for p in _fill_sheets(export, key)))
    _sb("report", str(emo))
    cap = ("--captioner", "features", "--caption-judge", "lexicon")
    _sb(
        "run",
        "--model",
        "reference",
        "--dim",
        "pitch",
        *common,
        *cap,
        "--run-id",
        "caption-reference",
    )
    manifest = hashes(out)
    (out / "identity.json").write_text(json.dumps(manifest, indent=1, sort_keys=True) + "\n")
    print(f"{len(manifest)} files hashed -> {out / 'identity.json'}")


def _normalised(path: Path, out: Path) -> bytes:
    text = path.read_text(encoding="utf-8").replace(str(out.resolve()), "<OUT>")
    text = text.replace(str(out), "<OUT>")
    if path.suffix == ".json":
        text = json.dumps(_masked(json.loads(text)), sort_keys=True)
    if path.suffix == ".jsonl":
        lines = []
        for line in text.splitlines():
            if line.strip():
                rec = json.loads(line)
                lines.append(json.dumps({k: v for k, v in rec.items() if k not in MASKED_KEYS}))
        text = "\n".join(lines) + "\n"
    return text.encode("utf-8")


def _masked(value: object) -> object:
    if isinstance(value, dict):
        return {k: _masked(v) for k, v in value.items() if k not in PROVENANCE_KEYS}
    if isinstance(value, list):
        return [_masked(v) for v in value]
    return value


def hashes(out: Path) -> dict[str, str]:
    found: dict[str, str] = {}
    for path in sorted(out.rglob("*")):
        rel = path.relative_to(out).as_posix()
        wanted = (path.suffix == ".jsonl" and path.name != "timings.jsonl") or path.name in (
            *REPORT_FILES,
            *COMPARE_FILES,
        )
        if path.is_file() and wanted:
            found[rel] = hashlib.sha256(_normalised(path, out)).hexdigest()
    return found


def diff(a: Path, b: Path) -> int:
    ha = json.loads((a / "identity.json").read_text())
    hb = json.loads((b / "identity.json").read_text())
    bad = 0
    for rel in sorted(set(ha) | set(hb)):
        if ha.get(rel) != hb.get(rel):
            bad += 1
            if rel in ha and rel in hb:
                what = "differs"
            else:
                what = f"only in {a if rel in ha else b}"
            print(f"{what}: {rel}")
    print(f"{len(set(ha) | set(hb))} files, {bad} differ")
    return 1 if bad else 0


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    sub = ap.add_subparsers(dest="cmd", required=True)
    mk = sub.add_parser("make", help="build the runs and hash them")
    mk.add_argument("--out", type=Path, required=True)
    df = sub.add_parser("diff", help="compare two made folders")
    df.add_argument("a", type=Path)
    df.add_argument("b", type=Path)
    args = ap.parse_args(argv)
    if args.cmd == "make":
        if (args.out / "identity.json").exists():
            ap.error(f"{args.out} already holds a made check; choose a new --out")
        make(args.out)
        return 0
    for p in (args.a, args.b):
        if not (p / "identity.json").is_file():
            ap.error(f"{p} has no identity.json: run `make --out {p}` first")
    return diff(args.a, args.b)


if __name__ == "__main__":
    raise SystemExit(main())
