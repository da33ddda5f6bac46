"""Unscored replies: signals with known answers are left without a score, with their reason."""

from __future__ import annotations

import numpy as np
import pytest

from stylebench.metrics import validity
from stylebench.metrics.dims.base import ScoreContext, dimension
from stylebench.records import FeatureRecord, TranscriptRecord
from stylebench.stages.measure import FeatureConfig, analyse_reply, finish_sample

SR = 16000


def speechlike(seconds: float, f0: float = 160.0, seed: int = 0) -> np.ndarray:
    """Harmonic voice whose F0 glides +-2 st and whose level rises and falls 4 times a second
    (syllables), with a short pause every 0.25 s: steady in neither level nor pitch."""
    rng = np.random.default_rng(seed)
    t = np.arange(int(SR * seconds)) / SR
    inst = f0 * 2 ** (2 * np.sin(2 * np.pi * 0.7 * t + rng.uniform(0, 6)) / 12)
    phase = 2 * np.pi * np.cumsum(inst) / SR
    voice = sum(np.sin(h * phase) / h for h in range(1, 8))
    env = np.clip(np.sin(2 * np.pi * 4 * t), 0, None) ** 0.7
    return 0.2 * voice * env + 1e-3 * rng.standard_normal(t.size)


def square(seconds: float, f0: float = 150.0) -> np.ndarray:
    t = np.arange(int(SR * seconds)) / SR
    return 0.3 * np.sign(np.sin(2 * np.pi * f0 * t))


def noise(seconds: float) -> np.ndarray:
    return 0.1 * np.random.default_rng(1).standard_normal(int(SR * seconds))


def transcript(text: str, lang: str = "en", flags: tuple[str, ...] = ()) -> TranscriptRecord:
    return TranscriptRecord("s", 1, "ok", "fp", text=text, lang=lang, flags=list(flags))


def measure(wave: np.ndarray, text: str | None = None) -> tuple[dict, list[str]]:
    part = analyse_reply(wave, SR, FeatureConfig(vad="energy"))
    trs = {1: transcript(text)} if text is not None else {}
    done = finish_sample({1: part}, trs, "en")[1]
    assert not isinstance(done, str), done
    return done


def scores(values: dict, flags: list[str]) -> dict[str, float | str]:
    f = {1: FeatureRecord("s", 1, "ok", "fp", values=values, flags=flags)}
    ctx = ScoreContext.of(speed_source="asr")
    return {d: dimension(d).turn_values(None, f, ctx)[0][1] for d in ("pitch", "volume", "speed")}


SENTENCE = "the quick brown fox jumps over the lazy dog near the river bank today"


def test_speech_like_audio_keeps_every_score():
    values, flags = measure(speechlike(3.0), SENTENCE)
    assert not {"too_short", "not_speech"} & set(flags), flags
    assert values["level_spread_db"] > validity.MIN_LEVEL_SPREAD_DB
    assert all(isinstance(v, float) for v in scores(values, flags).values())


@pytest.mark.parametrize(
    "wave, text",
    [(square(3.0), None), (square(3.0), SENTENCE), (noise(3.0), None), (noise(3.0), "you")],
    ids=["square", "square-with-hallucinated-words", "noise", "noise-one-word"],
)
def test_tones_and_noise_are_not_speech_on_every_dimension(wave, text):
    """A 150 Hz square wave (the outside check's false pitch change) and white noise: no score
    on any dimension. A steady pitch blocks even when the ASR wrote a sentence."""
    values, flags = measure(wave, text)
    assert "not_speech" in flags
    got = scores(values, flags)
    assert all(isinstance(v, str) for v in got.values()), got
    assert got["volume"].startswith("unscored: ")


def test_a_one_syllable_reply_is_too_short_for_every_dimension():
    values, flags = measure(speechlike(0.45), "yes")
    assert "too_short" in flags
    assert set(scores(values, flags).values()) == {validity.REASONS["too_short"]}
    # enough audio but a three-syllable transcript is too short as well
    values, flags = measure(speechlike(2.0), "yes I can")
    assert "too_short" in flags


def test_rules_read_their_thresholds():
    base = {"active_s": 2.0, "syllables": 10.0, "level_spread_db": 20.0, "f0_std_st": 2.0}
    assert validity.blocking_flags(base, []) == []
    assert validity.blocking_flags({**base, "active_s": 0.9}, []) == ["too_short"]
    assert validity.blocking_flags({**base, "syllables": 3.0}, []) == ["too_short"]
    assert validity.blocking_flags({**base, "text_syllables": 12.0, "syllables": 3.0}, []) == []
    # a count in the wrong script (English text under a Mandarin item) does not count
    no_han = {**base, "text_syllables": 0.0}
    assert validity.blocking_flags(no_han, ["text_wrong_script"]) == []
    steady = {**base, "level_spread_db": 3.0}
    assert validity.blocking_flags(steady, []) == []  # the transcript vouches for words
    assert validity.blocking_flags(steady, ["asr_repetition"]) == ["not_speech"]
    assert validity.blocking_flags({k: v for k, v in steady.items() if k != "syllables"}, []) == [
        "not_speech"
    ]
    held = {**base, "f0_std_st": 0.1, "f0_voiced_span_share": 0.9}
    assert validity.blocking_flags(held, []) == ["not_speech"]
    assert validity.blocking_flags({**held, "f0_voiced_span_share": 0.2}, []) == []


def test_transcript_doubts():
    assert validity.transcript_doubts("你好世界今天天气很好", "zh", 10, 2.5, 9) == []
    assert validity.transcript_doubts("hello there how are you today", "zh", 8, 2.5, 7) == [
        "asr_wrong_script"
    ]
    assert validity.transcript_doubts("你好世界", "en", 4, 1.5, 4) == ["asr_wrong_script"]
    # a 50-times loop: 150 syllables in 5 s of speech, against 20 intensity peaks
    doubts = validity.transcript_doubts("去哪里" * 50, "zh", 150, 5.0, 20)
    assert doubts == ["asr_implausible_rate", "asr_nuclei_mismatch"]
    # a transcript that lost most of a long reply: 20 syllables over 60 s, 200 peaks
    assert validity.transcript_doubts("a b", "en", 20, 60.0, 200) == [
        "asr_implausible_rate",
        "asr_nuclei_mismatch",
    ]


def test_nuclei_outliers():
    assert validity.nuclei_outliers({1: 1.3, 2: 1.4, 3: 1.25}) == []
    assert validity.nuclei_outliers({1: 1.3, 2: 4.0, 3: 1.25}) == [2]
    assert validity.nuclei_outliers({1: 1.3}) == []
    assert validity.nuclei_outliers({1: 1.0, 2: 2.5}) == [1, 2]  # two turns: both are suspect


def test_level_spread_rejects_a_span_too_short():
    with pytest.raises(ValueError, match="too short"):
        validity.level_spread_db(np.ones(SR), SR, 0.0, 0.01)


def test_wrong_script_ignores_digits_and_punctuation():
    assert not validity.wrong_script("123, 456!", "en")
    assert not validity.wrong_script("我有3个苹果, OK", "zh")


def test_a_text_channel_in_another_script_or_at_no_human_rate_cannot_score_speed():
    """The outside check's cases: an English reply whose text channel is Chinese arithmetic, and
    one whose text stopped after three words; neither may replace a doubtful transcript."""
    assert validity.text_doubts("三加五等于八", "en", 6, 2.0) == ["text_wrong_script"]
    assert validity.text_doubts("yo planning picnic", "en", 5, 12.0) == ["text_implausible_rate"]
    assert validity.text_doubts("a fine day for a picnic by the lake", "en", 10, 2.5) == []
    assert validity.text_doubts("a fine day for a picnic by the lake", "en", 10, 2.5, 9) == []
    # a text channel covering half the letters the audio spells (45 syllables, 87 nuclei)
    assert validity.text_doubts("U U U S " * 11 + "U", "en", 45, 38.3, 87) == [
        "text_nuclei_mismatch"
    ]
    feats = {
        1: FeatureRecord(
            "s", 1, "ok", "f", values={"spm": 300.0, "text_spm": 120.0}, flags=["asr_repetition"]
        ),
        2: FeatureRecord(
            "s", 2, "ok", "f", values={"spm": 280.0, "text_spm": 50.0}, flags=["text_wrong_script"]
        ),
    }
    vals, extra = dimension("speed").turn_values(None, feats, ScoreContext())
    assert extra == () and vals[2] == 280.0
    assert vals[1].startswith("unscored: doubtful transcript")


def test_same_words_share_one_count_whatever_the_transcripts_count():
    """The outside check's leak: a +2 st copy whose transcript lost four words read -15% speed.
    The audio says the same words (low DTW cost), so both turns share one count and the change
    is the ratio of their speech spans: 0% here, on every ISA the ASR may run on."""
    same = {"dtw_cost_prev": 0.9}
    feats = {
        1: FeatureRecord(
            "s", 1, "ok", "f", values={"spm": 200.0, "syllables": 20.0, "span_s": 6.0}
        ),
        2: FeatureRecord(
            "s", 2, "ok", "f", values={"spm": 170.0, "syllables": 17.0, "span_s": 6.0, **same}
        ),
    }
    for source in ("asr", "auto"):
        vals, _ = dimension("speed").turn_values(None, feats, ScoreContext.of(speed_source=source))
        assert vals[1].value == vals[2].value  # equal spans: no change
        assert vals[1].turns == vals[2].turns == (1, 2)
    # other words (a paraphrase: high cost): each turn's own count, as the paper
    feats[2].values["dtw_cost_prev"] = 2.4
    assert dimension("speed").turn_values(None, feats, ScoreContext())[0][2] == 170.0
    # the held-out leak: one word doubled in a 16-syllable transcript of the same audio (+4 dB)
    # faked +6.25%; over the same words the spans decide
    feats[1].values.update(syllables=16.0)
    feats[2].values.update(syllables=17.0, dtw_cost_prev=0.9, span_s=6.3)
    vals, _ = dimension("speed").turn_values(None, feats, ScoreContext.of(speed_source="asr"))
    change = 100 * (vals[2].value / vals[1].value - 1)
    assert change == pytest.approx(100 * (6.0 / 6.3 - 1))


def test_alignment_cost_separates_the_same_words_from_other_words():
    from stylebench.metrics.alignment import alignment_cost, mfcc

    a = speechlike(2.0, seed=1)
    quieter = 0.5 * a + 1e-3 * np.random.default_rng(3).standard_normal(a.size)  # same, -6 dB
    other = noise(2.0) * np.clip(np.sin(2 * np.pi * 3 * np.arange(2 * SR) / SR), 0, None)
    same_cost = alignment_cost(mfcc(a, SR), mfcc(quieter, SR))
    other_cost = alignment_cost(mfcc(a, SR), mfcc(other, SR))
    assert same_cost < validity.SAME_CONTENT_COST < other_cost
    with pytest.raises(ValueError, match="too short"):
        mfcc(a[:100], SR)


def test_high_band_share_separates_harmonics_from_noise() -> None:
    sr = 16000
    t = np.arange(sr) / sr
    vowel = sum(np.sin(2 * np.pi * k * 150.0 * t) / k**2 for k in range(1, 20))
    noise = np.random.default_rng(3).normal(0, 0.1, sr)
    mask = np.ones(sr, dtype=bool)
    assert validity.high_band_share(vowel, sr, mask) < 0.05
    assert validity.high_band_share(noise, sr, mask) > 0.7  # flat: 6 of 8 kHz lie above 2 kHz
    half = mask.copy()
    half[: sr // 2] = False  # only the masked part counts
    mixed = np.concatenate([noise[: sr // 2], vowel[sr // 2 :]])
    assert validity.high_band_share(mixed, sr, half) < 0.05
    assert np.isnan(validity.high_band_share(vowel, sr, np.zeros(sr, dtype=bool)))
    with pytest.raises(ValueError, match="mask"):
        validity.high_band_share(vowel, sr, mask[:-1])


def test_voicing_rules_leave_whispers_without_a_pitch() -> None:
    flags = validity.voicing_flags
    assert flags({"f0_voiced_share": 0.6, "high_band_share": 0.05}) == []
    assert flags({"f0_voiced_share": 0.01, "high_band_share": 0.05}) == ["unvoiced_speech"]
    assert flags({"f0_voiced_share": 0.3, "high_band_share": 0.5}) == ["whispered"]
    assert flags({"f0_voiced_share": 0.3, "high_band_share": 0.1}) == []  # breathy-ish, harmonics
    assert flags({"f0_voiced_share": 0.6, "high_band_share": 0.5}) == []  # voiced, bright
    assert flags({}) == []


def test_language_mismatch_needs_a_confident_other_language() -> None:
    assert validity.language_mismatch("en", "zh", 0.0002)
    assert not validity.language_mismatch("en", "en", 0.99)
    assert not validity.language_mismatch("en", "zh", 0.45)  # not confident: letters, names
    assert not validity.language_mismatch("en", "", 0.0)  # the backend has no language ID


def test_a_redecoded_transcript_is_vouched_for_by_the_nuclei_count() -> None:
    doubts = validity.transcript_doubts
    args = ("hello there how are you today my friend", "en", 10, 3.0)
    assert doubts(*args, 10, asr_flags=("asr_redecoded",)) == []
    assert doubts(*args, 4, asr_flags=("asr_redecoded",)) == ["asr_redecoded_unconfirmed"]
    assert doubts(*args, None, asr_flags=("asr_redecoded",)) == ["asr_redecoded_unconfirmed"]
    assert doubts(*args, 10, unsure_word_share=0.6, mean_logprob=-0.8) == ["asr_unsure"]
    # many unsure words in a confident transcript: correct real replies look like this
    assert doubts(*args, 10, unsure_word_share=0.6, mean_logprob=-0.3) == []
    assert doubts(
        *args, 10, asr_flags=("asr_redecoded",), unsure_word_share=0.6, mean_logprob=-0.8
    ) == ["asr_unsure", "asr_redecoded_unconfirmed"]
    assert {"asr_unsure", "asr_redecoded_unconfirmed"} <= validity.DOUBT_FLAGS
    assert "asr_redecoded" not in validity.DOUBT_FLAGS


def test_a_whisper_has_volume_and_speed_but_no_pitch():
    """Noise shaped like syllables (a whisper's source has no harmonics): the trackers may
    find a few voiced frames, but far too few for a pitch; volume and speed keep their
    scores."""
    rng = np.random.default_rng(5)
    t = np.arange(int(SR * 3.0)) / SR
    env = np.clip(np.sin(2 * np.pi * 4 * t), 0, None) ** 0.7
    whisper = 0.2 * env * rng.standard_normal(t.size) + 1e-3 * rng.standard_normal(t.size)
    values, flags = measure(whisper, SENTENCE)
    assert values["f0_voiced_share"] < validity.MIN_VOICED_SHARE
    assert values["high_band_share"] > validity.WHISPER_MIN_HIGH_BAND
    got = scores(values, flags)
    assert isinstance(got["pitch"], str) and "voic" in got["pitch"], got["pitch"]
    assert isinstance(got["volume"], float) and isinstance(got["speed"], float)
    # the same envelope on a voice keeps its pitch
    voiced, vflags = measure(speechlike(3.0), SENTENCE)
    assert voiced["f0_voiced_share"] > validity.WHISPER_MAX_VOICED
    assert isinstance(scores(voiced, vflags)["pitch"], float)


def test_a_passage_of_guesses_is_doubtful_though_the_whole_reply_looks_sure() -> None:
    """A reply that opens with 20 s of nonsense words and then reads 50 s of clean speech: the
    whole-reply unsure share (2/7) and mean log-probability pass, the worst stretch does not."""
    from stylebench.metrics.asr.transcript import make_transcript

    words = [(f"frandle{i}", float(i), i + 0.9, 0.3) for i in range(20)]  # guesses
    words += [("the", 20.0 + i, 20.9 + i, 0.95) for i in range(50)]  # clean
    tr = make_transcript(["x"], words, [(-0.5, 70.0)], lang="en", backend="t", model="t")
    assert tr.unsure_word_share == pytest.approx(20 / 70, abs=1e-3)
    assert tr.unsure_stretch_share == pytest.approx(1.0)  # 17.5 s window inside the nonsense
    doubts = validity.transcript_doubts
    args = ("the " * 70, "en", 70, 60.0, 70)
    kw = {"unsure_word_share": tr.unsure_word_share, "mean_logprob": tr.mean_logprob}
    assert doubts(*args, **kw) == []  # the old whole-reply rule alone lets it through
    assert doubts(*args, **kw, unsure_stretch_share=tr.unsure_stretch_share) == ["asr_unsure"]
    # the same nonsense spread thinly (one guess in four words) is not a passage
    spread = [("river", float(i), i + 0.9, 0.3 if i % 4 == 0 else 0.95) for i in range(70)]
    thin = make_transcript(["x"], spread, [(-0.5, 70.0)], lang="en", backend="t", model="t")
    assert thin.unsure_stretch_share < validity.MAX_UNSURE_STRETCH


def test_english_words_no_dictionary_knows_are_guesses_even_when_sure() -> None:
    """Whisper spells nonsense words out with confidence: a sure word that no dictionary knows
    counts as a guess in English, a name or a number does not; Mandarin has no such check."""
    from stylebench.metrics.asr.transcript import guessed, make_transcript, unsure_stretch
    from stylebench.metrics.rate import dictionary_word

    assert not dictionary_word("Frandeltoff's") and not dictionary_word("plunder-grabbish")
    assert dictionary_word("Roosevelt") and dictionary_word("dog's") and dictionary_word("42")
    assert guessed("snorple", 0.99, "en") and not guessed("snorple", 0.99, "zh")
    assert guessed("river", 0.2, "en") and not guessed("river", 0.9, "en")
    sure = [(w, float(i), i + 0.5, 0.99) for i, w in enumerate(["snorple", "frandle"] * 6)]
    tr = make_transcript(["x"], sure, [(-0.2, 6.0)], lang="en", backend="t", model="t")
    assert tr.unsure_word_share == 0.0 and tr.unsure_stretch_share == 1.0
    assert unsure_stretch([]) == 0.0
    # shorter than the 5 s stretch: the whole transcript is the stretch
    assert unsure_stretch([(0.0, 1.0, True), (1.0, 3.0, False)]) == pytest.approx(0.25)


def test_a_passage_of_words_no_dictionary_knows_is_doubtful() -> None:
    """Nonsense words Whisper writes out with confidence: the unknown-word stretch catches them
    in English (names scattered through a reply do not), and Mandarin has no such check."""
    nonsense = [[f"frandle{i}", float(i), i + 0.9] for i in range(8)]
    clean = [["the", 8.0 + i, 8.9 + i] for i in range(24)]
    names = [["Ebenezer" if i % 6 == 0 else "river", float(i), i + 0.9] for i in range(32)]
    assert validity.unknown_stretch(nonsense + clean, "en") == pytest.approx(1.0)
    assert validity.unknown_stretch(names, "en") < validity.MAX_UNKNOWN_STRETCH
    assert validity.unknown_stretch(nonsense + clean, "zh") == 0.0
    doubts = validity.transcript_doubts
    args = ("the " * 32, "en", 32, 30.0, 32)
    assert doubts(*args, unknown_stretch_share=0.9) == ["asr_unsure"]
    assert doubts(*args, unknown_stretch_share=0.2) == []
