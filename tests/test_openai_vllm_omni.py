"""``openai-audio`` flavours against the vLLM-Omni STAND-IN server (tests/standins/vllm_omni_server.py).

The stand-in answers as vLLM-Omni does (separate text and audio choices, ``max_tokens`` as the
only length override, assistant messages heard through ``content`` only, the Kimi renderer's
refusals); it records what its "model" heard, so each test checks what reaches the model.
``HOSTILE_VLLM`` is the corpus of hostile vLLM-Omni servers (a reply without text, a speaker
dropped or replaced, the opt-in audio history): a full run against each must complete.
"""

from __future__ import annotations

import hashlib
from pathlib import Path
from types import SimpleNamespace

import pytest
from standins.vllm_omni_server import SR, STAGE_DEFAULT_MAX_TOKENS, VllmOmniStandIn, tone_wav

from stylebench.commands.runs import run
from stylebench.config import make_config
from stylebench.model_wrappers.api.openai_audio import EndpointError, OpenAIAudioModel
from stylebench.records import DecodeConfig, Turn


@pytest.fixture()
def qwen():
    srv = VllmOmniStandIn("qwen")
    yield srv
    srv.close()


@pytest.fixture()
def kimi():
    srv = VllmOmniStandIn("kimi")
    yield srv
    srv.close()


def sha(path: str) -> str:
    return hashlib.sha256(Path(path).read_bytes()).hexdigest()


def three_turns(model: OpenAIAudioModel, tmp_path: Path) -> list[Turn]:
    """Drive three turns the way the respond stage does: history = earlier user turns + replies."""
    history: list[Turn] = []
    replies = []
    for k in range(3):
        wav = tmp_path / f"u{k}.wav"
        wav.write_bytes(tone_wav(150.0 + 10 * k, sr=16000))
        user = Turn("user", f"request {k}", str(wav), 16000)
        reply = model.respond(tuple(history), user, DecodeConfig(max_new_tokens=333, seed=5))
        history += [user, reply]
        replies.append(reply)
    return replies


def run_pipeline(small_set, tmp_path, server, flavour: str, **args: str):
    return run(
        make_config(
            model="openai-audio",
            model_args={"base_url": server.url, "model": "served", "flavour": flavour, **args},
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


def test_qwen3_flavour_three_turns_text_history_speaker_and_max_tokens(tmp_path, qwen):
    m = OpenAIAudioModel(
        base_url=qwen.url,
        model="Qwen/Qwen3-Omni-30B-A3B-Instruct",
        flavour="vllm-omni-qwen3",
        voice="Chelsie",
    )
    replies = three_turns(m, tmp_path)
    for k, (req, reply) in enumerate(zip(qwen.requests, replies, strict=True)):
        body = req["body"]
        assert body["speaker"] == "Chelsie" and "voice" not in body["audio"]
        assert body["max_tokens"] == 333 and "max_completion_tokens" not in body
        assert not any(msg["role"] == "system" for msg in body["messages"])
        # the reply is the text choice's content and the audio choice's wav, not the empty
        # transcript of the audio choice
        assert reply.text == f"reply number {k + 1}" and reply.sr == SR
        assert sha(reply.audio) == qwen.sent[k]["sha256"]
        # what the model heard of its earlier replies: their text, never an empty message
        assistants = [h for h in req["heard"] if h["role"] == "assistant"]
        assert [a["text"] for a in assistants] == [r.text for r in replies[:k]]
        assert all(a["audio"] == [] for a in assistants)
        assert reply.raw["history_forms"] == ["text"] * k
    assert [s["max_tokens"] for s in qwen.sent] == [333] * 3 and qwen.sent[0][
        "speaker"
    ] == "chelsie"
    d = m.describe()
    assert d["flavour"] == "vllm-omni-qwen3" and d["history_kind"] == "text only"


def test_openai_flavour_against_vllm_omni_loses_the_history_and_the_length(tmp_path, qwen):
    """Why the flavours exist: the OpenAI dialect's audio ids are heard as empty replies and
    its max_completion_tokens leaves the stage default in force."""
    m = OpenAIAudioModel(base_url=qwen.url, model="m", flavour="openai")
    three_turns(m, tmp_path)
    last = qwen.requests[-1]
    assistants = [h for h in last["heard"] if h["role"] == "assistant"]
    assert assistants == [{"role": "assistant", "text": "", "audio": []}] * 2
    assert qwen.sent[-1]["max_tokens"] == STAGE_DEFAULT_MAX_TOKENS


def test_qwen25_flavour_sends_the_card_system_prompt_as_parts(tmp_path, qwen):
    m = OpenAIAudioModel(
        base_url=qwen.url, model="Qwen/Qwen2.5-Omni-7B", flavour="vllm-omni-qwen2.5"
    )
    three_turns(m, tmp_path)
    system = qwen.requests[0]["body"]["messages"][0]
    assert system["role"] == "system" and system["content"][0]["type"] == "text"
    assert system["content"][0]["text"].startswith("You are Qwen, a virtual human")
    assert "speaker" not in qwen.requests[0]["body"]  # the model's default voice


def test_kimi_flavour_resends_reply_audio_and_text(tmp_path, kimi):
    m = OpenAIAudioModel(
        base_url=kimi.url, model="moonshotai/Kimi-Audio-7B-Instruct", flavour="vllm-omni-kimi"
    )
    replies = three_turns(m, tmp_path)
    for k, req in enumerate(kimi.requests):
        body = req["body"]
        assert body["chat_template_kwargs"] == {"output_type": "both"}
        assert body["max_tokens"] == 333 and "max_completion_tokens" not in body
        assert "speaker" not in body and body["audio"] == {"format": "wav"}
        assistants = [h for h in req["heard"] if h["role"] == "assistant"]
        # the model hears its own earlier voice: the exact wavs it returned, with their text
        assert [a["audio"] for a in assistants] == [[sha(r.audio)] for r in replies[:k]]
        assert [a["text"] for a in assistants] == [r.text for r in replies[:k]]
        assert replies[k].raw["history_forms"] == ["text+audio"] * k
    assert m.describe()["history_kind"] == "own audio + text"


def test_kimi_renderer_refusals_are_reported(tmp_path, kimi):
    wav = tmp_path / "u.wav"
    wav.write_bytes(tone_wav(150.0))
    user = Turn("user", "x", str(wav), SR)
    plain = OpenAIAudioModel(base_url=kimi.url, model="m", flavour="openai", voice="")
    with pytest.raises(EndpointError, match="HTTP 400: .*max_tokens, not max_completion_tokens"):
        plain.respond((), user, DecodeConfig())
    with pytest.raises(ValueError, match="takes no system message"):
        OpenAIAudioModel(base_url=kimi.url, flavour="vllm-omni-kimi", system="Be brief.")
    with pytest.raises(ValueError, match="has no voice selection"):
        OpenAIAudioModel(base_url=kimi.url, flavour="vllm-omni-kimi", voice="alloy")
    with pytest.raises(ValueError, match="flavour must be one of openai, vllm-omni-qwen2.5"):
        OpenAIAudioModel(flavour="vllm")


@pytest.mark.parametrize("flavour", ["vllm-omni-qwen3", "vllm-omni-kimi"])
def test_full_run_through_the_pipeline(small_set, tmp_path, flavour):
    server = VllmOmniStandIn("kimi" if flavour.endswith("kimi") else "qwen")
    try:
        res = run_pipeline(small_set, tmp_path, server, flavour)
    finally:
        server.close()
    assert res.counts["respond"]["ok"] == 6 and len(server.requests) == 6
    recs = [SimpleNamespace(**d) for d in res.store.iter_raw("respond")]
    assert {r.sha256 for r in recs} == {s["sha256"] for s in server.sent}
    assert sorted(r.text for r in recs) == sorted(s["text"] for s in server.sent)
    for c in res.report["cells"]:  # +2 semitones per turn, heard back each turn
        assert c["change_mean"] == pytest.approx(2.0, abs=0.1), c
    model = res.store.read_manifest()["model"]
    kind = "own audio + text" if flavour.endswith("kimi") else "text only"
    assert model["flavour"] == flavour and model["history_kind"] == kind
    assert res.report["history_kind"] == kind and any(kind in n for n in res.report["notes"])
    assert model["decode_effective"] == {
        "greedy": True,
        "args": {"temperature": 0.0, "top_p": 1.0, "seed": 0, "max_tokens": 1024},
        "definition": "temperature 0 = greedy (argmax) decoding of the text stream",
    }
    if flavour.endswith("kimi"):  # turn 3 heard both earlier replies as audio
        assert len([h for h in server.requests[2]["heard"] if h["audio"]]) == 5


def test_kimi_reply_without_text_does_not_break_the_next_turn(tmp_path):
    """The Kimi renderer refuses reply audio without its transcript (HTTP 400, "assistant audio
    history requires its transcript"): a reply whose text came back empty is sent back as an
    empty text turn, and turns 2 and 3 are answered."""
    server = VllmOmniStandIn("kimi", empty_text_replies=(1,))
    try:
        m = OpenAIAudioModel(base_url=server.url, model="m", flavour="vllm-omni-kimi")
        replies = three_turns(m, tmp_path)
    finally:
        server.close()
    assert replies[0].text == "" and len(server.requests) == 3
    assert replies[2].raw["history_forms"] == ["empty", "text+audio"]
    msgs = server.requests[2]["body"]["messages"]
    assert msgs[1] == {"role": "assistant", "content": ""}


@pytest.mark.parametrize("mode", ["read", "ignored", "names-default"])
def test_the_speaker_a_reply_names_is_checked(tmp_path, mode, caplog):
    """vLLM-Omni reads ``speaker`` since PR #1963; older servers drop it silently (#1845). The
    manifest says so; a reply that names another voice than the one asked for is flagged."""
    server = VllmOmniStandIn("qwen", speaker=mode)
    try:
        m = OpenAIAudioModel(
            base_url=server.url, model="m", flavour="vllm-omni-qwen3", voice="Chelsie"
        )
        replies = three_turns(m, tmp_path)
    finally:
        server.close()
    assert "PR #1963" in m.describe()["voice_note"]
    raw = replies[0].raw
    assert raw["voice_requested"] == "Chelsie"
    if mode == "names-default":
        assert raw["voice_served"] == "Ethan" and raw["voice_ignored"] is True
        assert "ignored the voice field" in caplog.text
    else:  # the reply does not say: unknown, not "honoured"
        assert raw["voice_served"] is None and raw["voice_ignored"] is None
    assert "voice_note" not in OpenAIAudioModel(base_url=server.url).describe()  # openai


def test_qwen_audio_history_is_opt_in_and_its_own_kind(tmp_path, qwen):
    """history=audio re-sends each reply's wav with its transcript as content parts of the
    assistant message; Qwen was not trained on that, so it is its own history kind."""
    m = OpenAIAudioModel(base_url=qwen.url, model="m", flavour="vllm-omni-qwen3", history="audio")
    replies = three_turns(m, tmp_path)
    assistants = [h for h in qwen.requests[2]["heard"] if h["role"] == "assistant"]
    assert [a["audio"] for a in assistants] == [[sha(r.audio)] for r in replies[:2]]
    assert [a["text"] for a in assistants] == [r.text for r in replies[:2]]
    assert replies[2].raw["history_forms"] == ["text+audio"] * 2
    d = m.describe()
    assert d["history_kind"] == "own audio + text (untrained form)"
    assert "not trained on" in d["history"]
    default = OpenAIAudioModel(base_url=qwen.url, model="m", flavour="vllm-omni-qwen3")
    assert default.describe()["history_kind"] == "text only"  # the identity differs
    with pytest.raises(ValueError, match="history=audio is for the vllm-omni-qwen flavours"):
        OpenAIAudioModel(base_url=qwen.url, flavour="vllm-omni-kimi", history="audio")


#: the hostile vLLM-Omni corpus: (server kind, server options, model args, history kind)
HOSTILE_VLLM = {
    "kimi reply without text": (
        "kimi",
        {"empty_text_replies": (1, 4)},
        {"flavour": "vllm-omni-kimi"},
        "own audio + text",
    ),
    "qwen speaker dropped silently": (
        "qwen",
        {"speaker": "ignored"},
        {"flavour": "vllm-omni-qwen3", "voice": "Chelsie"},
        "text only",
    ),
    "qwen reply names another voice": (
        "qwen",
        {"speaker": "names-default"},
        {"flavour": "vllm-omni-qwen3", "voice": "Chelsie"},
        "text only",
    ),
    "qwen audio history (opt-in)": (
        "qwen",
        {},
        {"flavour": "vllm-omni-qwen3", "history": "audio"},
        "own audio + text (untrained form)",
    ),
}


@pytest.mark.parametrize("case", sorted(HOSTILE_VLLM))
def test_a_run_against_each_hostile_vllm_omni_server_completes(case, small_set, tmp_path):
    kind, options, args, history_kind = HOSTILE_VLLM[case]
    server = VllmOmniStandIn(kind, **options)
    try:
        res = run_pipeline(small_set, tmp_path, server, **args)
    finally:
        server.close()
    assert res.counts["respond"] == {**res.counts["respond"], "ok": 6, "error": 0}, case
    assert len(server.requests) == 6, case
    model = res.store.read_manifest()["model"]
    assert model["history_kind"] == history_kind == res.report["history_kind"], case
    recs = list(res.store.iter_raw("respond"))
    if "voice" in args:
        assert "PR #1963" in model["voice_note"]
        ignored = {r["raw"].get("voice_ignored") for r in recs}
        assert ignored == ({True} if options["speaker"] == "names-default" else {None}), case
    if "empty_text_replies" in options:
        assert sorted(r["text"] for r in recs).count("") == 2
