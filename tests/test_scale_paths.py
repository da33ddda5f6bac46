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


def test_a_turn_is_checked_once_per_process_until_its_file_is_written(
    small_set, tmp_path, monkeypatch
):
    """compare opens 13 runs of one set: each turn's path, header and hash are checked for the
    first run only; a file written since (another stat) is checked again, and refused if bad."""
    root = tmp_path / "set"
    shutil.copytree(small_set, root)
    samples, _ = load_set(root, check_audio=False)
    checked = []
    real = sets._check_turn_audio
    monkeypatch.setattr(
        sets, "_check_turn_audio", lambda r, sid, t: checked.append(t.audio) or real(r, sid, t)
    )
    check_turn_audio(root, samples)
    n = sum(len(s.turns) for s in samples)
    assert len(checked) == n
    check_turn_audio(root, samples)
    check_turn_audio(str(root), samples[:3])  # another run of the set, a part of it
    assert len(checked) == n
    wav = root / samples[1].turns[2].audio
    good = wav.read_bytes()
    wav.write_bytes(good)  # written again: the same bytes, but another change time
    check_turn_audio(root, samples)
    assert checked[n:] == [samples[1].turns[2].audio]
    wav.write_bytes(good[: len(good) // 2])
    with pytest.raises(BadValue, match="is a truncated wav"):
        check_turn_audio(root, samples)
    with pytest.raises(BadValue, match="is a truncated wav"):  # refused again, never remembered
        check_turn_audio(root, samples)


def test_a_set_manifest_is_parsed_once_per_process(small_set, tmp_path, monkeypatch):
    """The runs of one set share its samples (frozen, made from the manifest's bytes alone);
    another manifest is parsed, and a malformed one refused every time."""
    root = tmp_path / "set"
    shutil.copytree(small_set, root)
    parsed = []
    real = sets._parse_manifest
    monkeypatch.setattr(sets, "_parse_manifest", lambda *a: parsed.append(a[0]) or real(*a))
    a, checksum = load_set(root, check_audio=False)
    b, again = load_set(root, check_audio=False)
    assert (a, checksum) == (b, again) and all(x is y for x, y in zip(a, b, strict=True))
    a.pop()  # a caller's list is its own
    assert len(load_set(root, check_audio=False)[0]) == len(b)
    n = len(parsed)
    assert n <= 1  # 0: the same bytes were parsed earlier in this process
    mf = root / "manifest.jsonl"
    lines = mf.read_text(encoding="utf-8").splitlines()
    mf.write_text("\n".join(lines[1:]) + "\n", encoding="utf-8")
    c, other = load_set(root, check_audio=False)
    assert other != checksum and len(c) == len(b) - 1 and len(parsed) == n + 1
    mf.write_text("\n".join([lines[0][:-3], *lines[1:]]) + "\n", encoding="utf-8")
    for _ in range(2):
        with pytest.raises(BadValue, match=r"manifest.jsonl:1: malformed sample"):
            load_set(root, check_audio=False)
