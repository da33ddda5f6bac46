"""Run identity and what reaches a model: one configuration per folder, filtered reads, keys that
cover the decode settings and the history, no answer key for real models, bounded replies."""

from __future__ import annotations

import tempfile
from pathlib import Path

import numpy as np
import pytest
import soundfile as sf

from stylebench.commands.runs import run
from stylebench.config import make_config
from stylebench.model_wrappers.base import Script, ScriptedModel, SpeechModel
from stylebench.pipeline.keys import Identity, turn_fp
from stylebench.pipeline.stage import run_stage
from stylebench.records import DecodeConfig, Turn
from stylebench.stages.respond import RespondStage
from stylebench.store import RunStore

FAST = {"asr": "none", "vad": "energy", "n_boot": 50, "judge": "none", "lang": "en", "limit": 1}


def tone_wav(seconds: float = 0.5, f0: float = 150.0) -> str:
    sr = 16000
    t = np.arange(int(sr * seconds)) / sr
    path = Path(tempfile.mkdtemp()) / "reply.wav"
    sf.write(str(path), (0.2 * np.sin(2 * np.pi * f0 * t)).astype(np.float32), sr)
    return str(path)


class Recorder(SpeechModel):
    """A real-model stand-in: replies with a tone and remembers everything it was handed."""

    name = "recorder"

    def __init__(self, text=lambda n: f"reply {n}", raw=None, seconds=0.5) -> None:
        self.seen: list[tuple[tuple[Turn, ...], Turn, DecodeConfig]] = []
        self.text, self.raw, self.seconds = text, raw or {}, seconds

    def respond(self, history, user_turn, decode):
        self.seen.append((tuple(history), user_turn, decode))
        return Turn(
            "assistant", self.text(len(self.seen)), tone_wav(self.seconds), 16000, dict(self.raw)
        )


class ScriptReader(ScriptedModel):
    name = "script-reader"

    def __init__(self) -> None:
        self.scripts: list[Script] = []

    def describe(self):
        return {"name": self.name}

    def respond_scripted(self, history, user_turn, decode, script):
        self.scripts.append(script)
        return Turn("assistant", script.content, tone_wav(), 16000)


def samples_of(small_set, n=2):
    from stylebench.dialogues.sets import load_set

    return load_set(small_set)[0][:n]


def respond(store, samples, model, set_root, decode=DecodeConfig(), **kw):
    stage = RespondStage(
        store, samples, set_root, Identity.of(model.describe(), decode), model, **kw
    )
    return run_stage(store, stage)


def test_a_folder_of_another_configuration_is_refused_naming_the_fields(small_set, tmp_path):
    cfg = {
        "model": "reference",
        "dim": "volume",
        "dialogues": str(small_set),
        "out": str(tmp_path),
        "run_id": "r",
        **FAST,
    }
    first = run(make_config(**cfg), progress=False)
    with pytest.raises(ValueError, match=r"model\.step: None -> 3\.0"):
        run(make_config(**cfg, model_args={"step": "3"}), progress=False)
    with pytest.raises(ValueError, match=r"decode\.temperature: 0\.0 -> 0\.7"):
        run(make_config(**cfg, temperature=0.7), progress=False)
    # the folder still reports the first configuration, untouched
    again = run(make_config(**cfg), progress=False)
    assert again.report["cells"] == first.report["cells"]
    assert again.counts["respond"]["ok"] == 0 and again.counts["respond"]["skipped"] == 6


def test_reads_keep_to_the_current_configuration(small_set, tmp_path):
    samples = samples_of(small_set)
    store = RunStore(tmp_path)
    a = respond(store, samples, Recorder(), small_set)
    b_model = Recorder(text=lambda n: "configuration B")
    b = respond(store, samples, b_model, small_set, decode=DecodeConfig(temperature=0.5))
    assert b.counts["skipped"] == 0 and len(b_model.seen) == 6
    assert {r.text for r in b.records.values()} == {"configuration B"}
    plan_a = RespondStage(
        store, samples, small_set, Identity.of(Recorder().describe(), DecodeConfig())
    )
    assert run_stage(store, plan_a, compute=False).records == a.records


def test_turn_key_covers_decode_settings_and_earlier_replies(small_set, tmp_path):
    s = samples_of(small_set, 1)[0]
    ident = Identity.of({"name": "m"}, DecodeConfig())
    base = turn_fp(ident, s, 2, ["sha-of-turn-1"])
    assert (
        turn_fp(Identity.of({"name": "m"}, DecodeConfig(temperature=0.7)), s, 2, ["sha-of-turn-1"])
        != base
    )
    assert (
        turn_fp(Identity.of({"name": "m"}, DecodeConfig(seed=1)), s, 2, ["sha-of-turn-1"]) != base
    )
    assert turn_fp(ident, s, 2, ["another-turn-1"]) != base
    # behaviour: a different turn-1 reply on record re-asks turns 2 and 3, not turn 1
    store = RunStore(tmp_path)
    model = Recorder()
    first = respond(store, [s], model, small_set)
    t1 = first.records[(s.id, 1)]
    other = tone_wav(f0=300.0)
    dest = store.audio_path(s.id, 1, "-other")
    dest.parent.mkdir(parents=True, exist_ok=True)
    Path(other).replace(dest)
    from dataclasses import replace

    from stylebench.audio import sha256_file

    store.append(
        "respond", replace(t1, audio=str(dest.relative_to(tmp_path)), sha256=sha256_file(dest))
    )
    model.seen.clear()
    again = respond(store, [s], model, small_set)
    assert [user.audio for _, user, _ in model.seen] == [
        str(small_set / s.turns[k].audio) for k in (1, 2)
    ]
    assert again.counts["skipped"] == 1 and again.counts["ok"] == 2


def test_real_wrappers_never_receive_the_answer_key(small_set, tmp_path):
    samples = samples_of(small_set)
    real = Recorder()
    respond(RunStore(tmp_path / "real"), samples, real, small_set)
    assert len(real.seen) == 6
    for history, user, _ in real.seen:
        for turn in (*history, user):
            assert "script" not in turn.raw, turn
        assert user.raw == {} and user.role == "user"
        assert set(vars(user)) == {"role", "text", "audio", "sr", "raw"}
    scripted = ScriptReader()
    respond(RunStore(tmp_path / "embedded"), samples, scripted, small_set)
    assert [(x.content, x.turn) for x in scripted.scripts[:3]] == [
        (samples[0].content, k) for k in (1, 2, 3)
    ]


def test_hostile_replies_become_error_records_that_say_why(small_set, tmp_path):
    samples = samples_of(small_set, 1)
    huge = respond(
        RunStore(tmp_path / "a"), samples, Recorder(text=lambda n: "x" * 3_000_000), small_set
    )
    assert "3000000 characters, over the limit" in huge.records[(samples[0].id, 1)].error
    number = respond(RunStore(tmp_path / "b"), samples, Recorder(text=lambda n: 12345), small_set)
    assert "reply text must be a string" in number.records[(samples[0].id, 1)].error
    nan = respond(
        RunStore(tmp_path / "c"), samples, Recorder(raw={"logprob": float("nan")}), small_set
    )
    assert all(r.status == "ok" and r.raw == {"logprob": "nan"} for r in nan.records.values())
    arrays = respond(
        RunStore(tmp_path / "e"),
        samples,
        Recorder(raw={"f0": np.array([1.5, np.nan]), "n": np.int64(2)}),
        small_set,
    )
    assert all(r.raw == {"f0": [1.5, "nan"], "n": 2} for r in arrays.records.values())
    from stylebench.stages.respond import ReplyLimits

    long = respond(
        RunStore(tmp_path / "d"),
        samples,
        Recorder(seconds=2.0),
        small_set,
        limits=ReplyLimits(max_seconds=1.0),
    )
    assert "lasts 2 s, over the limit of 1 s" in long.records[(samples[0].id, 1)].error


class Leaver(Recorder):
    """Remembers the wav files it handed back, to see whether a refused reply's file is removed."""

    def __init__(self, cut: str = "", **kw) -> None:
        super().__init__(**kw)
        self.files: list[Path] = []
        self.cut = cut

    def respond(self, history, user_turn, decode):
        turn = super().respond(history, user_turn, decode)
        path = Path(turn.audio)
        if self.cut == "flac":
            wave, sr = sf.read(str(path))
            path.unlink()
            path = path.with_suffix(".flac")
            sf.write(str(path), wave, sr, format="FLAC")
        self.files.append(path)
        if self.cut:  # a file cut off mid-write: its header still declares all of its data
            data = path.read_bytes()
            path.write_bytes(data[: len(data) // 2])
        return Turn(turn.role, turn.text, str(path), turn.sr, turn.raw)


def test_refused_replies_leave_no_scratch_file_and_truncated_wavs_are_refused(small_set, tmp_path):
    samples = samples_of(small_set, 1)
    huge = Leaver(text=lambda n: "x" * 30_000)
    respond(RunStore(tmp_path / "a"), samples, huge, small_set)
    assert huge.files and not any(f.exists() for f in huge.files)
    for fmt, says in (
        ("wav", "reply audio is a truncated wav (header declares"),
        ("flac", "reply audio does not decode"),
    ):
        cut = Leaver(cut=fmt)
        res = respond(RunStore(tmp_path / fmt), samples, cut, small_set)
        assert says in res.records[(samples[0].id, 1)].error, res.records[(samples[0].id, 1)].error
        assert res.counts["error"] == 3 and not any(f.exists() for f in cut.files)


def test_the_reply_length_bound_is_the_configs_and_holds_at_its_default(small_set, tmp_path):
    from stylebench.config import RunConfig
    from stylebench.stages.respond import ReplyLimits

    assert ReplyLimits().max_seconds == RunConfig().max_reply_s <= 120.0
    samples = samples_of(small_set, 1)
    res = respond(
        RunStore(tmp_path), samples, Recorder(seconds=RunConfig().max_reply_s + 1), small_set
    )
    assert "over the limit of 120 s (--max-reply-s)" in res.records[(samples[0].id, 1)].error
