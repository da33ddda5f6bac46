"""Transcript fidelity (WER / CER against the model's text channel) on hand-counted cases."""

from __future__ import annotations

import math

import pytest

from stylebench.metrics.fidelity import (
    edit_distance,
    edit_distance_reference,
    is_faithful,
    tokens,
    transcript_error_rate,
)


def test_edit_distance_known_answers():
    assert edit_distance([], []) == 0
    assert edit_distance(list("kitten"), list("sitting")) == 3
    assert edit_distance(list("abc"), []) == 3
    assert edit_distance([], list("ab")) == 2


def test_fast_edit_distance_matches_the_textbook_programme():
    import random

    rng = random.Random(7)
    for _ in range(200):
        a = [
            rng.choice(["the", "a", "cat", "sat", "我", "你"]) for _ in range(rng.randrange(0, 25))
        ]
        b = [
            rng.choice(["the", "a", "cat", "sat", "我", "你"]) for _ in range(rng.randrange(0, 25))
        ]
        assert edit_distance(a, b) == edit_distance_reference(a, b)


def test_english_wer_ignores_case_punctuation_and_digit_spelling():
    text = "The train leaves at 9 o'clock, from platform two."
    assert (
        transcript_error_rate(text, "the train leaves at nine o'clock from platform 2", "en") == 0.0
    )
    # one substitution (train -> rain) and one deletion (two) over 9 reference words
    assert transcript_error_rate(
        text, "The rain leaves at nine o'clock from platform", "en"
    ) == pytest.approx(2 / 9)


def test_mandarin_counts_syllables_of_han_characters_only():
    text = "好的，一年有三百六十五天。"
    assert tokens(text, "zh") == [
        "hao",
        "de",
        "yi",
        "nian",
        "you",
        "san",
        "bai",
        "liu",
        "shi",
        "wu",
        "tian",
    ]
    assert transcript_error_rate(text, "好的 一年有三百六十五天", "zh") == 0.0
    # garbled: 2 substituted syllables out of 11
    assert transcript_error_rate(text, "好的一天有三百六十五年", "zh") == pytest.approx(2 / 11)
    # a repetition loop makes the rate exceed 1
    assert transcript_error_rate("天气很好", "天气很好" * 3, "zh") == pytest.approx(2.0)


def test_nothing_to_compare_is_nan_and_counts_as_faithful():
    assert math.isnan(transcript_error_rate("...", "anything", "en"))
    assert is_faithful(math.nan) and is_faithful(0.3) and not is_faithful(0.31)
    assert is_faithful(0.45, max_error=0.5)
    with pytest.raises(ValueError, match="en and zh"):
        tokens("bonjour", "fr")


def test_mandarin_is_compared_in_simplified_characters():
    # Whisper often writes traditional characters: the same words are no error
    assert transcript_error_rate("水在一百摄氏度时沸腾。", "水在一百攝氏度時沸騰", "zh") == 0.0
    assert transcript_error_rate("这是常见的现象", "這是常見的現象", "zh") == 0.0
    assert transcript_error_rate("这是常见的现象", "這是罕見的現象", "zh") == pytest.approx(1 / 7)


def test_a_homophone_is_the_syllable_that_was_said():
    """Whisper base wrote 仙人掌 (xian ren zhang) as 先人長 and 耐旱 as 耐汗 (same syllables, other
    characters): no syllable error, and the syllable count the speed score uses is unchanged. A
    syllable heard wrong (两 liang written as 三 san) still counts."""
    said = "仙人掌比较耐旱，一般两到三周浇一次水。"
    assert transcript_error_rate(said, "先人長比較耐汗,一般兩到三周交一次水。", "zh") == 0.0
    assert transcript_error_rate(
        said, "先人長比較耐汗,一般三到三周交一次水。", "zh"
    ) == pytest.approx(1 / 17)
    assert tokens("我有3个", "zh") == ["wo", "you", "san", "ge"]  # a digit reads as its numeral


def test_counted_mandarin_digits_are_the_numerals_that_were_said():
    """Whisper writes a counted 一二三四 as "1 2 3 4" (a real gpt-4o reply): the same syllables."""
    assert transcript_error_rate("一二三四", "1 2 3 4", "zh") == 0.0
    assert transcript_error_rate("一二三四", "1 2 3 5", "zh") == pytest.approx(0.25)
    # a number of several digits still differs from its reading: 10 is yi ling, 十 is shi
    assert transcript_error_rate("十", "10", "zh") == pytest.approx(2.0)
