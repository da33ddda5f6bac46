"""What keeps reading a paper-size run linear: a set's user-turn wavs hashed once per process
however many runs of it are opened, and still refused when one changes."""

from __future__ import annotations

import shutil

import pytest

from stylebench.dialogues import sets
from stylebench.dialogues.sets import check_turn_audio, load_set
from stylebench.errors import BadValue


def test_a_wav_is_hashed_once_and_refused_once_changed(small_set, tmp_path, monkeypatch):
    root = tmp_path / "set"
    shutil.copytree(small_set, root)
    samples, _ = load_set(root, check_audio=False)
    reads = []
    real = sets.sha256_file
    monkeypatch.setattr(sets, "sha256_file", lambda p: reads.append(p) or real(p))
    check_turn_audio(root, samples)
    n = len(reads)
    assert n == sum(len(s.turns) for s in samples)
    check_turn_audio(root, samples)  # a second run of the same set: nothing read again
    assert len(reads) == n
    wav = root / samples[0].turns[0].audio
    data = bytearray(wav.read_bytes())
    data[-1] ^= 0xFF  # same size, another sample value
    wav.write_bytes(bytes(data))
    with pytest.raises(BadValue, match="does not match its sha256"):
        check_turn_audio(root, samples)
