"""``openai-audio`` against a real HTTP server on 127.0.0.1 started by the test.

``StandInAudioServer`` is a stand-in for an OpenAI-compatible audio endpoint (GPT-4o audio, vLLM):
it checks nothing itself, records every request for the test to inspect, and answers with a
base64 wav (a tone 2 semitones higher per earlier assistant message) plus a transcript, or with
scripted HTTP errors.
"""

from __future__ import annotations

import base64
import hashlib
import json
import re
import socket
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from types import SimpleNamespace

import pytest
from signals import speechlike_wav

from stylebench.commands.runs import run
from stylebench.config import make_config
from stylebench.dialogues.sets import load_set
from stylebench.model_wrappers.api.openai_audio import EndpointError, OpenAIAudioModel
from stylebench.records import DecodeConfig, Turn

SR = 24000


def tone_wav(hz: float, seconds: float = 1.5) -> bytes:
    """A speech-like reply at ``hz`` (tests/signals.py): a pure tone would be unscored."""
    return speechlike_wav(SR, seconds, hz)


class StandInAudioServer:
    """A loopback stand-in for an OpenAI-compatible chat endpoint with audio output."""

    def __init__(self) -> None:
        self.requests: list[dict] = []
        self.script: list[tuple[int, dict, dict]] = []  # (status, body, headers) to send first
        self.sent: list[dict] = []  # the audio objects of successful replies
        self.give_ids = True
        self.hostile: dict | None = None  # every request gets this audio object instead
        outer = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: object) -> None:
                pass

            def do_POST(self) -> None:
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                outer.requests.append(
                    {"path": self.path, "auth": self.headers.get("Authorization"), "body": body}
                )
                if outer.script:
                    status, payload, headers = outer.script.pop(0)
                elif isinstance(outer.hostile, (bytes, tuple)):  # the whole body, as is
                    status, payload, headers = 200, None, {}
                elif outer.hostile is not None:
                    message = {"role": "assistant", "content": None, "audio": outer.hostile}
                    status, payload, headers = 200, {"choices": [{"message": message}]}, {}
                else:
                    status, payload, headers = 200, outer.reply(body), {}
                declared = None  # a (body, length) pair declares more bytes than it sends
                if isinstance(outer.hostile, tuple) and not outer.script:
                    data, declared = outer.hostile
                elif isinstance(outer.hostile, bytes) and not outer.script:
                    data = outer.hostile
                else:
                    data = json.dumps(payload).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(declared or len(data)))
                for k, v in headers.items():
                    self.send_header(k, v)
                self.end_headers()
                self.wfile.write(data)

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}/v1"
        self.thread = threading.Thread(
            target=self.httpd.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True
        )
        self.thread.start()

    def reply(self, body: dict) -> dict:
        n_prior = sum(m["role"] == "assistant" for m in body["messages"])
        audio = {
            "data": base64.b64encode(tone_wav(180.0 * 2 ** (2 * n_prior / 12))).decode(),
            "transcript": f"reply number {n_prior + 1}",
        }
        if self.give_ids:
            audio.update(id=f"audio_{len(self.sent)}", expires_at=int(time.time()) + 3600)
        self.sent.append(audio)
        message = {"role": "assistant", "content": None, "audio": audio}
        return {"model": body["model"] + "-2025", "choices": [{"index": 0, "message": message}]}


@pytest.fixture()
def server():
    srv = StandInAudioServer()
    yield srv
    srv.httpd.shutdown()
    srv.httpd.server_close()


def user_turn(path: Path) -> Turn:
    return Turn("user", "hello", str(path), SR)


def test_full_run_sends_history_and_scores_the_replies(small_set, tmp_path, server, monkeypatch):
    monkeypatch.setenv("SBTEST_AUDIO_KEY", "sk-test-123")
    res = run(
        make_config(
            model="openai-audio",
            model_args={
                "base_url": server.url,
                "model": "stand-in-omni",
                "voice": "verse",
                "api_key_env": "SBTEST_AUDIO_KEY",
            },
            dim="pitch",
            lang="en",
            limit=1,
            dialogues=str(small_set),
            out=str(tmp_path),
            asr="none",
            vad="energy",
            judge="none",
            n_boot=200,
        ),
        progress=False,
    )
    assert res.counts["respond"]["ok"] == 6 and len(server.requests) == 6
    recs = {
        (d["sample_id"], d["turn"]): SimpleNamespace(**d) for d in res.store.iter_raw("respond")
    }
    sample_ids = sorted({sid for sid, _ in recs})
    samples = {s.id: s for s in load_set(small_set)[0]}
    for i, req in enumerate(server.requests):
        sid, k = sample_ids[i // 3], i % 3 + 1
        body = req["body"]
        assert req["path"] == "/v1/chat/completions" and req["auth"] == "Bearer sk-test-123"
        assert body["model"] == "stand-in-omni" and body["modalities"] == ["text", "audio"]
        assert body["audio"] == {"voice": "verse", "format": "wav"}
        assert body["temperature"] == 0.0 and body["max_completion_tokens"] == 1024
        msgs = body["messages"]
        assert [m["role"] for m in msgs] == ["user", "assistant"] * (k - 1) + ["user"]
        for j, m in enumerate(msgs[::2], start=1):  # user turns: the dialogue's own wavs
            (part,) = m["content"]
            assert part["type"] == "input_audio" and part["input_audio"]["format"] == "wav"
            wav = small_set / samples[sid].turns[j - 1].audio
            assert base64.b64decode(part["input_audio"]["data"]) == wav.read_bytes()
        for j, m in enumerate(msgs[1::2]):  # assistant turns: the ids the server gave
            assert m == {"role": "assistant", "audio": {"id": server.sent[i - k + 1 + j]["id"]}}
    for i, (_key, rec) in enumerate(sorted(recs.items())):
        sent = server.sent[i]
        assert rec.status == "ok" and rec.sr == SR and rec.text == sent["transcript"]
        assert rec.sha256 == hashlib.sha256(base64.b64decode(sent["data"])).hexdigest()
        assert rec.raw["audio_id"] == sent["id"] and rec.raw["served_model"] == "stand-in-omni-2025"
    # the stand-in rises 2 semitones per turn whatever was asked: intensify valid, attenuate not
    for c in res.report["cells"]:
        assert c["change_mean"] == pytest.approx(2.0, abs=0.1), c
        assert c["vsp"] == (100.0 if c["direction"] == "intensify" else 0.0), c
    assert "sk-test" not in json.dumps(res.store.read_manifest())


def test_transcript_history_when_no_id(tmp_path, server):
    server.give_ids = False
    wav = tmp_path / "u.wav"
    wav.write_bytes(tone_wav(150.0))
    m = OpenAIAudioModel(base_url=server.url, model="m", backoff_s="0.01")
    first = m.respond((), user_turn(wav), DecodeConfig(temperature=0.5, seed=7))
    assert first.text == "reply number 1" and Path(first.audio).read_bytes() == base64.b64decode(
        server.sent[0]["data"]
    )
    second = m.respond((user_turn(wav), first), user_turn(wav), DecodeConfig())
    msgs = server.requests[1]["body"]["messages"]
    assert msgs[1] == {"role": "assistant", "content": "reply number 1"}
    assert second.raw["history_forms"] == ["text"] and server.requests[0]["body"]["seed"] == 7
    # with ids available, history=text still sends transcripts
    server.give_ids = True
    t = OpenAIAudioModel(base_url=server.url, model="m", history="text", system="Be brief.")
    r1 = t.respond((), user_turn(wav), DecodeConfig())
    t.respond((user_turn(wav), r1), user_turn(wav), DecodeConfig())
    msgs = server.requests[-1]["body"]["messages"]
    assert msgs[0] == {"role": "system", "content": "Be brief."}
    assert msgs[2] == {"role": "assistant", "content": r1.text}
    assert server.requests[-1]["auth"] is None  # no key in the environment: no header


def test_retries_500_and_429_then_succeeds(tmp_path, server):
    wav = tmp_path / "u.wav"
    wav.write_bytes(tone_wav(150.0))
    server.script = [
        (500, {"error": {"message": "engine overloaded"}}, {}),
        (429, {"error": {"message": "slow down"}}, {"Retry-After": "0"}),
    ]
    m = OpenAIAudioModel(base_url=server.url, model="m", backoff_s="0.01", retries="3")
    reply = m.respond((), user_turn(wav), DecodeConfig())
    assert len(server.requests) == 3 and reply.text == "reply number 1"
    server.script = [(503, {"error": "down"}, {})] * 3
    m2 = OpenAIAudioModel(base_url=server.url, model="m", backoff_s="0.01", retries="2")
    with pytest.raises(EndpointError, match="gave up after 3 attempts; last: HTTP 503: down"):
        m2.respond((), user_turn(wav), DecodeConfig())
    assert len(server.requests) == 6


def test_4xx_fails_at_once_with_the_server_message(tmp_path, server):
    wav = tmp_path / "u.wav"
    wav.write_bytes(tone_wav(150.0))
    server.script = [(400, {"error": {"message": "Invalid value: 'bogus' voice"}}, {})]
    m = OpenAIAudioModel(base_url=server.url, model="m", voice="bogus", backoff_s="0.01")
    with pytest.raises(EndpointError, match=r"HTTP 400: Invalid value: 'bogus' voice$"):
        m.respond((), user_turn(wav), DecodeConfig())
    assert len(server.requests) == 1
    server.script = [(401, {"error": {"message": "Incorrect API key"}}, {})]
    with pytest.raises(EndpointError, match=r"HTTP 401: Incorrect API key; is \$OPENAI_API_KEY"):
        m.respond((), user_turn(wav), DecodeConfig())
    server.script = [(200, {"choices": [{"message": {"content": "text only"}}]}, {})]
    with pytest.raises(EndpointError, match="the reply has no audio.*'text only'"):
        m.respond((), user_turn(wav), DecodeConfig())


def test_connection_refused_is_retried_then_reported(tmp_path):
    with socket.socket() as s:  # a port nothing listens on
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    wav = tmp_path / "u.wav"
    wav.write_bytes(tone_wav(150.0))
    m = OpenAIAudioModel(base_url=f"http://127.0.0.1:{port}/v1", backoff_s="0.01", retries="2")
    with pytest.raises(EndpointError, match="gave up after 3 attempts; last: URLError"):
        m.respond((), user_turn(wav), DecodeConfig())
    with pytest.raises(ValueError, match="history must be auto or text"):
        OpenAIAudioModel(history="audio")


def test_a_timeout_names_the_limit_and_the_argument(tmp_path):
    """A server that accepts and never answers: the error says the limit and timeout_s."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        s.listen(4)
        port = s.getsockname()[1]
        wav = tmp_path / "u.wav"
        wav.write_bytes(tone_wav(150.0))
        m = OpenAIAudioModel(
            base_url=f"http://127.0.0.1:{port}/v1", backoff_s="0", retries="1", timeout_s="0.2"
        )
        with pytest.raises(EndpointError) as err:
            m.respond((), user_turn(wav), DecodeConfig())
    assert str(err.value).endswith(
        "gave up after 2 attempts; last: no reply within 0.2 s (raise it with --model-arg "
        "timeout_s=SECONDS)"
    )


@pytest.mark.parametrize(
    ("args", "says"),
    [
        ({"base_url": "ftp://x"}, "base_url must start with http(s)://, got 'ftp://x'"),
        ({"timeout_s": "abc"}, "--model-arg timeout_s=abc must be a number"),
        ({"retries": "two"}, "--model-arg retries=two must be a whole number"),
        ({"timeout_s": "0"}, "timeout_s > 0"),
    ],
)
def test_bad_model_args_are_user_errors(args, says):
    from stylebench.errors import UserError

    with pytest.raises(UserError, match=re.escape(says)):
        OpenAIAudioModel(**args)


def b64(data: bytes) -> str:
    return base64.b64encode(data).decode()


WHOLE = tone_wav(180.0)


def odd_wav(*, nan: bool = False, sr: int = SR) -> bytes:
    """A readable wav whose samples are NaN, or at a rate no measure takes (4 kHz)."""
    import io

    import numpy as np
    import soundfile as sf

    x = np.sin(2 * np.pi * 180.0 * np.arange(int(1.5 * sr)) / sr).astype(np.float32)
    if nan:
        x[::7] = np.nan
    buf = io.BytesIO()
    sf.write(buf, x, sr, subtype="FLOAT", format="WAV")
    return buf.getvalue()


#: the hostile-server corpus: (what the server's audio object holds, what the error must say)
HOSTILE = {
    "truncated wav": (
        {"data": b64(WHOLE[: len(WHOLE) // 2]), "transcript": "hi"},
        "truncated wav (header declares",
    ),
    "too long": (
        {"data": b64(tone_wav(180.0, seconds=121.0)), "transcript": "hi"},
        "lasts 121 s, over the limit of 120 s (--max-reply-s)",
    ),
    "not a wav": (
        {"data": b64(b"RIFF garbage"), "transcript": "hi"},
        "/v1/chat/completions: the reply's audio (12 bytes) is not a readable wav",
    ),
    # corrupt audio is a failed call, as import-replies refuses such a file: an error record,
    # asked again on resume (docs/import.md, "Which replies are errors")
    "NaN samples": (
        {"data": b64(odd_wav(nan=True)), "transcript": "hi"},
        "samples are NaN or infinite",
    ),
    "4 kHz": (
        {"data": b64(odd_wav(sr=4000)), "transcript": "hi"},
        "sample rate 4000 Hz is outside",
    ),
    "empty data": (
        {"data": "", "transcript": "hi"},
        "/v1/chat/completions: the reply's audio.data is empty",
    ),
    "short body": (
        (b'{"choices": [{"mess', 100_000),
        "the connection closed after 19 of 100,000 declared bytes of the reply",
    ),
    "NaN transcript": (
        {"data": b64(WHOLE), "transcript": float("nan")},
        "choices[0].message.audio.transcript must be a string, got nan",
    ),
    "numeric transcript": (
        {"data": b64(WHOLE), "transcript": 12345},
        "choices[0].message.audio.transcript must be a string, got 12345",
    ),
    "string expires_at": (
        {"data": b64(WHOLE), "transcript": "hi", "id": "a1", "expires_at": "soon"},
        "choices[0].message.audio.expires_at must be a finite number, got 'soon'",
    ),
    "NaN expires_at": (
        {"data": b64(WHOLE), "transcript": "hi", "id": "a1", "expires_at": float("nan")},
        "audio.expires_at must be a finite number, got nan",
    ),
    "invalid base64": ({"data": "!!not*base64!!", "transcript": "hi"}, "audio.data is not base64"),
    "numeric data": ({"data": 7, "transcript": "hi"}, "audio.data must be a string, got 7"),
    "not UTF-8 body": (
        b'\xff\xfe{"choices": []}',
        "reply is not UTF-8 JSON (invalid start byte at byte 0)",
    ),
    "endless body": (
        b'{"choices": [' + b" " * 8000 + b"]}",
        "the reply is over 4,096 bytes; refused",
    ),
}


def scratch_wavs() -> set[Path]:
    import os

    return set((Path(os.environ["STYLEBENCH_SCRATCH"]) / "stylebench-scratch").glob("*.wav"))


@pytest.mark.parametrize("case", sorted(HOSTILE))
def test_a_hostile_server_gives_error_records_and_a_good_one_then_completes(
    case, small_set, tmp_path, server, monkeypatch
):
    audio, says = HOSTILE[case]
    cfg = make_config(
        model="openai-audio",
        model_args={"base_url": server.url, "model": "m", "retries": "0"},
        dim="pitch",
        lang="en",
        limit=1,
        dialogues=str(small_set),
        out=str(tmp_path),
        asr="none",
        vad="energy",
        judge="none",
        n_boot=20,
    )
    before = scratch_wavs()
    server.hostile = audio
    if case == "endless body":  # a small cap stands in for the real one (256 MiB)
        monkeypatch.setattr("stylebench.model_wrappers.api.openai_audio.MAX_REPLY_BYTES", 4096)
    bad = run(cfg, progress=False)
    monkeypatch.undo()
    recs = list(bad.store.iter_raw("respond"))
    assert bad.counts["respond"]["error"] == 6 and len(server.requests) == 2, case
    assert all(says in r["error"] for r in recs if r["turn"] == 1), (case, recs[0]["error"])
    assert scratch_wavs() <= before, f"{case}: a refused reply left its scratch wav"
    assert not list(bad.store.root.glob("audio/*.wav")), case
    server.hostile = None  # the same folder against a good server: every turn is asked again
    good = run(cfg, progress=False)
    assert good.counts["respond"]["ok"] == 6 and good.counts["features"]["error"] == 0, good.counts
    assert all(c["n_ok"] == c["n"] and c["vsp"] is not None for c in good.report["cells"]), case
