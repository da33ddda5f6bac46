"""The dimension modules: which feature value scores each dimension, the speed-source policy,
the change scales and thresholds."""

from __future__ import annotations

import pytest

from stylebench.metrics.dims.base import DIMENSIONS, ScoreContext, dimension, plain
from stylebench.metrics.dims.speed import speed_key
from stylebench.records import DIMS, FeatureRecord
from stylebench.scoring.cells import Thresholds, perceptual_change
from stylebench.synth.base import Style


def feat(flags=(), **values) -> FeatureRecord:
    return FeatureRecord("s", 1, "ok", "fp", values=dict(values), flags=list(flags))


CTX = ScoreContext()


def values_of(dim: str, f: FeatureRecord, **ctx) -> dict:
    return dimension(dim).turn_values(None, {1: f}, ScoreContext.of(**ctx))[0]


def test_value_keys():
    f = feat(
        f0_mean_weighted=207.0,
        f0_mean_agreed=205.0,
        f0_mean_guarded=200.0,
        f0_mean=210.0,
        f0_median=190.0,
        rms_gated=0.1,
        rms_active=0.2,
    )
    assert values_of("pitch", f) == {1: 205.0}
    assert values_of("pitch", f, pitch_stat="weighted_mean") == {1: 207.0}
    assert values_of("pitch", f, pitch_stat="guarded_mean") == {1: 200.0}
    assert values_of("pitch", f, pitch_stat="median") == {1: 190.0}
    assert values_of("pitch", f, pitch_stat="mean") == {1: 210.0}
    assert values_of("volume", f, pitch_stat="median") == {1: 0.1}
    missing = values_of("pitch", feat(["no_f0: silent"], rms_active=0.1))[1]
    assert missing == "f0_mean_agreed unavailable: no_f0: silent"


def test_every_dim_has_one_module_with_its_scale_and_threshold():
    assert set(DIMENSIONS) == set(DIMS)
    th = Thresholds(pitch_st=1.5, volume_db=2.5, speed_pct=7.0, emotion_delta=0.3)
    for name, threshold, unit in (
        ("pitch", 1.5, "st"),
        ("volume", 2.5, "dB"),
        ("speed", 7.0, "%"),
        ("emotion", 0.3, "pt"),
    ):
        d = dimension(name)
        assert d.name == name and d.unit == unit and th.for_dim(name) == threshold
    assert perceptual_change("pitch", 100.0, 200.0) == pytest.approx(12.0)
    assert perceptual_change("volume", 0.1, 1.0) == pytest.approx(20.0)
    assert perceptual_change("volume", 0.1, 0.2) == pytest.approx(6.0206, abs=1e-4)
    assert perceptual_change("pitch", 200.0, 100.0) == pytest.approx(-12.0)
    assert perceptual_change("speed", 100.0, 125.0) == pytest.approx(25.0)
    assert perceptual_change("emotion", 0.0, -0.5) == pytest.approx(-0.5)
    with pytest.raises(ValueError, match="unknown dim"):
        dimension("loudness")


def test_default_thresholds_are_the_just_noticeable_changes():
    from stylebench.config import make_config
    from stylebench.metrics.dims.base import jnd
    from stylebench.metrics.prosody import ProsodyUnits

    assert [jnd(d) for d in ("pitch", "volume", "speed", "emotion")] == [1.0, 1.0, 5.0, 1.0]
    sc = make_config().score
    assert (sc.pitch_st, sc.volume_db, sc.speed_pct, sc.emotion_delta) == (1.0, 1.0, 5.0, 1.0)
    assert Thresholds() == Thresholds(pitch_st=1.0, volume_db=1.0, speed_pct=5.0, emotion_delta=1.0)
    assert ProsodyUnits() == ProsodyUnits(pitch_st=1.0, spread_st=1.0, level_db=1.0, rate_pct=5.0)


def test_config_thresholds_and_flags_come_from_the_registry():
    """One name and one default per dimension: ScoreConfig, Thresholds and the CLI agree."""
    import dataclasses

    from stylebench.config import ScoreConfig
    from stylebench.metrics.dims.base import all_dims, in_order
    from stylebench.scoring.cells import thresholds_from

    names = [d.threshold_field for d in in_order()]
    assert [f.name for f in dataclasses.fields(ScoreConfig)] == [*names, "n_boot", "min_quality"]
    assert [f.name for f in dataclasses.fields(Thresholds)] == names
    for d in all_dims():
        f = {f.name: f for f in dataclasses.fields(ScoreConfig)}[d.threshold_field]
        assert f.default == d.default_threshold and f.metadata["help"] == d.threshold_help
    sc = ScoreConfig(emotion_delta=0.5)
    assert thresholds_from(sc).for_dim("emotion") == 0.5
    with pytest.raises(ValueError, match="emotion-delta"):
        ScoreConfig(emotion_delta=-1.0)


def test_each_dimension_owns_its_reference_step_question_and_caption_words():
    from stylebench.metrics.captions.features import caption_dims, phrase
    from stylebench.model_wrappers.embedded.tts import step_style
    from stylebench.ratings.export import check_levels, question_for

    assert step_style("speed", "attenuate", 2).rate == pytest.approx(0.8**2)
    assert step_style("pitch", "intensify", 2).pitch_st == 4.0
    assert step_style("volume", "attenuate", 1).gain_db == -4.0
    assert question_for("pitch", "")[0] == "Which turn has the higher voice?"
    assert question_for("emotion", "sad")[0] == "Which turn sounds more sad?"
    assert set(check_levels()) >= {"pitch", "volume", "speed"}
    assert caption_dims()[:3] == ("pitch", "volume", "speed")
    assert phrase("volume", 3.0, "en") == "the loudness is clearly louder"
    assert phrase("speed", -1.2, "zh") == "语速略慢"


def turns(*feats: FeatureRecord) -> dict[int, FeatureRecord]:
    return dict(enumerate(feats, start=1))


def test_auto_uses_asr_when_every_turn_is_clean():
    feats = turns(*[feat(spm=200, text_spm=210) for _ in range(3)])
    assert speed_key(feats) == ("spm", (), {})


def test_auto_switches_whole_sample_to_text_when_one_turn_is_unreliable():
    feats = turns(
        feat(spm=200, text_spm=210),
        feat(["asr_repetition"], spm=900, text_spm=230),
        feat(spm=250, text_spm=260),
    )
    assert speed_key(feats) == ("text_spm", ("speed_from_text",), {})
    # an empty transcript has no ASR rate at all
    feats = turns(feat(text_spm=210), feat(spm=220, text_spm=230), feat(spm=250, text_spm=260))
    assert speed_key(feats)[0] == "text_spm"


def test_a_doubtful_transcript_without_a_text_channel_is_unscored():
    """A flag that is counted but still scores protects nothing: the doubtful turn has no
    speed score, with its reason, and the clean turns keep theirs."""
    feats = turns(feat(["asr_repetition"], spm=900), feat(spm=220), feat(spm=250))
    assert speed_key(feats) == ("spm", (), {1: "asr_repetition"})
    vals, _ = dimension("speed").turn_values(None, feats, ScoreContext())
    assert vals[1].startswith("unscored: doubtful transcript") and "asr_repetition" in vals[1]
    assert vals[2] == 220 and vals[3] == 250
    for flag in (
        "asr_low_confidence",
        "asr_redecoded_unconfirmed",
        "asr_unsure",
        "asr_wrong_script",
        "asr_implausible_rate",
    ):
        feats[1] = feat([flag], spm=900)
        assert isinstance(dimension("speed").turn_values(None, feats, ScoreContext())[0][1], str)
    # a re-decode alone is no doubt: whether Whisper's first pass was unsure depends on the CPU
    feats[1] = feat(["asr_redecoded"], spm=240)
    assert dimension("speed").turn_values(None, feats, ScoreContext())[0][1] == 240
    # speech in another language than declared: the transcript is a translation
    feats[1] = feat(["language_mismatch"], spm=240)
    reason = dimension("speed").turn_values(None, feats, ScoreContext())[0][1]
    assert isinstance(reason, str) and "another language" in reason


def test_a_transcript_faithful_to_the_text_channel_is_vouched_for():
    feats = turns(
        feat(["asr_repetition"], spm=200, text_spm=205, asr_text_er=0.1),
        feat(spm=220, text_spm=230, asr_text_er=0.05),
    )
    assert speed_key(feats) == ("spm", (), {})


def test_turns_that_say_the_same_words_share_one_count_so_their_change_is_a_span_ratio():
    """The neutral row on Piper speech: one text read three times at the same pace, and Whisper
    base counted 34, 31 and 35 syllables, a +13% "change" from turn 2 to 3 by the transcripts.
    The audio says the same words (low DTW cost), so the three turns share one count (the median
    of the undoubted ones) and each change is the ratio of the speech spans, under ``auto`` and
    under ``asr`` alike: no transcript enters it."""
    from stylebench.metrics.dims.base import Shared
    from stylebench.metrics.dims.speed import speed_plan

    same = {"dtw_cost_prev": 0.8}
    feats = turns(
        feat(spm=278.5, syllables=34, span_s=7.32, text_spm=278.5, text_syllables=34),
        feat(spm=252.9, syllables=31, span_s=7.35, text_spm=277.3, text_syllables=34, **same),
        feat(spm=286.7, syllables=35, span_s=7.33, text_spm=278.5, text_syllables=34, **same),
    )
    for source in ("auto", "asr"):
        assert speed_key(feats, source) == ("spm", (), {})
        vals, extra = dimension("speed").turn_values(
            None, feats, ScoreContext.of(speed_source=source)
        )
        assert extra == () and all(isinstance(v, Shared) for v in vals.values())
        assert {v.turns for v in vals.values()} == {(1, 2, 3)}
        assert {v.cross_error for v in vals.values()} == {None}
        change = perceptual_change("speed", vals[2].value, vals[3].value)
        assert change == pytest.approx(100 * (7.35 / 7.33 - 1))  # the spans, not 31 -> 35
        assert vals[1].value == pytest.approx(34 * 60 / 7.32)  # the count shared: the median
    # a transcript doubt does not block a change between the same words: the count cancels
    feats[2] = feat(["asr_repetition"], spm=900, syllables=110, span_s=7.35, **same)
    vals, _ = dimension("speed").turn_values(None, feats, ScoreContext.of(speed_source="asr"))
    assert all(isinstance(v, Shared) for v in vals.values())
    assert perceptual_change("speed", vals[1].value, vals[2].value) == pytest.approx(
        100 * (7.32 / 7.35 - 1)
    )
    assert speed_plan(feats, "asr").counts[(1, 2, 3)].count == 34.5  # turns 1 and 3 only


def test_a_doubtful_count_is_compared_only_within_the_turns_that_share_it():
    """Turns 1 and 2 say the same words, turn 3 others. The change 1-2 is their span ratio
    whatever the transcripts say; the change 2-3 needs both runs' counts, so a run whose
    transcripts are all doubtful (or disagree over the same words) is not compared with turn 3,
    and the text channel scores the sample where it can."""
    from stylebench.metrics.dims.base import Shared

    same, other = {"dtw_cost_prev": 0.8}, {"dtw_cost_prev": 2.6}
    feats = turns(
        feat(["asr_unsure"], spm=200, syllables=20, span_s=6.0),
        feat(["asr_unsure"], spm=170, syllables=17, span_s=5.0, **same),
        feat(spm=240, syllables=24, span_s=6.0, **other),
    )
    vals, _ = dimension("speed").turn_values(None, feats, ScoreContext.of(speed_source="asr"))
    assert isinstance(vals[1], Shared) and vals[1].turns == (1, 2)
    assert vals[1].cross_error is not None and "asr_unsure" in vals[1].cross_error
    assert perceptual_change("speed", vals[1].value, vals[2].value) == pytest.approx(20.0)
    assert vals[3] == 240
    assert speed_key(feats, "asr")[2] == {1: "asr_unsure", 2: "asr_unsure"}
    # two undoubted transcripts that count 20 and 17 over the same words: the ASR changed one
    feats[1] = feat(spm=200, syllables=20, span_s=6.0)
    feats[2] = feat(spm=204, syllables=17, span_s=5.0, **same)
    vals, _ = dimension("speed").turn_values(None, feats, ScoreContext.of(speed_source="asr"))
    assert "count_changed_on_same_words" in vals[2].cross_error
    # a plausible text channel on every turn counts the sample instead (one estimator)
    texts = (
        {"text_spm": 200.0, "text_syllables": 20.0},
        {"text_spm": 240.0, "text_syllables": 20.0},
    )
    feats[1].values.update(texts[0])
    feats[2].values.update(texts[1])
    feats[3].values.update(text_spm=250.0, text_syllables=25.0)
    vals, extra = dimension("speed").turn_values(None, feats, ScoreContext())
    assert extra == ("speed_from_text",)
    assert vals[1].cross_error is None and vals[1].value == pytest.approx(200.0)
    assert vals[3] == 250.0
    # a faithful transcript corroborates its text, so a nuclei count that disagrees with the
    # text (smooth synthetic speech has few intensity peaks) does not rule the text out; an
    # uncorroborated text with that flag, or a text in the wrong script, does
    turn3 = {**feats[3].values}
    feats[3] = feat(["text_nuclei_mismatch"], asr_text_er=0.2, **turn3)
    assert dimension("speed").turn_values(None, feats, ScoreContext())[1] == ("speed_from_text",)
    feats[3] = feat(["text_nuclei_mismatch"], asr_text_er=0.5, **turn3)
    assert dimension("speed").turn_values(None, feats, ScoreContext())[1] == ()
    feats[3] = feat(["text_wrong_script"], asr_text_er=0.2, **turn3)
    assert dimension("speed").turn_values(None, feats, ScoreContext())[1] == ()


def test_a_turn_whose_syllables_per_nucleus_ratio_jumps_is_unscored():
    """The ASR-independent cross-check: a transcript loop multiplies the syllables an intensity
    peak carries; the same voice keeps that ratio across turns."""
    feats = turns(
        feat(spm=200, syllables=40, nuclei=30),
        feat(spm=600, syllables=130, nuclei=33),  # the ASR looped: 3.9 syllables per peak
        feat(spm=210, syllables=42, nuclei=29),
    )
    assert speed_key(feats, "asr")[2] == {2: "asr_nuclei_outlier"}
    feats[2] = feat(spm=260, syllables=44, nuclei=26)  # a tempo change keeps the ratio near
    assert speed_key(feats, "asr")[2] == {}


def test_explicit_sources():
    assert speed_key({}, "asr") == ("spm", (), {})
    assert speed_key({}, "nuclei") == ("nuclei_spm", ("speed_from_nuclei",), {})
    for bad in ("magic", "aardvark", "ASR"):
        with pytest.raises(ValueError, match="speed source"):
            speed_key({}, bad)


def test_a_transcript_and_text_channel_that_disagree_leave_the_turn_unscored():
    clean = turns(*[feat(spm=200, text_spm=210, asr_text_er=0.1) for _ in range(3)])
    assert speed_key(clean) == ("spm", (), {})
    garbled = {**clean, 3: feat(spm=200, text_spm=210, asr_text_er=0.45)}
    # nothing tells which of the two is wrong: neither scores the turn, under auto or asr
    assert speed_key(garbled) == ("spm", (), {3: "asr_text_mismatch"})
    assert speed_key(garbled, max_error=0.5) == ("spm", (), {})  # the limit is the caller's
    assert speed_key(garbled, "asr") == ("spm", (), {3: "asr_text_mismatch"})


def test_a_text_channel_counting_the_transcripts_syllables_scores_the_sample():
    # Whisper base on espeak-ng: WER 0.57 on one turn, yet 31 syllables for a text of 32; the
    # text scores every turn, so the transcripts' count jitter (33 -> 31) does not fake a change
    ok = turns(
        feat(spm=230, text_spm=224, asr_text_er=0.2, syllables=33, text_syllables=32),
        feat(spm=212, text_spm=219, asr_text_er=0.57, syllables=31, text_syllables=32),
        feat(spm=220, text_spm=222, asr_text_er=0.1, syllables=32, text_syllables=32),
    )
    assert speed_key(ok) == ("text_spm", ("speed_from_text",), {})
    # the counts differ by 2 of 5: nothing tells which channel is right, the turn is unscored
    off = {**ok, 2: feat(spm=200, text_spm=150, asr_text_er=1.0, syllables=7, text_syllables=5)}
    assert speed_key(off) == ("spm", (), {2: "asr_text_mismatch"})
    # a text channel that is itself implausible corroborates nothing
    flagged = ("text_nuclei_mismatch",)
    bad = {**ok, 2: feat(flagged, spm=212, asr_text_er=0.57, syllables=31, text_syllables=32)}
    assert speed_key(bad) == ("spm", (), {2: "asr_text_mismatch"})


def test_auto_switches_to_text_when_an_asr_side_test_doubts_the_transcript():
    looped = turns(
        feat(spm=200, text_spm=210),
        feat(spm=900, text_spm=220, flags=("asr_repetition",)),
        feat(spm=205, text_spm=215),
    )
    assert speed_key(looped) == ("text_spm", ("speed_from_text",), {})
    # a text channel that does not match the audio's nuclei count cannot stand in
    bad_text = {
        **looped,
        2: feat(spm=900, text_spm=220, flags=("asr_repetition", "text_nuclei_mismatch")),
    }
    assert speed_key(bad_text) == ("spm", (), {2: "asr_repetition"})


def test_score_context_defaults_are_the_config_defaults():
    from stylebench.config import make_config
    from stylebench.metrics.dims.base import setting_defaults
    from stylebench.pipeline.score_config import score_context

    m = make_config().measure
    defaults = setting_defaults()
    assert set(defaults) == {"pitch_stat", "speed_source", "transcript_max_error"}
    assert defaults == {name: getattr(m, name) for name in defaults}
    assert all(ScoreContext().get(n) == score_context(make_config()).get(n) for n in defaults)
    assert score_context(make_config(pitch_stat="median")).get("pitch_stat") == "median"


def test_score_context_carries_settings_by_name_and_refuses_unknown_ones():
    ctx = ScoreContext.of(pitch_stat="mean")
    assert ctx.get("pitch_stat") == "mean" and ctx.get("speed_source") == "auto"
    with pytest.raises(ValueError, match="no dimension has the setting"):
        ScoreContext.of(pitch_sat="mean")
    with pytest.raises(KeyError):
        ScoreContext().get("pitch_sat")


def _glide(sr: int = 16000, seconds: float = 2.0, lo_st: float = -3.0, hi_st: float = 3.0):
    """A harmonic signal whose F0 sweeps 200 Hz * 2**(st/12) linearly from lo_st to hi_st."""
    import numpy as np

    t = np.arange(int(sr * seconds)) / sr
    f0 = 200.0 * 2.0 ** ((lo_st + (hi_st - lo_st) * t / seconds) / 12.0)
    phase = 2 * np.pi * np.cumsum(f0) / sr
    wave = sum(np.sin(k * phase) / k for k in range(1, 6))
    return (0.3 * wave / np.max(np.abs(wave))).astype(np.float32), sr


def test_expressiveness_is_the_10_90_percentile_f0_range_in_semitones():
    import numpy as np

    from stylebench.metrics.dims.expressiveness import f0_range_st

    # frames spread evenly over 6 st: the 10th-90th percentile distance is 0.8 * 6 = 4.8 st
    f0 = 200.0 * 2.0 ** (np.linspace(-3.0, 3.0, 1001) / 12.0)
    assert f0_range_st(np.concatenate([f0, np.zeros(300)])) == pytest.approx(4.8, abs=1e-6)
    assert f0_range_st(f0 * 1.5) == pytest.approx(4.8, abs=1e-6)  # a pitch shift keeps the range
    with pytest.raises(ValueError, match="voiced frames"):
        f0_range_st(np.zeros(100))
    d = dimension("expressiveness")
    assert (d.unit, d.paper, d.in_all, d.threshold_field) == (
        "st",
        False,
        False,
        "expressiveness_st",
    )
    assert d.change(4.0, 6.5) == pytest.approx(2.5) and d.relative(4.0, 6.0) == pytest.approx(50.0)
    values, _ = d.turn_values(
        None, turns(feat([], f0_range_st=4.0), feat([], f0_range_st=0.0)), CTX
    )
    assert values == {1: 4.0, 2: "pitch range is 0 (monotone)"}
    blocked, _ = d.turn_values(None, turns(feat(["f0_extractors_disagree"], f0_range_st=4.0)), CTX)
    assert "agree on too few" in blocked[1]


def test_pitch_range_of_a_synthetic_glide_and_its_transform():
    """A 6 st glide measures 4.8 st through the features stage's trackers; the reference
    model's transform widens and narrows it by its step."""
    import numpy as np

    from stylebench.metrics import pitch
    from stylebench.metrics.dims.expressiveness import f0_range_st, scale_f0_range
    from stylebench.model_wrappers.embedded.tts import step_style

    def measured(wave, sr):
        track, praat = pitch.f0_track(wave, sr), pitch.praat_f0_track(wave, sr)
        agreed = pitch.agreed_frames(track, praat, edge=pitch.EDGE_FRAMES)
        return f0_range_st(np.where(agreed, track, 0.0))

    wave, sr = _glide()
    base = measured(wave, sr)
    assert base == pytest.approx(4.8, abs=0.3)
    up, down = (
        step_style("expressiveness", "intensify", 1),
        step_style("expressiveness", "attenuate", 2),
    )
    assert (up.extra, down.extra) == ((("f0_range_pct", 40.0),), (("f0_range_pct", -80.0),))
    two_up = step_style("expressiveness", "intensify", 2).extra[0][1]
    assert two_up == pytest.approx(96.0)  # widening compounds: 1.4**2
    assert not up.is_neutral and Style(**down.shown()) == down  # a record's form gives it back
    # the range scales by 1 + pct/100 (a 4.8 st glide: 6.72 st wider, 0.96 st narrower)
    wider = measured(dimension("expressiveness").transform(wave, sr, 40.0), sr)
    narrower = measured(scale_f0_range(wave, sr, -80.0), sr)
    assert wider / base == pytest.approx(1.4, abs=0.1)
    assert narrower / base == pytest.approx(0.2, abs=0.1)


def test_synth_knobs_are_the_style_fields_every_synthesiser_implements():
    from dataclasses import fields

    from stylebench.metrics.dims.base import SYNTH_KNOBS, Dimension, all_dims, owner_of_knob

    assert SYNTH_KNOBS == tuple(f.name for f in fields(Style) if f.name != "extra")
    for d in all_dims():  # a step on any other knob is the dimension's own transform
        if d.step is not None and d.step[0] not in SYNTH_KNOBS:
            assert owner_of_knob(d.step[0]) is d
            assert type(d).transform is not Dimension.transform
    with pytest.raises(ValueError, match="no dimension"):
        owner_of_knob("vibrato_hz")


def test_a_zero_step_is_no_knob_so_turn_one_is_the_synthesisers_own_rendering():
    from stylebench.model_wrappers.embedded.tts import step_style

    neutral = step_style("expressiveness", "intensify", 0)
    assert neutral.extra == () and neutral.is_neutral and "extra" not in neutral.shown()
    assert Style(extra={"f0_range_pct": -40.0}) == Style(extra=[["f0_range_pct", -40]])


def test_an_extension_dimension_is_named_only_in_its_module_and_the_records_literal():
    """What docs/architecture.md promises for adding a dimension: every other module loops over
    the registry. Any code naming an extension dimension outside ``metrics/dims/`` (and the
    base layer's ``records.DIMS`` literal) is a per-dimension fact owned in the wrong place."""
    from pathlib import Path

    from stylebench.metrics.dims.base import all_dims

    root = Path(__file__).resolve().parents[1]
    allowed = {root / "stylebench" / "records.py"}
    names = [d.name for d in all_dims() if not d.paper]
    assert names, "no extension dimension to check"
    found = []
    for pkg in ("stylebench", "metrics", "model_wrappers", "synth", "dialogues"):
        for path in (root / pkg).rglob("*.py"):
            if path in allowed or (root / "metrics" / "dims") in path.parents:
                continue
            text = path.read_text(encoding="utf-8")
            found += [f"{path.relative_to(root)}: {n}" for n in names if n in text]
    assert not found, found


def test_the_run_note_counts_turn_pairs_by_route():
    """Pair 1-2 said the same words (scored by the aligned tempo), 2-3 other words (counts),
    and a sample whose shared count is doubtful has its cross pair unscored."""
    from stylebench.metrics.dims.speed import pair_routes
    from stylebench.scoring.cells import TurnScore

    def t(sid, k, v=200.0, same=(), cross=None):
        return TurnScore(sid, "speed", "intensify", "en", k, v, None, (), "", same, cross)

    turns = [t("a", 1, same=(1, 2)), t("a", 2, same=(1, 2)), t("a", 3)]
    turns += [t("b", 1, same=(1, 2), cross="doubt"), t("b", 2, same=(1, 2), cross="doubt")]
    turns += [t("b", 3)]
    assert pair_routes(turns) == (2, 1, 1)
    (_, routes) = dimension("speed").run_notes(ScoreContext(), turns)
    assert "2 turn pairs say the same words" in routes and "1 say other words" in routes
    assert "1 unscored" in routes


def test_a_turn_joins_the_run_its_alignment_was_made_against():
    """Turn 2 failed, so turn 3 was aligned against turn 1 (dtw_turn_prev 1): the two share a
    count. A turn aligned against a turn that is not the one before it in the scored set, or a
    turn that is too short, starts its own run."""
    from stylebench.metrics.dims.speed import same_words_runs

    def f(**v):
        return feat(spm=200.0, syllables=20.0, span_s=6.0, **v)

    assert same_words_runs({1: f(), 3: f(dtw_cost_prev=0.9, dtw_turn_prev=1.0)}) == [(1, 3)]
    assert same_words_runs({1: f(), 3: f(dtw_cost_prev=0.9, dtw_turn_prev=2.0)}) == [(1,), (3,)]
    three = {1: f(), 2: f(dtw_cost_prev=0.9), 3: f(dtw_cost_prev=2.5)}
    assert same_words_runs(three) == [(1, 2), (3,)]
    assert same_words_runs(three, alone={2}) == [(1,), (2,), (3,)]


def test_same_words_without_a_transcript_take_the_text_channel_count():
    """``--asr none``: no transcript counts anything, so a run of turns that say the same words
    takes its shared count from the text channel (``speed_from_text``); its changes stay the
    aligned tempo. Under ``--speed-source asr`` the same sample is unscored, with why."""

    def f(**v):
        return feat(text_spm=180.0, text_syllables=18.0, span_s=6.0, **v)

    turns = {1: f(), 2: f(dtw_cost_prev=0.9, dtw_tempo_prev=0.8)}
    vals, flags = dimension("speed").turn_values(None, turns, CTX)
    assert flags == ("speed_from_text",)
    assert plain(vals[1]) == pytest.approx(180.0) and plain(vals[2]) == pytest.approx(225.0)
    vals, _ = dimension("speed").turn_values(None, turns, ScoreContext.of(speed_source="asr"))
    assert all(isinstance(v, str) and "not measured" in v for v in vals.values()), vals
