"""Integrated loudness (ITU-R BS.1770-4) on signals with known answers and against FFmpeg's
``ebur128`` filter, and the ``loudness`` stage through a run, its report and a comparison."""

from __future__ import annotations

import json
import re
import shutil
import subprocess

import numpy as np
import pytest

from stylebench.metrics.loudness import integrated_loudness, k_weighting


def _tone(level_db: float, seconds: float, sr: int, hz: float = 997.0) -> np.ndarray:
    t = np.arange(int(seconds * sr)) / sr
    return 10.0 ** (level_db / 20.0) * np.sin(2 * np.pi * hz * t)


def test_the_k_weighting_at_48_khz_is_the_recommendations_table():
    # BS.1770-4, Tables 1 and 2 (the pre-filter and the RLB high-pass at 48 kHz)
    (b1, a1), (b2, a2) = k_weighting(48000)
    np.testing.assert_allclose(
        b1, [1.53512485958697, -2.69169618940638, 1.19839281085285], atol=1e-9
    )
    np.testing.assert_allclose(a1, [1.0, -1.69065929318241, 0.73248077421585], atol=1e-9)
    np.testing.assert_allclose(b2, [1.0, -2.0, 1.0], atol=1e-12)
    np.testing.assert_allclose(a2, [1.0, -1.99004745483398, 0.99007225036621], atol=1e-9)


@pytest.mark.parametrize("sr", [16000, 22050, 44100, 48000])
def test_a_full_scale_997_hz_sine_reads_minus_3_01(sr):
    # the recommendation's calibration: 0 dBFS at 997 Hz in one channel is -3.01 LKFS; away
    # from 48 kHz the bilinear design moves the shelf's gain at 997 Hz by at most 0.04 dB
    assert integrated_loudness(_tone(0.0, 5.0, sr), sr) == pytest.approx(-3.01, abs=0.05)


def test_gain_moves_loudness_by_exactly_its_decibels():
    sr = 22050
    x = _tone(-18.0, 3.0, sr, hz=220.0) + _tone(-24.0, 3.0, sr, hz=2500.0)
    base = integrated_loudness(x, sr)
    assert integrated_loudness(2.0 * x, sr) - base == pytest.approx(20 * np.log10(2.0), abs=1e-9)


def test_the_gates_leave_out_silence_and_a_part_20_lu_down():
    sr = 16000
    loud = _tone(-20.0, 4.0, sr)
    alone = integrated_loudness(loud, sr)

    def padded(seconds):
        return np.concatenate([np.zeros(seconds * sr), loud, np.zeros(seconds * sr)])

    # the absolute gate: blocks of silence count for nothing, however many; the blocks that
    # straddle the tone's edges count as the recommendation has them (a little quieter)
    assert integrated_loudness(padded(3), sr) == pytest.approx(
        integrated_loudness(padded(1), sr), abs=1e-9
    )
    assert integrated_loudness(padded(3), sr) == pytest.approx(alone, abs=0.4)
    with_quiet = np.concatenate([loud, _tone(-40.0, 4.0, sr)])
    # the relative gate drops the quiet half's blocks (only the blocks that straddle the join,
    # 3 of 75, count): the mean power of every block would read about 3 dB lower
    assert integrated_loudness(with_quiet, sr) == pytest.approx(alone, abs=0.25)
    everything = -0.691 + 10 * np.log10(np.mean(np.concatenate([loud, _tone(-40.0, 4.0, sr)]) ** 2))
    assert everything < alone - 2.5


def test_no_block_above_the_absolute_gate_gives_none():
    sr = 16000
    assert integrated_loudness(np.zeros(2 * sr), sr) is None
    assert integrated_loudness(_tone(-90.0, 2.0, sr), sr) is None
    assert integrated_loudness(_tone(-20.0, 0.3, sr), sr) is None  # shorter than one block


def test_bad_input_raises():
    with pytest.raises(ValueError):
        integrated_loudness(np.array([np.nan, 0.0, 0.1]), 16000)
    with pytest.raises(ValueError):
        integrated_loudness(np.zeros(16000), 0)


def _ffmpeg_lufs(path) -> float:
    # FFmpeg 5 has no framelog=quiet; verbose keeps the per-frame lines out of the default log
    cmd = ["ffmpeg", "-nostdin", "-hide_banner", "-nostats", "-i", str(path)]
    cmd += ["-af", "ebur128=framelog=verbose", "-f", "null", "-"]
    res = subprocess.run(cmd, capture_output=True, text=True, check=True)
    return float(re.findall(r"I:\s+(-?\d+\.\d)\s+LUFS", res.stderr)[-1])


@pytest.mark.skipif(shutil.which("ffmpeg") is None, reason="ffmpeg not installed (make setup)")
def test_speech_reads_as_ffmpeg_ebur128_reads_it(tmp_path):
    from stylebench.audio import load_audio, write_wav
    from stylebench.synth.base import Style
    from stylebench.synth.espeak import EspeakSynth, voices_for

    synth = EspeakSynth()
    texts = {
        "en": "The bridge opens at noon, and the ferry leaves an hour later.",
        "zh": "明天早上八点，我们在图书馆门口见面。",
    }
    for i, (lang, text) in enumerate(texts.items()):
        audio = synth.synthesize(text, voices_for(lang)[0], Style(gain_db=-6.0 * i))
        path = tmp_path / f"{lang}.wav"
        write_wav(path, audio.wave, audio.sr)
        ours = integrated_loudness(*load_audio(path))
        # FFmpeg measures at 48 kHz after its own resampler and prints one decimal
        assert ours == pytest.approx(_ffmpeg_lufs(path), abs=0.1), lang


# -- the stage, through a run -------------------------------------------------------------------


@pytest.fixture(scope="module")
def loud_runs(small_set, tmp_path_factory):
    from stylebench.commands.runs import run as run_pipeline
    from stylebench.config import make_config

    out = tmp_path_factory.mktemp("loudness_runs")
    roots = []
    for model in ("reference", "neutral"):
        cfg = make_config(
            model=model,
            dim="volume",
            lang="en",
            limit=2,
            asr="none",
            vad="energy",
            judge="offline",
            n_boot=50,
            quality=False,
            loudness=True,
            dialogues=str(small_set),
            out=str(out),
        )
        roots.append(run_pipeline(cfg, progress=False).store.root)
    return roots


def test_the_reference_steps_4_lu_a_turn_and_the_volume_score_agrees(loud_runs):
    rep = json.loads((loud_runs[0] / "report.json").read_text(encoding="utf-8"))
    block = rep["loudness"]
    assert block["n_ok"] == block["n_total"] == 12
    means = {(r["group"], r["turn"]): r["mean_lufs"] for r in block["turns"]}
    for direction, step in (("intensify", 4.0), ("attenuate", -4.0)):
        assert means[(direction, 2)] - means[(direction, 1)] == pytest.approx(step, abs=0.02)
        assert means[(direction, 3)] - means[(direction, 2)] == pytest.approx(step, abs=0.02)
    assert block["volume_agreement"] == {"n_pairs": 8, "n_moved": 8, "n_agree": 8, "percent": 100.0}
    md = (loud_runs[0] / "report.md").read_text(encoding="utf-8")
    assert "## Loudness (ITU-R BS.1770-4)" in md and "on 8/8 (100.0 %)" in md
    # the report's layout: the block after quality, the section after quality's
    assert list(rep).index("quality") < list(rep).index("loudness")
    assert md.index("## Speech quality") < md.index("## Loudness") < md.index("## Relevance")


def test_neutral_holds_its_loudness(loud_runs):
    block = json.loads((loud_runs[1] / "report.json").read_text(encoding="utf-8"))["loudness"]
    means = {(r["group"], r["turn"]): r["mean_lufs"] for r in block["turns"]}
    assert max(abs(means[("all", t)] - means[("all", 1)]) for t in (2, 3)) < 1.0
    assert block["volume_agreement"]["n_moved"] == 0


def test_rescoring_reuses_the_records_and_off_drops_the_block(loud_runs):
    from stylebench.commands.runs import rescore

    again = rescore(loud_runs[0], {}, progress=False)
    assert again.counts["loudness"] == {"ok": 0, "error": 0, "skipped": 12}
    off = rescore(loud_runs[0], {"loudness": False}, progress=False)
    assert "loudness" not in off.report and "loudness" not in off.counts
    on = rescore(loud_runs[0], {"loudness": True}, progress=False)  # the records stayed
    assert on.counts["loudness"] == {"ok": 0, "error": 0, "skipped": 12}
    assert on.report["loudness"] == again.report["loudness"]


def test_compare_shows_loudness_per_model(loud_runs):
    from stylebench.compare.build import compare_runs
    from stylebench.compare.load import load_run
    from stylebench.compare.md import render_md

    res = compare_runs([load_run(r) for r in loud_runs], n_boot=50)
    rows = {r["model"]: r for r in res["loudness"]}
    assert rows["reference"]["volume_agreement"]["percent"] == 100.0
    assert rows["neutral"]["turn_1"] == pytest.approx(rows["neutral"]["turn_3"], abs=1.0)
    keys = list(res)
    assert keys.index("quality") < keys.index("loudness") < keys.index("notes")
    md = render_md(res)
    assert md.index("## Speech quality") < md.index("## Loudness per model") < md.index("## Cells")


@pytest.fixture(scope="module")
def gain_files(tmp_path_factory):
    from audio_files import make_files

    return make_files(tmp_path_factory.mktemp("loudfiles"))


def test_measure_and_pairs_give_lufs_per_file_and_the_lu_change_per_pair(gain_files, capsys):
    """``--loudness`` on files: each file's integrated loudness, as the loudness stage measures a
    run's replies; on pairs, b's change from a. A x2 copy is +6.02 LU louder, a x0.5 copy
    6.02 LU quieter; without the flag nothing is measured."""
    from audio_files import GAINS, db

    import stylebench
    from stylebench.cli import main

    names = ["speech.wav", "louder.wav", "quieter.wav", "tone.wav", "silent.wav"]
    rows = stylebench.measure(
        [gain_files / n for n in names], asr="none", loudness=True, quality=False
    )
    lufs = dict(zip(names, rows["loudness_lufs"], strict=True))
    assert lufs["louder.wav"] - lufs["speech.wav"] == pytest.approx(db(GAINS["louder"]), abs=0.01)
    assert lufs["quieter.wav"] - lufs["speech.wav"] == pytest.approx(db(GAINS["quieter"]), abs=0.01)
    assert lufs["tone.wav"] == pytest.approx(-3.01 - 20 * np.log10(1 / 0.3) + 0.7, abs=1.0)
    assert lufs["silent.wav"] is None or np.isnan(lufs["silent.wav"])  # no block above -70 LUFS
    plain = stylebench.measure([gain_files / "speech.wav"], asr="none")
    assert plain["loudness_lufs"].isna().all()
    table = gain_files / "loud_pairs.csv"
    table.write_text("id,a,b,dim,direction\nup,speech.wav,louder.wav,volume,intensify\n")
    pairs = stylebench.pairs(table, asr="none", loudness=True, n_boot=50).pairs
    assert pairs["loudness_change_lu"][0] == pytest.approx(db(GAINS["louder"]), abs=0.01)
    # the pools hold no loudness: a table without the pairs would drop it, so that is refused
    args = ["--no-progress", "pairs", str(table), "--loudness", "--asr", "none"]
    assert main(args) == 2
    assert "--per-pair" in capsys.readouterr().err
    assert main([*args, "--per-pair"]) == 0
    assert "loudness LU" in capsys.readouterr().out
