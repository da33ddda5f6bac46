"""Where the real-speech corpus audio lies for the tests, or a skip that says how to get it.

The recordings are copied from public repositories and not committed (benchmarks/corpus/SOURCES.md);
``benchmarks/get_corpus.py`` fetches them. Looked for in ``$STYLEBENCH_REAL_SPEECH``, then
``benchmarks/corpus/``, then ``shared/real_speech/`` beside the checkout.
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
MANIFEST = ROOT / "benchmarks" / "corpus" / "manifest.json"


def corpus_dir(files: Iterable[str]) -> Path:
    """The first candidate folder holding every one of ``files``; skips the test otherwise."""
    files = list(files)
    env = os.environ.get("STYLEBENCH_REAL_SPEECH")
    candidates = [Path(env)] if env else [MANIFEST.parent, ROOT.parent / "shared" / "real_speech"]
    for folder in candidates:
        if all((folder / f).is_file() for f in files):
            return folder
    pytest.skip(
        "real-speech corpus audio absent: run benchmarks/get_corpus.py or set STYLEBENCH_REAL_SPEECH"
    )


def present_clips(clips: Iterable[dict], at_least: int = 1) -> tuple[Path, list[dict]]:
    """The first candidate folder holding ``at_least`` of ``clips`` (manifest entries), with the
    clips whose audio lies there; clips listed but absent are left out. Skips the test when no
    folder holds enough of them (a corpus grown in the manifest before its audio is copied)."""
    clips = list(clips)
    env = os.environ.get("STYLEBENCH_REAL_SPEECH")
    candidates = [Path(env)] if env else [MANIFEST.parent, ROOT.parent / "shared" / "real_speech"]
    for folder in candidates:
        there = [c for c in clips if (folder / c["file"]).is_file()]
        if len(there) >= at_least:
            return folder, there
    pytest.skip(
        f"real-speech corpus audio absent (fewer than {at_least} of {len(clips)} clips found): "
        "run benchmarks/get_corpus.py or set STYLEBENCH_REAL_SPEECH"
    )
