from __future__ import annotations

import json

import pytest

from stylebench.dialogues.builder import BuildSpec, plan_samples
from stylebench.dialogues.sets import load_set
from stylebench.synth.espeak import voices_for


def test_small_set_is_complete(small_set):
    samples, checksum = load_set(small_set)
    assert len(samples) == 3 * 2 * 2 * 2
    card = json.loads((small_set / "set_card.json").read_text())
    assert card["checksum"] == checksum and card["n_samples"] == len(samples)
    assert all(c["n"] == 2 for c in card["cells"])
    assert len({s.voice for s in samples if s.lang == "en"}) == 2
    for s in samples:
        assert s.turns[0].text != s.turns[1].text != s.turns[2].text
        assert all((small_set / t.audio).stat().st_size > 1000 for t in s.turns)


def test_plan_is_deterministic_and_single_dimension():
    spec = BuildSpec(per_cell=5, seed=3)
    voices = {lang: voices_for(lang) for lang in spec.langs}
    a, b = plan_samples(spec, voices), plan_samples(spec, voices)
    assert a == b
    assert len(a) == 3 * 2 * 2 * 5
    assert len({p["id"] for p in a}) == len(a)


def test_existing_set_is_never_overwritten(small_set):
    from stylebench.dialogues.builder import build_set
    from stylebench.synth.espeak import EspeakSynth

    with pytest.raises(FileExistsError):
        build_set(small_set, BuildSpec(per_cell=1), EspeakSynth(), {})


def test_not_a_set(tmp_path):
    with pytest.raises(FileNotFoundError, match="build-dialogues"):
        load_set(tmp_path)


def a_copy(small_set, tmp_path):
    """A copy of the small set to spoil; returns its folder and the first sample's line."""
    import shutil

    dest = tmp_path / "set"
    shutil.copytree(small_set, dest)
    lines = (dest / "manifest.jsonl").read_text(encoding="utf-8").splitlines()
    return dest, json.loads(lines[0]), lines


def write_lines(root, lines) -> None:
    (root / "manifest.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")


def test_a_user_wav_that_changed_is_truncated_or_outside_the_set_is_refused(small_set, tmp_path):
    root, first, lines = a_copy(small_set, tmp_path)
    wav = root / first["turns"][1]["audio"]
    good = wav.read_bytes()
    wav.write_bytes(good[:-2] + b"\x01\x02")  # same length, other samples
    with pytest.raises(
        ValueError, match=r"manifest.jsonl: sample .*_u2.wav' does not match its sha256"
    ):
        load_set(root)
    wav.write_bytes(good[: len(good) // 2])
    with pytest.raises(ValueError, match=r"_u2.wav' is a truncated wav \(header declares"):
        load_set(root)
    wav.write_bytes(good)
    for bad in ("../../../../etc/hostname", "/etc/hostname"):
        first["turns"][0]["audio"] = bad
        write_lines(root, [json.dumps(first), *lines[1:]])
        with pytest.raises(ValueError, match="lies outside the set folder"):
            load_set(root)


def test_a_manifest_that_is_not_utf8_or_not_samples_names_the_file(small_set, tmp_path):
    root, first, lines = a_copy(small_set, tmp_path)
    (root / "manifest.jsonl").write_bytes(b"\xff\xfe\x00binary")
    with pytest.raises(ValueError, match=r"set/manifest.jsonl: not UTF-8 text"):
        load_set(root)
    for line in ("[1, 2]", json.dumps({**first, "dim": "loudness"})):
        write_lines(root, [line])
        with pytest.raises(ValueError, match=r"manifest.jsonl:1: malformed sample"):
            load_set(root)


def test_a_run_checks_the_audio_of_the_samples_it_selects_only(small_set, tmp_path):
    from stylebench.commands.runs import select_samples
    from stylebench.config import make_config
    from stylebench.errors import BadValue

    root, first, _ = a_copy(small_set, tmp_path)
    wav = root / first["turns"][1]["audio"]
    wav.write_bytes(wav.read_bytes()[:-2] + b"\x01\x02")
    samples, _ = load_set(root, check_audio=False)  # the set loads; its wavs are not read yet
    other = next(d for d in ("pitch", "volume", "speed") if d != first["dim"])
    chosen = select_samples(samples, make_config(dim=other), root)  # never plays the spoiled one
    assert chosen and first["id"] not in {s.id for s in chosen}
    with pytest.raises(BadValue, match=r"_u2.wav' does not match its sha256"):
        select_samples(samples, make_config(dim=first["dim"]), root)
