"""The worker adapter piece by piece: protocol messages, model errors that keep the worker up,
start failures, and the one-line errors a user sees when an environment is incomplete."""

from __future__ import annotations

import os
import subprocess
import sys
import venv
from pathlib import Path

import pytest

from stylebench.model_wrappers.worker import WorkerError, WorkerModel, worker_statuses
from stylebench.model_wrappers.worker import protocol as wp
from stylebench.records import DecodeConfig, Turn
from stylebench.registry import MissingExtraError

HELPERS = Path(__file__).resolve().parent / "worker_models"


@pytest.fixture()
def helper_path(monkeypatch: pytest.MonkeyPatch) -> None:
    old = os.environ.get("PYTHONPATH")
    monkeypatch.setenv("PYTHONPATH", str(HELPERS) + (os.pathsep + old if old else ""))


def user(k: int) -> Turn:
    return Turn("user", f"say it again, turn {k}", "u.wav", 16000)


def test_protocol_round_trip_and_rejects_garbage():
    msg = wp.Respond(
        (user(1), Turn("assistant", "hé", "/a.wav", 24000, {"tokens": 3})),
        user(2),
        DecodeConfig(0.7, 0.9, 64, 5),
    )
    line = wp.encode(msg)
    assert line.endswith(b"\n") and line.count(b"\n") == 1
    assert wp.decode(line) == msg
    assert wp.decode(wp.encode(wp.Shutdown())) == wp.Shutdown()
    # a value JSON cannot hold travels as its repr instead of killing the worker
    odd = wp.decode(wp.encode(wp.Reply(Turn("assistant", "x", "/r.wav", 1, {"o": object()}))))
    assert odd.turn.raw["o"].startswith("<object object")
    with pytest.raises(ValueError, match="not a JSON line"):
        wp.decode(b"library chatter\n")
    with pytest.raises(ValueError, match="unknown message"):
        wp.decode(b'{"kind": "launch"}')
    with pytest.raises(ValueError, match="has no fields"):
        wp.decode(b'{"kind": "shutdown", "now": true}')


def test_protocol_refuses_a_turn_that_carries_the_answer_key():
    script = {"content": "The lamp is on.", "dim": "volume", "direction": "attenuate"}
    keyed = Turn("user", "say it again", "u.wav", 16000, raw={"script": script})
    with pytest.raises(ValueError, match="answer key never goes to a worker"):
        wp.Respond((), keyed, DecodeConfig())
    line = wp.encode(wp.Respond((), user(1), DecodeConfig())).replace(
        b'"raw": {}', b'"raw": {"script": {}}'
    )
    with pytest.raises(ValueError, match="answer key"):
        wp.decode(line)


def test_worker_refuses_embedded_calibration_models(tmp_path):
    with pytest.raises(ValueError, match="embedded calibration models run in process only"):
        WorkerModel("reference", python=sys.executable, log_path=tmp_path / "l")


def test_model_error_is_reported_and_worker_stays_up(tmp_path, helper_path):
    log = tmp_path / "w.log"
    w = WorkerModel(
        "sbtest_models:FlakyEcho",
        {"mode": "raise", "at_call": "2", "flag": str(tmp_path / "f")},
        python=sys.executable,
        log_path=log,
    )
    try:
        first = w.respond((), user(1), DecodeConfig())
        assert first.role == "assistant" and Path(first.audio).is_file() and first.sr
        hist = (user(1), first)
        with pytest.raises(WorkerError, match="RuntimeError: scripted model failure") as err:
            w.respond(hist, user(2), DecodeConfig())
        assert "worker traceback" in str(err.value) and "sbtest_models.py" in str(err.value)
        again = w.respond(hist, user(2), DecodeConfig())
        assert Path(again.audio).is_file() and w.starts == 1
    finally:
        w.close()
    assert "closed (exit code 0)" in log.read_text()


def test_restart_that_fails_gives_up_after_max_failed_starts(tmp_path, helper_path):
    w = WorkerModel(
        "sbtest_models:FlakyEcho",
        {"mode": "crash", "at_call": "1", "flag": str(tmp_path / "f"), "once": str(tmp_path / "o")},
        python=sys.executable,
        log_path=tmp_path / "w.log",
        max_failed_starts=2,
    )
    with pytest.raises(WorkerError, match=r"exited \(code 3\) while answering"):
        w.respond((), user(1), DecodeConfig())
    for _ in range(2):  # each restart dies while loading
        with pytest.raises(WorkerError, match=r"exited \(code 4\) while loading"):
            w.respond((), user(1), DecodeConfig())
    with pytest.raises(WorkerError, match="failed to start 2 times in a row; giving up"):
        w.respond((), user(1), DecodeConfig())
    assert w.starts == 3


def test_missing_package_in_worker_is_one_line(tmp_path, helper_path):
    with pytest.raises(MissingExtraError) as err:
        WorkerModel(
            "sbtest_models:NeedsMissingPackage", python=sys.executable, log_path=tmp_path / "l"
        )
    msg = str(err.value)
    assert "\n" not in msg
    assert msg.startswith("sbtest_absent_pkg is not installed: see docs/models.md#kimi-audio")
    with pytest.raises(
        ValueError,
        match="could not load sbtest_models:EchoModel: .*takes no argument .bogus.; it accepts: no arguments",
    ):
        WorkerModel(
            "sbtest_models:EchoModel",
            {"bogus": "1"},
            python=sys.executable,
            log_path=tmp_path / "l",
        )


def test_worker_env_without_stylebench(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)  # from the repo root, `import stylebench` finds the source folder
    env = tmp_path / "bare"
    venv.create(env, with_pip=False, system_site_packages=False)
    python = str(env / "bin" / "python")
    monkeypatch.delenv("PYTHONPATH", raising=False)
    probe = subprocess.run([python, "-c", "import stylebench"], capture_output=True)
    assert probe.returncode != 0, "the bare venv can import stylebench; test cannot check"
    with pytest.raises(MissingExtraError, match="stylebench is not installed in the worker"):
        WorkerModel("kimi-audio", python=python, log_path=tmp_path / "l")
    with pytest.raises(MissingExtraError, match="pip install -e"):
        worker_statuses(python)
    with pytest.raises(FileNotFoundError, match="does not exist"):
        WorkerModel("kimi-audio", python=str(tmp_path / "nope" / "python"))


def test_a_malformed_line_is_answered_and_the_worker_stays_up(monkeypatch, tmp_path):
    import io
    import json

    from stylebench.model_wrappers.worker.main import serve

    monkeypatch.syspath_prepend(str(HELPERS))
    wav = tmp_path / "u.wav"
    import numpy as np
    import soundfile as sf

    sf.write(str(wav), np.zeros(1600, dtype=np.float32), 16000)
    good = wp.encode(wp.Respond((), Turn("user", "hi", str(wav), 16000), DecodeConfig()))
    lines = [
        wp.encode(wp.Init("sbtest_models:EchoModel")),
        b"library chatter\n",
        b'{"kind": "respond", "history": [], "decode": {}}\n',  # no user_turn
        b'{"kind": "respond", "history": 5, "user_turn": {}, "decode": []}\n',
        good,
        wp.encode(wp.Shutdown()),
    ]
    out = io.BytesIO()
    assert serve(io.BytesIO(b"".join(lines)), out) == 0
    answers = [wp.decode(line) for line in out.getvalue().splitlines()]
    assert isinstance(answers[0], wp.Ready) and isinstance(answers[-1], wp.Reply)
    errors = answers[1:-1]
    assert [type(e) for e in errors] == [wp.Error] * 3, errors
    assert "not a JSON line" in errors[0].message and "bad Respond" in errors[1].message
    assert all(e.type == "ProtocolError" for e in errors)
    bad_init = io.BytesIO()
    assert serve(io.BytesIO(b"{not json\n"), bad_init) == 2
    assert json.loads(bad_init.getvalue())["type"] == "ProtocolError"


def test_arrays_in_raw_travel_as_values_not_their_repr():
    import numpy as np

    raw = {"f0": np.array([1.5, 2.0]), "n": np.int64(3), "p": np.float32(0.5)}
    got = wp.decode(wp.encode(wp.Reply(Turn("assistant", "x", "/r.wav", 1, raw)))).turn.raw
    assert got == {"f0": [1.5, 2.0], "n": 3, "p": 0.5}
