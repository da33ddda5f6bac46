"""The persistence protocol's dialogue sets: shape, control dialogues, identity, refusal."""

from __future__ import annotations

import json
import zlib
from pathlib import Path

import numpy as np
import pytest

from stylebench.dialogues.persistence import (
    PROTOCOL,
    PersistenceSpec,
    build_persistence_set,
    is_persistence_set,
    load_instructions,
    load_persistence_set,
    plan_persistence,
)
from stylebench.errors import BadValue
from stylebench.records import DIMS, DIRECTIONS, LANGS
from stylebench.synth.base import Audio, Style, Voice

VOICES = {lg: [Voice(f"{lg}-v{i}", lg, f"b{i}") for i in range(2)] for lg in LANGS}


class TextTone:
    """A fake synthesiser: a 0.1 s tone whose frequency is a hash of the text, so two texts
    give different wavs and the same text the same wav."""

    name = "text-tone"

    def synthesize(self, text: str, voice: Voice, style: Style = Style()) -> Audio:
        f = 100 + zlib.crc32(text.encode("utf-8")) % 400
        t = np.arange(1600) / 16000
        return Audio((0.3 * np.sin(2 * np.pi * f * t)).astype(np.float32), 16000)


@pytest.fixture(scope="module")
def pset(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("psets") / "p"
    spec = PersistenceSpec(per_cell=2, voices_per_lang=2, seed=3, n_turns=4)
    build_persistence_set(out, spec, TextTone(), VOICES, jobs=1)
    return out


def test_every_cell_has_its_samples_and_every_sample_its_control(pset):
    from stylebench.dialogues.builder import load_contents

    pool = {it.id: it for lg in LANGS for it in load_contents(lg)}
    samples, sha = load_persistence_set(pset)
    assert len(samples) == len(DIMS) * len(DIRECTIONS) * len(LANGS) * 2
    assert len(sha) == 64
    for s in samples:
        assert s.protocol == PROTOCOL and s.n_turns == 4 and len(s.control) == 4
        # turn 1 = instruction + question; the control asks the bare question
        assert s.turns[0].text.startswith(s.instruction)
        assert s.turns[0].text.endswith(s.control[0].text)
        assert s.control[0].text not in (s.instruction, "")
        assert s.turns[0].audio != s.control[0].audio
        # turns 2..N: the same question and the very same wav in both dialogues
        assert s.turns[1:] == s.control[1:]
        # every turn asks a different question, none carries the instruction
        assert len(set(s.pool_ids)) == 4
        # each turn's scripted answer is the pool's answer to that turn's question
        assert [pool[i].content for i in s.pool_ids] == list(s.contents)
        assert [pool[i].request for i in s.pool_ids[1:]] == [t.text for t in s.turns[1:]]
        assert all(s.instruction not in t.text for t in s.turns[1:])


def test_later_turns_carry_no_style_words(pset):
    samples, _ = load_persistence_set(pset)
    style_words = ("faster", "slowly", "louder", "quietly", "pitch", "monotone", "expressive")
    for s in (s for s in samples if s.lang == "en"):
        for t in s.turns[1:]:
            assert not any(w in t.text.lower() for w in style_words), t.text


def test_emotion_samples_name_their_emotion_in_turn_one_only(pset):
    samples, _ = load_persistence_set(pset)
    emo = [s for s in samples if s.dim == "emotion"]
    assert emo and all(s.emotion for s in emo)
    for s in emo:
        name = load_instructions(s.lang)["emotion"]["names"][s.emotion]
        assert name in s.instruction and "{emotion}" not in s.instruction
    assert not any(s.emotion for s in samples if s.dim != "emotion")


def test_the_set_records_its_protocol_in_its_identity(pset):
    card = json.loads((pset / "set_card.json").read_text(encoding="utf-8"))
    assert card["protocol"] == PROTOCOL and card["n_turns"] == 4
    assert card["set_version"].startswith(PROTOCOL) and "-t4-s3" in card["set_version"]
    samples, _ = load_persistence_set(pset)
    assert {s.set_version for s in samples} == {card["set_version"]}
    assert is_persistence_set(pset)
    assert "4-turn persistence samples" in (pset / "SET_CARD.md").read_text(encoding="utf-8")


def test_a_stylebench_loader_refuses_a_persistence_set_by_name(pset):
    from stylebench.dialogues.sets import load_set

    with pytest.raises(BadValue, match="is a persistence set, not a StyleBench set") as err:
        load_set(pset, check_audio=False)
    assert "malformed" not in str(err.value)


def test_a_changed_control_wav_is_refused(pset, tmp_path):
    import shutil

    copy = tmp_path / "c"
    shutil.copytree(pset, copy)
    samples, _ = load_persistence_set(copy)
    wav = copy / samples[0].control[0].audio
    wav.write_bytes(wav.read_bytes()[:-2] + b"\x01\x02")
    with pytest.raises(BadValue, match="does not match its sha256"):
        load_persistence_set(copy)


def test_plan_is_deterministic_and_the_seed_matters():
    a = plan_persistence(PersistenceSpec(per_cell=1, seed=0), VOICES)
    b = plan_persistence(PersistenceSpec(per_cell=1, seed=0), VOICES)
    c = plan_persistence(PersistenceSpec(per_cell=1, seed=1), VOICES)
    assert a == b and a != c


@pytest.mark.parametrize(
    ("kw", "match"),
    [({"n_turns": 1}, "at least 2 turns"), ({"dims": ("tempo",)}, "unknown dim 'tempo'")],
)
def test_bad_specs_are_user_errors(kw, match):
    with pytest.raises(BadValue, match=match):
        plan_persistence(PersistenceSpec(**kw), VOICES)


def test_the_cli_builds_a_persistence_set(tmp_path, capsys):
    from stylebench.cli import main

    out = tmp_path / "cli"
    args = ["build-dialogues", "--protocol", "persistence", "--out", str(out)]
    args += ["--per-cell", "1", "--langs", "en", "--dims", "speed", "--turns", "3"]
    args += ["--synth", "espeak-ng", "--voices-per-lang", "1", "--jobs", "1"]
    assert main(args) == 0
    shown = json.loads(capsys.readouterr().out)
    assert shown["protocol"] == PROTOCOL and shown["n_samples"] == 2 and shown["n_turns"] == 3
    samples, _ = load_persistence_set(out)
    assert {(s.dim, s.lang, s.n_turns) for s in samples} == {("speed", "en", 3)}


def test_the_persistence_loader_refuses_a_stylebench_manifest_line(tmp_path):
    line = {"id": "speed-intensify-en-0000", "dim": "speed", "turns": []}
    (tmp_path / "manifest.jsonl").write_text(json.dumps(line) + "\n", encoding="utf-8")
    with pytest.raises(BadValue, match=r"manifest.jsonl:1: .*not a persistence sample"):
        load_persistence_set(tmp_path)
    assert not is_persistence_set(tmp_path)
