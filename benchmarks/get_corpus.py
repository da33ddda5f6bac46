"""Fetch the real-speech corpus that ``benchmarks/real_speech.py`` and ``tests/test_real_speech.py`` use.

The recordings are not stored in this repository: each comes from a public Git repository at a
pinned commit (``benchmarks/corpus/manifest.json``, with licences in ``SOURCES.md``). This script
downloads each source file, checks its sha256 against the manifest, converts it exactly as the
manifest was made (``ffmpeg -i SRC [-t SECONDS] -ac 1 -ar 16000 -sample_fmt s16 -c:a flac``) and
checks the result's sha256 too, so every user measures the same bytes. Files already present with
the right hash are kept.

    .venv/bin/python benchmarks/get_corpus.py [--out DIR] [--split tune|heldout|all]

``--out`` (default: the corpus folder, or ``$STYLEBENCH_REAL_SPEECH``) is where the tests and the
benchmark look first. Needs network access to GitHub; machines without it can point
``STYLEBENCH_REAL_SPEECH`` at a copy made elsewhere.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import subprocess
import sys
import tempfile
import urllib.request
from pathlib import Path
from typing import Any

MANIFEST = Path(__file__).resolve().parent / "corpus" / "manifest.json"


def raw_url(source: dict[str, str]) -> str:
    """The download address of a manifest source (repository, commit, path)."""
    return f"https://raw.githubusercontent.com/{source['repo']}/{source['commit']}/{source['path']}"


def trim_seconds(clip: dict[str, Any]) -> float | None:
    """The ``-t`` cut of a clip whose note says it keeps only its first seconds, else None."""
    note = clip.get("note", "")
    if note.startswith("first ") and " s " in note:
        return float(note.split()[1])
    return None


def select(clips: list[dict[str, Any]], split: str) -> list[dict[str, Any]]:
    """The clips of one half (``tune`` or ``heldout``), or all of them for ``all``."""
    return clips if split == "all" else [c for c in clips if c.get("split") == split]


def sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def fetch_clip(clip: dict[str, Any], out: Path) -> str:
    """Make ``out/<file>`` for one clip; returns what was done. Raises ValueError on a bad hash."""
    dst = out / clip["file"]
    if dst.is_file() and sha256(dst) == clip["sha256"]:
        return "kept"
    with tempfile.TemporaryDirectory() as tmp:
        src = Path(tmp) / Path(clip["source"]["path"]).name
        with urllib.request.urlopen(raw_url(clip["source"]), timeout=60) as resp:  # noqa: S310
            src.write_bytes(resp.read())
        if sha256(src) != clip["source"]["sha256"]:
            raise ValueError(f"{clip['id']}: the source file's sha256 differs from the manifest")
        cut = trim_seconds(clip)
        cmd = [
            "ffmpeg",
            "-nostdin",
            "-v",
            "error",
            "-y",
            "-i",
            str(src),
            *(["-t", f"{cut:g}"] if cut else []),
            "-ac",
            "1",
            "-ar",
            "16000",
            "-sample_fmt",
            "s16",
            "-c:a",
            "flac",
            str(dst),
        ]
        subprocess.run(cmd, check=True, capture_output=True)
    if sha256(dst) != clip["sha256"]:
        dst.unlink()
        raise ValueError(
            f"{clip['id']}: the converted file's sha256 differs (another ffmpeg build?)"
        )
    return "fetched"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    default = os.environ.get("STYLEBENCH_REAL_SPEECH") or str(MANIFEST.parent)
    ap.add_argument("--out", type=Path, default=Path(default))
    ap.add_argument(
        "--split",
        choices=("tune", "heldout", "all"),
        default="all",
        help="fetch only the clips of one half (see SOURCES.md); default all",
    )
    args = ap.parse_args(argv)
    args.out.mkdir(parents=True, exist_ok=True)
    failed = 0
    for clip in select(json.loads(MANIFEST.read_text(encoding="utf-8"))["clips"], args.split):
        try:
            print(f"{clip['id']}: {fetch_clip(clip, args.out)}")
        except (OSError, ValueError, subprocess.CalledProcessError) as exc:
            failed += 1
            print(f"{clip['id']}: FAILED ({exc})", file=sys.stderr)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
