"""Whole-file replacement (stylebench.atomic): old or new, never half."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from stylebench.atomic import replace_with, write_bytes, write_text


def test_a_write_that_fails_leaves_the_old_file_and_no_temporary(tmp_path: Path) -> None:
    dest = write_text(tmp_path / "report.json", "old")

    def refuse(tmp: Path) -> None:
        tmp.write_text("half of the new", encoding="utf-8")
        raise RuntimeError("checksum differs")

    with pytest.raises(RuntimeError, match="checksum"):
        replace_with(dest, refuse)
    assert dest.read_text(encoding="utf-8") == "old"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["report.json"]
    assert write_bytes(tmp_path / "a" / "b.bin", b"\x00\x01").read_bytes() == b"\x00\x01"


def test_kill_9_during_a_write_leaves_the_old_file(tmp_path: Path) -> None:
    """A process killed while it writes the new content: the destination still holds the old
    content in full (the temporary file may stay behind, the destination is never torn)."""
    dest = write_text(tmp_path / "manifest.json", "old " * 1000)
    script = (
        "import sys, time\n"
        "from pathlib import Path\n"
        "from stylebench.atomic import replace_with\n"
        "def slow(tmp):\n"
        "    with open(tmp, 'w') as fh:\n"
        "        fh.write('new ' * 10); fh.flush()\n"
        "        print('writing', flush=True); time.sleep(60)\n"
        "replace_with(Path(sys.argv[1]), slow)\n"
    )
    proc = subprocess.Popen(
        [sys.executable, "-c", script, str(dest)], stdout=subprocess.PIPE, text=True
    )
    assert proc.stdout is not None and proc.stdout.readline().strip() == "writing"
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait(timeout=30)
    assert dest.read_text(encoding="utf-8") == "old " * 1000
    # the stray temporary file is the only trace
    assert [p.name.endswith(".part") for p in tmp_path.iterdir() if p != dest] == [True]
