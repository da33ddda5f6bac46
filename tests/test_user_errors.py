"""Mistakes a person can make are user errors: one line naming the thing and the fix, exit 2, no
traceback and no internal-error log. Each case here ended in ``internal error ... please report
it`` (exit 1) or was accepted silently before (issue 34)."""

from __future__ import annotations

from pathlib import Path

import pytest

from stylebench.cli import main


@pytest.fixture(autouse=True)
def _own_cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("STYLEBENCH_CACHE", str(tmp_path / "cache"))


def cli(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str]:
    code = main(["--no-progress", *args])
    return code, capsys.readouterr().err


def one_line_user_error(code: int, err: str, tmp_path: Path, says: str) -> None:
    assert code == 2, err
    assert err.startswith("stylebench: error: ") and len(err.strip().splitlines()) == 1, err
    assert says in err, err
    assert "internal error" not in err and "Traceback" not in err
    assert not list((tmp_path / "cache").glob("errors/*.log")), "a user mistake wrote a bug log"


@pytest.mark.parametrize(
    ("args", "says"),
    [
        (["--synth", "espeak-ng", "--synth-arg", "voices=nope.json"], "built-in voices"),
        (["--langs", "xx"], "--langs: unknown"),
        (["--dims", "nonsense"], "--dims: unknown"),
        (["--emotions", "bored", "--dims", "emotion"], "--emotions: unknown"),
    ],
)
def test_build_dialogues_mistakes(args, says, tmp_path, capsys):
    code, err = cli(capsys, "build-dialogues", "--out", str(tmp_path / "set"), *args)
    one_line_user_error(code, err, tmp_path, says)
    assert not (tmp_path / "set").exists()


@pytest.mark.parametrize("flag", ["--per-cell", "--voices-per-lang", "--jobs"])
@pytest.mark.parametrize("value", ["-3", "0"])
def test_counts_below_one_are_refused(flag, value, tmp_path, capsys):
    code, err = cli(capsys, "build-dialogues", "--out", str(tmp_path / "set"), flag, value)
    assert code == 2 and flag in err and "Traceback" not in err, err
    assert not (tmp_path / "set").exists()


def test_build_dialogues_out_that_exists_or_cannot_be_made(tmp_path, capsys):
    (tmp_path / "afile").write_text("x")
    (tmp_path / "adir").mkdir()
    for name, says in (("afile", "already there"), ("adir", "already there")):
        code, err = cli(capsys, "build-dialogues", "--out", str(tmp_path / name))
        one_line_user_error(code, err, tmp_path, says)
    code, err = cli(capsys, "build-dialogues", "--out", "/proc/stylebench-set")
    one_line_user_error(code, err, tmp_path, "/proc")


@pytest.mark.parametrize(
    ("text", "suffix", "says"),
    [
        ("limit = [\n", ".toml", "is not valid TOML"),
        ('{"limit": ', ".json", "is not valid JSON"),
        ('limit = "one"\n', ".toml", "'limit' must be"),
        ('["limit"]\n', ".json", "must hold a table of settings"),
        ('[judge]\nmrd_threshold = "high"\n', ".toml", "'mrd_threshold' must be"),
    ],
)
def test_bad_config_files_name_the_file(text, suffix, says, tmp_path, capsys):
    path = tmp_path / f"run{suffix}"
    path.write_text(text)
    code, err = cli(capsys, "run", "--model", "reference", "--config", str(path))
    one_line_user_error(code, err, tmp_path, says)
    assert str(path) in err


@pytest.mark.parametrize(
    ("arg", "says"),
    [
        ("base_url=ftp://x", "base_url must start with http(s)://"),
        ("timeout_s=abc", "--model-arg timeout_s=abc must be a number"),
        ("retries=-1", "retries >= 0"),
        ("flavour=nope", "flavour must be one of"),
    ],
)
def test_bad_model_args_leave_no_run_folder(arg, says, small_set, tmp_path, capsys):
    out = tmp_path / "runs"
    code, err = cli(
        capsys,
        *("run", "--model", "openai-audio", "--model-arg", arg, "--dim", "pitch"),
        *("--dialogues", str(small_set), "--limit", "1", "--out", str(out), "--asr", "none"),
    )
    one_line_user_error(code, err, tmp_path, says)
    assert not out.exists() or not any(out.iterdir()), list(out.iterdir())


def test_run_out_that_cannot_be_made(small_set, tmp_path, capsys):
    code, err = cli(
        capsys,
        *("run", "--model", "neutral", "--dialogues", str(small_set), "--limit", "1"),
        *("--asr", "none", "--out", "/proc/stylebench-out"),
    )
    one_line_user_error(code, err, tmp_path, "cannot create the run folder")


def test_measure_names_what_is_wrong_with_each_file(tmp_path, capsys):
    (tmp_path / "adir").mkdir()
    (tmp_path / "empty.wav").write_bytes(b"")
    code = main(["measure", str(tmp_path / "adir"), str(tmp_path / "empty.wav"), "--asr", "none"])
    out = capsys.readouterr().out
    assert code == 0
    assert "is a folder, not an audio file" in out and "does not exist" not in out, out
    assert "audio file is empty" in out and "the model returned" not in out, out


def test_caption_eval_without_captions_names_the_fix(tmp_path, capsys, reference_run):
    code, err = cli(capsys, "caption-eval", str(reference_run[0].store.root))
    one_line_user_error(code, err, tmp_path, "has no ok captions")


# -- a flag that does nothing is refused (the caption, judge and probe options) ----------------
# Each refusal is one line naming the flag, what would ignore it and what to do, exit 2, before the
# run folder is made or any model loaded. Before, each of these ran (or re-scored) and ignored it,
# or refused it only after the model had answered every turn, its run folder left behind.

#: a run of the small set that reaches the checks in a second: one sample per cell, no ASR
RUN = ("run", "--model", "neutral", "--dim", "pitch", "--lang", "en", "--limit", "1")
RUN_TAIL = ("--asr", "none")
CAPTIONS_OFF = "--captioner none (the default: no reply is captioned) would ignore"
JUDGE_OFF = "--judge none (no relevance judge runs) would ignore"
PROBE_OFF = "--emotion-probe none (the default: the probe does not run) would ignore"


def run_cli(capsys, small_set, out, *args):
    return cli(capsys, *RUN, "--dialogues", str(small_set), "--out", str(out), *RUN_TAIL, *args)


def _stop_at_the_run_folder(monkeypatch):
    """Where the run folder would be made, the run stops with a line a test can recognise."""
    import stylebench.commands.runs as runs
    from stylebench.errors import BadValue

    def reached(*a, **k):
        raise BadValue("reached the run folder")

    monkeypatch.setattr(runs, "prepare_run_folder", reached)


@pytest.mark.parametrize(
    ("args", "says"),
    [
        (["--judge", "none", "--judge-url", "http://h:1/v1"], f"--judge-url: {JUDGE_OFF} it"),
        (["--judge", "none", "--judge-model", "m"], f"--judge-model: {JUDGE_OFF} it"),
        (["--judge", "none", "--judge-arg", "concurrency=2"], f"--judge-arg: {JUDGE_OFF} it"),
        (["--judge", "none", "--judge-prompt-srd", "/no/srd.txt"], "--judge-prompt-srd: --judge n"),
        (["--judge", "none", "--judge-prompt", "/no/dir"], f"--judge-prompt: {JUDGE_OFF} it"),
        (["--judge", "none", "--judge-input", "text"], f"--judge-input: {JUDGE_OFF} it"),
        (["--judge", "none", "--filter-mrd"], f"--filter-mrd: {JUDGE_OFF} it"),
        (["--judge", "none", "--mrd-threshold", "50"], f"--mrd-threshold: {JUDGE_OFF} it"),
        (["--judge", "none", "--no-judge-cache"], "--no-judge-cache: a run without a relevance"),
        (
            ["--judge", "openai", "--judge-model", "m", "--judge-input", "transcript"],
            "--judge-model: --judge-input transcript with --asr none (there are no "
            "transcripts to judge) would ignore it; drop --judge-model or pass --judge-input text",
        ),
        (
            ["--judge", "openai", "--judge-model", "m", "--judge-prompt", "/no/dir"]
            + ["--judge-prompt-srd", "/no/srd.txt", "--judge-prompt-mrd", "/no/mrd.txt"],
            "--judge-prompt: --judge-prompt-srd with --judge-prompt-mrd (both prompts named as "
            "files) would ignore it; drop --judge-prompt",
        ),
        (["--judge-url", "http://h:1/v1"], "the 'offline' judge takes no --judge-url; drop"),
        (
            ["--judge-model", "m"],
            "--judge-model: unknown offline judge model 'm'; use one of e5-small",
        ),
        (["--judge-prompt-srd", "/no/srd.txt"], "--judge-prompt-srd: the 'offline' judge uses no"),
        (
            ["--judge", "openai", "--judge-model", "m", "--judge-url", "ftp://x"],
            "--judge-url must start with http:// or https://",
        ),
        (["--caption-model", "m"], f"--caption-model: {CAPTIONS_OFF} it; drop --caption-model or"),
        (["--caption-url", "http://h:1/v1"], f"--caption-url: {CAPTIONS_OFF} it"),
        (["--caption-arg", "concurrency=2"], f"--caption-arg: {CAPTIONS_OFF} it"),
        (["--caption-prompt", "/no/dir"], f"--caption-prompt: {CAPTIONS_OFF} it"),
        (["--caption-judge", "openai"], f"--caption-judge: {CAPTIONS_OFF} it"),
        (["--caption-judge-model", "m"], f"--caption-judge-model: {CAPTIONS_OFF} it"),
        (["--caption-judge-prompt", "/no/c.txt"], f"--caption-judge-prompt: {CAPTIONS_OFF} it"),
        (["--caption-judge-arg", "concurrency=2"], f"--caption-judge-arg: {CAPTIONS_OFF} it"),
        (
            ["--captioner", "features", "--caption-prompt", "/no/dir"],
            "--caption-prompt: --captioner features (rule-based: it reads the measurements, no "
            "instruction) would ignore it",
        ),
        (["--captioner", "features", "--caption-url", "h"], "'features' captioner takes no --cap"),
        (
            ["--captioner", "features", "--caption-judge-model", "m"],
            "the 'lexicon' caption judge takes no --caption-judge-model",
        ),
        (
            ["--captioner", "features", "--caption-judge-prompt", "/no/c.txt"],
            "the 'lexicon' caption judge takes no --caption-judge-prompt",
        ),
        (
            ["--captioner", "features", "--caption-judge", "openai"],
            "the 'openai' caption judge needs --caption-judge-model",
        ),
        (
            ["--captioner", "features", "--caption-judge", "openai"]
            + ["--caption-judge-model", "m", "--caption-judge-prompt", "/no/c.txt"],
            "--caption-judge-prompt /no/c.txt does not exist",
        ),
        (
            ["--captioner", "openai", "--caption-url", "http://h:1/v1"],
            "the 'openai' captioner needs --caption-model",
        ),
        (
            ["--captioner", "openai", "--caption-model", "m", "--caption-url", "ftp://x"],
            "--caption-url must start with http:// or https://",
        ),
        (
            ["--captioner", "openai", "--caption-model", "m", "--caption-prompt", "/no/dir"],
            "--caption-prompt /no/dir: no pitch.txt there",
        ),
        (["--probe-model", "/no/probe"], f"--probe-model: {PROBE_OFF} it; drop --probe-model or"),
        (["--probe-delta", "0.1"], f"--probe-delta: {PROBE_OFF} it"),
        (
            ["--emotion-probe", "emotion2vec"],
            "--emotion-probe: a selection without emotion samples (the probe scores the emotion "
            "dimension only) would ignore it",
        ),
    ],
)
def test_run_refuses_caption_judge_and_probe_flags_that_do_nothing(
    args, says, small_set, tmp_path, capsys, monkeypatch
):
    _stop_at_the_run_folder(monkeypatch)  # refused before it, so before the model is loaded
    out = tmp_path / "runs"
    code, err = run_cli(capsys, small_set, out, *args)
    one_line_user_error(code, err, tmp_path, says)
    assert not out.exists() or not any(out.iterdir()), list(out.iterdir())


def test_the_same_flags_are_refused_in_a_config_file(small_set, tmp_path, capsys):
    config = tmp_path / "run.toml"
    config.write_text('[judge]\njudge = "none"\njudge_url = "http://h:1/v1"\n')
    code, err = run_cli(capsys, small_set, tmp_path / "runs", "--config", str(config))
    one_line_user_error(code, err, tmp_path, f"--judge-url: {JUDGE_OFF} it")


def _srd_file(tmp_path):
    from importlib import resources

    path = tmp_path / "srd.txt"
    path.write_text(
        resources.files("stylebench.metrics.judges").joinpath("prompts", "srd_v1.txt").read_text()
    )
    return path


@pytest.mark.parametrize(
    "args",
    [
        ["--judge", "none"],
        ["--judge", "openai", "--judge-model", "m", "--judge-url", "http://127.0.0.1:9/v1"],
        ["--judge", "openai", "--judge-model", "m", "--judge-arg", "concurrency=2"],
        ["--judge", "openai", "--judge-model", "m", "--judge-prompt-srd", "SRD"],
        ["--judge", "openai", "--judge-model", "m", "--judge-input", "text", "--filter-mrd"],
        ["--judge-model", "minilm", "--judge-arg", "threads=2", "--no-judge-cache"],
        ["--captioner", "openai", "--caption-model", "m", "--caption-url", "http://h:1/v1"],
        ["--captioner", "openai", "--caption-model", "m", "--caption-prompt", "PROMPTS"],
        ["--captioner", "features", "--caption-judge", "openai", "--caption-judge-model", "m"],
        ["--captioner", "features", "--caption-judge", "openai", "--caption-judge-model", "m"]
        + ["--caption-judge-url", "http://h:1/v1", "--caption-judge-arg", "concurrency=2"],
    ],
)
def test_the_same_flags_where_they_are_read_are_accepted(
    args, small_set, tmp_path, capsys, monkeypatch
):
    _stop_at_the_run_folder(monkeypatch)
    (tmp_path / "prompts").mkdir()
    for dim in ("pitch", "emotion"):
        (tmp_path / "prompts" / f"{dim}.txt").write_text("Describe the speaking style.")
    srd = _srd_file(tmp_path)
    args = [{"SRD": str(srd), "PROMPTS": str(tmp_path / "prompts")}.get(a, a) for a in args]
    code, err = run_cli(capsys, small_set, tmp_path / "runs", *args)
    one_line_user_error(code, err, tmp_path, "reached the run folder")


@pytest.fixture(scope="module")
def emotion_set(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """2 English emotion samples, one voice (espeak-ng): what the emotion probe scores."""
    from stylebench.dialogues.builder import BuildSpec, build_set
    from stylebench.synth.espeak import EspeakSynth, voices_for

    out = tmp_path_factory.mktemp("emo") / "set"
    spec = BuildSpec(
        dims=("emotion",), langs=("en",), per_cell=1, voices_per_lang=1, emotions=("happy",)
    )
    build_set(out, spec, EspeakSynth(), {"en": voices_for("en")})
    return out


def test_the_probe_flags_are_accepted_where_the_probe_runs(
    emotion_set, tmp_path, capsys, monkeypatch
):
    _stop_at_the_run_folder(monkeypatch)
    code, err = cli(
        capsys,
        *("run", "--model", "neutral", "--dim", "emotion", "--dialogues", str(emotion_set)),
        *("--asr", "none", "--emotion-probe", "emotion2vec", "--probe-model", "iic/x"),
        *("--probe-delta", "0.1", "--out", str(tmp_path / "runs")),
    )
    one_line_user_error(code, err, tmp_path, "reached the run folder")


@pytest.mark.parametrize(
    ("args", "says"),
    [
        (["--judge", "none", "--judge-model", "m"], f"--judge-model: {JUDGE_OFF} it"),
        (
            ["--judge", "offline", "--judge-url", "http://h:1/v1"],
            "the 'offline' judge takes no --judge-url",
        ),
        (["--caption-model", "m"], f"--caption-model: {CAPTIONS_OFF} it"),
        (["--caption-judge", "openai"], f"--caption-judge: {CAPTIONS_OFF} it"),
        (["--probe-model", "x"], f"--probe-model: {PROBE_OFF} it"),
        (["--emotion-probe", "emotion2vec"], "--emotion-probe: a selection without emotion"),
        (
            ["--captioner", "features", "--caption-judge-model", "m"],
            "the 'lexicon' caption judge takes no --caption-judge-model",
        ),
    ],
)
def test_score_refuses_flags_that_do_nothing_and_leaves_the_run_as_it_was(
    args, says, reference_run, tmp_path, capsys
):
    from conftest import _state
    from standins.judge import copy_of

    store = copy_of(reference_run[0], tmp_path)
    before = _state(store.root)
    code, err = cli(capsys, "score", str(store.root), *args)
    one_line_user_error(code, err, tmp_path, says)
    assert _state(store.root) == before


@pytest.mark.parametrize(
    "args",
    [
        ["--judge", "none"],
        ["--judge", "openai", "--judge-model", "m", "--judge-url", "http://h:1/v1"],
        ["--captioner", "features", "--caption-judge", "lexicon"],
    ],
)
def test_score_takes_them_where_they_are_read(
    args, reference_run, tmp_path, capsys, monkeypatch, standins
):
    from standins.judge import copy_of

    import stylebench.commands.runs as runs
    from stylebench.errors import BadValue

    def reached(*a, **k):
        raise BadValue("reached the stored run")

    monkeypatch.setattr(runs, "write_manifest", reached)
    store = copy_of(reference_run[0], tmp_path)
    code, err = cli(capsys, "score", str(store.root), *args)
    one_line_user_error(code, err, tmp_path, "reached the stored run")


@pytest.mark.parametrize(
    ("args", "says"),
    [
        (["--judge", "none", "--judge-url", "http://h:1/v1"], f"--judge-url: {JUDGE_OFF} it"),
        (["--caption-model", "m"], f"--caption-model: {CAPTIONS_OFF} it"),
        (["--probe-model", "x"], f"--probe-model: {PROBE_OFF} it"),
    ],
)
def test_import_replies_refuses_flags_that_do_nothing(args, says, small_set, tmp_path, capsys):
    out = tmp_path / "runs"
    (tmp_path / "replies").mkdir()
    code, err = cli(
        capsys,
        *("import-replies", str(small_set), str(tmp_path / "replies"), "--name", "elsewhere"),
        *("--dim", "pitch", "--lang", "en", "--limit", "1", "--asr", "none", "--out", str(out)),
        *args,
    )
    one_line_user_error(code, err, tmp_path, says)
    assert not out.exists() or not any(out.iterdir())


@pytest.mark.parametrize(
    ("args", "says"),
    [
        (["--eval-judge-model", "m"], "--eval-judge-model: without --eval-judge-url it would be"),
        (["--fleur-model", "m"], "--fleur-model: without --fleur-url it would be ignored"),
        (["--clap-mode", "max_embedding"], "--clap-mode: without --clap it would be ignored"),
        (["--alpha", "0.5"], "--alpha: S_CAF needs both --clap and --fleur-url"),
        (["--eval-judge-url", "ftp://x"], "--eval-judge-url must start with http:// or https://"),
    ],
)
def test_caption_eval_refuses_flags_that_do_nothing(args, says, reference_run, tmp_path, capsys):
    code, err = cli(capsys, "caption-eval", str(reference_run[0].store.root), *args)
    one_line_user_error(code, err, tmp_path, says)


def test_caption_eval_takes_them_where_they_are_read(reference_run, tmp_path, capsys):
    code, err = cli(
        capsys,
        *("caption-eval", str(reference_run[0].store.root), "--eval-judge-url", "http://h:1/v1"),
        *("--eval-judge-model", "m", "--fleur-url", "http://h:1/v1", "--fleur-model", "m"),
        *("--clap", "/no/clap", "--alpha", "0.5"),
    )
    one_line_user_error(code, err, tmp_path, "has no ok captions")  # past the options
