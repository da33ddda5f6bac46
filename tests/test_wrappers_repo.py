"""Contract tests of the repo-based model wrappers, against NAMED STAND-INS of the official code.

The real packages and weights cannot run here (no GPU, no downloads). Each test puts a stand-in
of the official repository (tests/standins/<model>: same module names, functions and signatures,
no weights; e.g. ``StandInKimiAudio`` under the official class name) on the path through the
wrapper's own ``repo=`` argument, or installs a stand-in ``transformers`` module, then drives the
wrapper through a three-turn dialogue and checks the exact calls and message structures the
official code expects. The official file and function each structure comes from is cited beside
the assertion. Passing shows the wrapper speaks the official interface, not that the model works.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import types
from pathlib import Path

import numpy as np
import pytest
import soundfile as sf

from stylebench.audio import write_wav
from stylebench.records import DecodeConfig, Turn
from stylebench.registry import MissingExtraError

STANDINS = Path(__file__).parent / "standins"
DECODE = DecodeConfig(temperature=0.0, top_p=1.0, max_new_tokens=1024, seed=3)


@pytest.fixture(autouse=True)
def isolated_imports(monkeypatch):
    """Stand-ins go on sys.path and into sys.modules; both are restored after each test."""
    before = set(sys.modules)
    monkeypatch.setattr(sys, "path", list(sys.path))
    yield
    for name in set(sys.modules) - before:
        module = sys.modules.get(name)
        origin = str(getattr(module, "__file__", "") or "")
        if origin.startswith(str(STANDINS)) or name.split(".")[0] in STANDIN_TOPS:
            del sys.modules[name]


STANDIN_TOPS = {
    "kimia_infer", "speech_tokenizer", "flow_inference", "inference", "utils", "generate",
    "inference_s2s", "slam_llm", "s2s_config", "models", "bin", "generation", "constants",
    "cosy24k_vocoder", "llama_omni2", "transformers_standin",
}  # fmt: skip


@pytest.fixture
def wavs(tmp_path) -> list[str]:
    """Three user turns: 1.2 s tones at 16 kHz, different pitches."""
    out = []
    for k, hz in enumerate((180.0, 200.0, 220.0), start=1):
        t = np.arange(int(16000 * 1.2)) / 16000
        path = tmp_path / f"user{k}.wav"
        write_wav(path, 0.3 * np.sin(2 * np.pi * hz * t), 16000)
        out.append(str(path))
    return out


def user(wav: str, k: int) -> Turn:
    return Turn("user", f"w{k} request", wav, 16000)


def three_turns(model, wavs: list[str]) -> list[Turn]:
    """Drive ``model`` through three turns, keeping history as the runner does (raw included)."""
    history: list[Turn] = []
    replies = []
    for k, wav in enumerate(wavs, start=1):
        reply = model.respond(tuple(history), user(wav, k), DECODE)
        assert reply.role == "assistant" and Path(reply.audio).is_file()
        json.dumps(reply.raw)  # stored in the respond record, handed back as history
        replies.append(reply)
        history += [user(wav, k), reply]
    json.dumps(model.describe())  # goes into manifest.json
    return replies


def standin_module(name: str, source_module: str) -> types.ModuleType:
    """A module called ``name`` exposing every public attribute of a stand-in module."""
    __import__(source_module)
    src = sys.modules[source_module]
    mod = types.ModuleType(name)
    mod.__dict__.update({k: v for k, v in vars(src).items() if not k.startswith("__")})
    mod.__version__ = "stand-in"
    return mod


def calls(module: str, kind: str) -> list:
    return [c for c in sys.modules[module].CALLS if c[0] == kind]


# ---------------------------------------------------------------- kimi-audio ------------------
def test_kimi_audio_contract_with_standin(wavs):
    from stylebench.model_wrappers.kimi_audio import OFFICIAL_SAMPLING, KimiAudioModel

    model = KimiAudioModel(path=str(STANDINS), repo=str(STANDINS / "kimi_audio"))
    replies = three_turns(model, wavs)
    gens = calls("kimia_infer.api.kimia", "generate")
    assert len(gens) == 3
    # kimia_infer/api/kimia.py KimiAudio.generate(chats, output_type="both", **sampling_params)
    # with the sampling of infer.py; messages as prompt_manager.get_prompt reads them, earlier
    # replies as message_type "audio-text" [wav, text] (official infer.py multi-turn example)
    chats, output_type, sampling = gens[2][1:]
    assert output_type == "both" and sampling == OFFICIAL_SAMPLING
    assert chats == [
        {"role": "user", "message_type": "audio", "content": wavs[0]},
        {
            "role": "assistant",
            "message_type": "audio-text",
            "content": [replies[0].audio, "stand-in reply 1"],
        },
        {"role": "user", "message_type": "audio", "content": wavs[1]},
        {
            "role": "assistant",
            "message_type": "audio-text",
            "content": [replies[1].audio, "stand-in reply 2"],
        },
        {"role": "user", "message_type": "audio", "content": wavs[2]},
    ]
    assert calls("kimia_infer.api.kimia", "init") == [("init", str(STANDINS), True)]
    # infer.py writes the returned wav at 24 kHz
    data, sr = sf.read(replies[2].audio)
    assert sr == replies[2].sr == 24000 and len(data) == 12000
    assert abs(float(np.max(np.abs(data))) - 0.5) < 1e-3
    desc = model.describe()
    assert desc["history"].startswith("audio") and desc["output_sr"] == 24000
    assert desc["sampling"] == OFFICIAL_SAMPLING and desc["code_revision"]


def test_kimi_audio_text_history_and_old_checkout(wavs, tmp_path):
    from stylebench.model_wrappers.kimi_audio import KimiAudioModel

    old = tmp_path / "old-kimi"
    shutil.copytree(STANDINS / "kimi_audio", old)
    pm = old / "kimia_infer" / "api" / "prompt_manager.py"
    pm.write_text(pm.read_text().replace('"audio-text"', '"audio-text-not-yet"'))
    with pytest.raises(ValueError, match="history=text"):
        KimiAudioModel(path=str(STANDINS), repo=str(old))
    model = KimiAudioModel(path=str(STANDINS), repo=str(old), history="text")
    replies = three_turns(model, wavs)
    chats = calls("kimia_infer.api.kimia", "generate")[-1][1]
    assert chats[1] == {"role": "assistant", "message_type": "text", "content": replies[0].text}
    assert model.describe()["history"].startswith("text fallback")


def test_kimi_audio_run_sampling_maps_only_the_text_temperature(wavs):
    from stylebench.model_wrappers.kimi_audio import OFFICIAL_SAMPLING, KimiAudioModel

    model = KimiAudioModel(path=str(STANDINS), repo=str(STANDINS / "kimi_audio"), sampling="run")
    model.respond((), user(wavs[0], 1), DecodeConfig(temperature=0.7))
    sampling = calls("kimia_infer.api.kimia", "generate")[-1][3]
    assert sampling == {**OFFICIAL_SAMPLING, "text_temperature": 0.7}


# ---------------------------------------------------------------- glm-4-voice -----------------
@pytest.fixture
def glm(monkeypatch, tmp_path):
    decoder = tmp_path / "glm-4-voice-decoder"
    decoder.mkdir()
    (decoder / "config.yaml").write_text("stand-in: true\n")
    repo = STANDINS / "glm4_voice"
    monkeypatch.syspath_prepend(str(repo))
    monkeypatch.setitem(
        sys.modules, "transformers", standin_module("transformers", "transformers_standin")
    )
    from stylebench.model_wrappers.glm4_voice import GLM4VoiceModel

    return GLM4VoiceModel(
        path=str(STANDINS), repo=str(repo), decoder=str(decoder), tokenizer="tok", device="cpu"
    )


def test_glm4_voice_contract_with_standin(glm, wavs):
    replies = three_turns(glm, wavs)
    hf = sys.modules["transformers_standin"]
    prompts = [c[1][0] for c in hf.CALLS if c[0] == "tokenize"]
    utils = sys.modules["speech_tokenizer.utils"]
    tok = utils.extract_speech_token(None, None, [wavs[0]])[0]
    block = "<|begin_of_audio|>" + "".join(f"<|audio_{t}|>" for t in tok) + "<|end_of_audio|>"
    # web_demo.py inference_fn: system prompt of the audio branch once, then per turn
    # "<|user|>\n{audio tokens}<|assistant|>streaming_transcription\n", earlier completions kept
    head = "<|system|>\nSTAND-IN speech system prompt. <|user|>\n" + block
    assert prompts[0] == head + "<|assistant|>streaming_transcription\n"
    completion1 = replies[0].raw["glm4_completion"]
    assert completion1.startswith("w1 w2 ") and completion1.endswith("<|audio_79|>")
    assert "<|user|>" not in completion1  # generation ends at <|user|>; the stray token is dropped
    assert prompts[1].startswith(
        head + "<|assistant|>streaming_transcription\n" + completion1 + "<|user|>\n"
    )
    assert prompts[2].count("<|assistant|>streaming_transcription\n") == 3
    # model_server.py generate_stream: max_new_tokens, temperature, top_p (web demo defaults)
    gens = [c for c in hf.CALLS if c[0] == "generate"]
    assert gens[0] == ("generate", 2000, 0.2, 0.8)
    # web_demo.py streams 80 audio tokens to flow_inference.AudioDecoder.token2wav in blocks of
    # 25, 50, then the rest, each conditioned on the tokens and mels before it; last one final
    dec = [c for c in sys.modules["flow_inference"].CALLS if "n_tokens" in c][:3]
    assert [c["n_tokens"] for c in dec] == [25, 50, 5]
    assert [c["prompt_token_len"] for c in dec] == [0, 25, 75]
    assert [c["prompt_feat_shape"] for c in dec] == [(1, 0, 80), (1, 50, 80), (1, 150, 80)]
    assert [c["finalize"] for c in dec] == [False, False, True]
    assert len({c["uuid"] for c in dec}) == 1
    assert replies[0].text == " ".join(f"w{i}" for i in range(1, 21))
    assert replies[0].sr == 22050 and sf.info(replies[0].audio).samplerate == 22050
    assert sf.info(replies[0].audio).frames == 80 * 512


def test_glm4_voice_rebuilds_a_missing_completion(glm, wavs):
    first = glm.respond((), user(wavs[0], 1), DECODE)
    bare = Turn("assistant", first.text, first.audio, first.sr)  # no raw: record from elsewhere
    reply = glm.respond((user(wavs[0], 1), bare), user(wavs[1], 2), DECODE)
    assert reply.raw["history_rebuilt"] is True
    prompt = [c[1][0] for c in sys.modules["transformers_standin"].CALLS if c[0] == "tokenize"][-1]
    rebuilt = prompt.split("streaming_transcription\n")[1].split("<|user|>")[0]
    # 13 text tokens, then 26 audio tokens of the re-tokenised reply, as the model interleaves
    assert rebuilt.startswith("w1 w2 w3 w4 w5 w6 w7 w8 w9 w10 w11 w12 w13 <|audio_")
    assert rebuilt.count("<|audio_") == int(80 * 512 / 22050 * 12.5)


def test_glm4_voice_needs_the_decoder_folder(monkeypatch):
    monkeypatch.setitem(sys.modules, "transformers", types.ModuleType("transformers"))
    from stylebench.model_wrappers.glm4_voice import GLM4VoiceModel

    with pytest.raises(MissingExtraError, match="glm-4-voice-decoder"):
        GLM4VoiceModel(path=str(STANDINS), repo=str(STANDINS / "glm4_voice"))


# ---------------------------------------------------------------- mini-omni, mini-omni2 -------
@pytest.mark.parametrize(
    ("registry_name", "folder", "text"),
    [("mini-omni", "mini_omni", "w1 w2 w3 w4 w5"), ("mini-omni2", "mini_omni2", "w6 w7 w8")],
)
def test_mini_omni_contract_with_standin(registry_name, folder, text, wavs, tmp_path):
    from stylebench.model_wrappers.registry import MODELS

    ckpt = tmp_path / "checkpoint"
    ckpt.mkdir()
    model = MODELS.load(registry_name)(path=str(ckpt), repo=str(STANDINS / folder), device="cpu")
    replies = three_turns(model, wavs)
    # inference.py OmniInference(ckpt_dir, device), then run_AT_batch_stream(audio_path, ...)
    # with its defaults; single-turn: each call sees only that turn's own audio
    assert calls("inference", "init") == [("init", str(ckpt), "cpu")]
    runs = calls("inference", "run")
    assert [r[1] for r in runs] == wavs
    assert runs[0][2:] == (2048, 0.9, 1, 1.0)
    # the text layer is cut at its end-of-text id (inference.py A1_A2)
    assert [r.text for r in replies] == [text] * 3
    assert replies[2].raw["n_turns_ignored"] == 2
    assert model.describe()["history"].startswith("none")
    data, sr = sf.read(replies[0].audio)
    assert sr == replies[0].sr == 24000 and len(data) == 12000


def test_mini_omni_decodes_the_complete_snac_streams(wavs, tmp_path):
    from stylebench.model_wrappers.mini_omni import MiniOmniModel

    model = MiniOmniModel(path=str(tmp_path), repo=str(STANDINS / "mini_omni"), device="cpu")
    model.respond((), user(wavs[0], 1), DECODE)
    # utils/snac_utils.py: the 7 SNAC layers (not the text layer) -> reconscruct_snac ->
    # reconstruct_tensors -> snacmodel.decode, as inference.py A1_A2 does after generation
    assert calls("utils.snac_utils", "reconscruct_snac") == [("reconscruct_snac", [20] * 7)]
    assert calls("inference", "snac.decode") == [("snac.decode", [(1, 13)])]


def test_mini_omni_needs_a_local_checkpoint(wavs):
    from stylebench.model_wrappers.mini_omni import MiniOmniModel

    with pytest.raises(MissingExtraError, match="huggingface-cli download gpt-omni/mini-omni"):
        MiniOmniModel(repo=str(STANDINS / "mini_omni"))


# ---------------------------------------------------------------- slam-omni -------------------
SLAM_YAML = """\
model_config:
  file: examples/s2s/model/slam_model_s2s.py:model_factory
  code_type: CosyVoice
dataset_config:
  do_layershift: false
decode_config:
  max_new_tokens: 3000
  do_sample: false
  top_k: 0
ckpt_path: /ckpt/model.pt
speech_sample_rate: 22050
"""


@pytest.fixture
def slam(tmp_path):
    pytest.importorskip("omegaconf", reason="the dev extra installs omegaconf")
    config = tmp_path / "slam_omni.yaml"
    config.write_text(SLAM_YAML)
    from stylebench.model_wrappers.slam_omni import SlamOmniModel

    return SlamOmniModel(config=str(config), repo=str(STANDINS / "slam_llm"), device="cpu")


def test_slam_omni_contract_with_standin(slam, wavs):
    replies = three_turns(slam, wavs)
    gen = sys.modules["generate.generate_s2s_online_multi_round"].CALLS
    # generate_s2s_online_multi_round.py main(): the history string grows by
    # "USER: <whisper transcript> " + "ASSISTANT: <reply text>" + " " per round
    assert [c["history"] for c in gen] == [
        "",
        "USER: heard 1 ASSISTANT: reply 1 ",
        "USER: heard 1 ASSISTANT: reply 1 USER: heard 2 ASSISTANT: reply 2 ",
    ]
    assert [c["wav"] for c in gen] == wavs
    # the script's --config-name prompt.yaml: the system prompt comes from the checkout's conf
    assert {c["prompt"] for c in gen} == {"STAND-IN conversation prompt. "}
    # decode_config from the run configuration (the shell script's values over the defaults),
    # layer_shift = simple_shift when do_layershift is false, "default_tone" without a prompt
    assert gen[0]["decode"] == {
        "do_sample": False,
        "max_new_tokens": 3000,
        "temperature": 1.0,
        "top_k": 0,
        "top_p": 1.0,
        "decode_text_only": False,
    }
    assert gen[0]["layer_shift"] == "simple_shift" and gen[0]["tone_dir"] == "default_tone"
    assert gen[0]["output_text_only"] is False
    # get_custom_model_factory found the model file relative to the checkout, not the cwd
    assert slam.model.to.__globals__["CALLS"][:3] == [
        ("model_factory", "/ckpt/model.pt"),
        ("to", "cpu"),
        ("eval",),
    ]
    assert replies[0].text == "reply 1" and replies[0].raw["slam_user_transcript"] == " heard 1 "
    assert replies[0].sr == 22050 and sf.info(replies[0].audio).samplerate == 22050
    assert slam.describe()["output_sr"] == 22050


def test_slam_omni_substitutes_the_dialogue_transcript_and_maps_run_sampling(slam, wavs, tmp_path):
    first = slam.respond((), user(wavs[0], 1), DECODE)
    bare = Turn("assistant", first.text, first.audio, first.sr)
    slam.sampling_mode = "run"
    reply = slam.respond((user(wavs[0], 1), bare), user(wavs[1], 2), DecodeConfig(temperature=0.5))
    last = sys.modules["generate.generate_s2s_online_multi_round"].CALLS[-1]
    assert last["history"] == "USER: w1 request ASSISTANT: reply 1 "
    assert reply.raw["history_transcript_substituted"] is True
    assert last["decode"]["temperature"] == 0.5 and last["decode"]["do_sample"] is True


def test_slam_omni_needs_its_run_configuration():
    pytest.importorskip("omegaconf", reason="the dev extra installs omegaconf")
    from stylebench.model_wrappers.slam_omni import SlamOmniModel

    with pytest.raises(MissingExtraError, match="config=/path.yaml"):
        SlamOmniModel(repo=str(STANDINS / "slam_llm"))


# ---------------------------------------------------------------- freeze-omni -----------------
@pytest.fixture
def freeze(tmp_path):
    ckpt, llm = tmp_path / "checkpoints", tmp_path / "Qwen2-7B-Instruct"
    ckpt.mkdir()
    llm.mkdir()
    from stylebench.model_wrappers.freeze_omni import FreezeOmniModel

    return FreezeOmniModel(path=str(ckpt), llm_path=str(llm), repo=str(STANDINS / "freeze_omni"))


def test_freeze_omni_contract_with_standin(freeze, wavs):
    replies = three_turns(freeze, wavs)
    pipe = sys.modules["models.pipeline"].CALLS
    # bin/inference.py: the system role is set once with stat="pre"; README sampling
    assert [c for c in pipe if c[0] == "pre"] == [("pre", "STAND-IN system role.")]
    assert pipe[0][3:] == (20, 0.8)
    # bin/server.py send_pcm: the next utterance starts from the previous reply's KV cache with
    # adapter/encoder caches reset and pe_index 0; each turn listens to its own audio
    starts = [c for c in pipe if c[0] == "listen-start"]
    assert [c[2:] for c in starts] == [(None, None, 0)] * 3
    assert starts[0][1] == ("system:STAND-IN system role.",)
    assert starts[1][1][-5:] == ("Hel", "lo.", " Again", "!", "end")
    assert starts[2][1][: len(starts[1][1])] == starts[1][1]  # turn 3 extends turn 2's state
    # bin/inference.py inference(): one decoder call per finished sentence, with its hidden
    # states and the official codec settings (40, 10, top-k 2)
    dec = [c for c in sys.modules["bin.inference"].CALLS if c[0] == "decoder"]
    assert dec[:2] == [("decoder", "Hello.", 2, 40, 10, 2), ("decoder", " Again!", 2, 40, 10, 2)]
    assert [r.text for r in replies] == ["Hello. Again!"] * 3
    assert [r.raw["history_replayed"] for r in replies] == [False, False, False]
    assert replies[0].sr == 24000 and sf.info(replies[0].audio).frames == 12000


def test_freeze_omni_replays_history_it_did_not_see(freeze, wavs):
    first = freeze.respond((), user(wavs[0], 1), DECODE)
    fresh = type(freeze)(
        path=str(freeze.ckpt), llm_path=str(freeze.llm), repo=str(STANDINS / "freeze_omni")
    )
    n_decoder = len([c for c in sys.modules["bin.inference"].CALLS if c[0] == "decoder"])
    reply = fresh.respond((user(wavs[0], 1), first), user(wavs[1], 2), DECODE)
    assert reply.raw["history_replayed"] is True
    starts = [c for c in sys.modules["models.pipeline"].CALLS if c[0] == "listen-start"]
    assert starts[-1][1][-5:] == ("Hel", "lo.", " Again", "!", "end")  # turn 1 regenerated
    dec = [c for c in sys.modules["bin.inference"].CALLS if c[0] == "decoder"]
    assert len(dec) - n_decoder == 2  # the replayed reply is not synthesised again


def test_freeze_omni_keeps_state_through_the_runner(freeze, wavs, tmp_path):
    """Through stages/respond.py: replies are copied into the run folder, state still found."""
    from stylebench.records import Sample, UserTurn
    from stylebench.stages.respond import run_respond
    from stylebench.store import RunStore

    turns = tuple(UserTurn(f"w{k} request", w, 16000, "x") for k, w in enumerate(wavs, 1))
    sample = Sample("s1", "t", "pitch", "intensify", "en", "v", "content", turns)
    store = RunStore(tmp_path / "run")
    counts = run_respond(store, [sample], freeze, "fp", DECODE, Path("/"), progress=False)
    assert counts["ok"] == 3
    records = store.load("respond")
    assert [records[("s1", k)].raw["history_replayed"] for k in (1, 2, 3)] == [False] * 3


# ---------------------------------------------------------------- minicpm-o-2.6 ---------------
@pytest.fixture
def minicpm_hf(monkeypatch):
    monkeypatch.syspath_prepend(str(STANDINS / "minicpm_o"))
    module = standin_module("transformers", "transformers_standin")
    monkeypatch.setitem(sys.modules, "transformers", module)
    return sys.modules["transformers_standin"]


def test_minicpm_o_contract_with_standin(minicpm_hf, wavs, tmp_path):
    from stylebench.model_wrappers.minicpm_o import OFFICIAL_SAMPLING, MiniCPMOModel

    ref = tmp_path / "ref.wav"
    write_wav(ref, 0.2 * np.sin(np.arange(24000) / 24000 * 2 * np.pi * 150), 24000)
    model = MiniCPMOModel(
        path=str(STANDINS), mode="audio_roleplay", ref_audio=str(ref), device="cpu"
    )
    replies = three_turns(model, wavs)
    # README "Speech Conversation": init_tts(), tts.float(), get_sys_prompt(ref_audio (16 kHz
    # ndarray), mode, language)
    kinds = [c[0] for c in minicpm_hf.CALLS]
    assert kinds[:4] == ["AutoModel", "to", "init_tts", "tts.float"]
    assert minicpm_hf.CALLS[0][2:] == ("sdpa", "torch.bfloat16")
    assert [c for c in minicpm_hf.CALLS if c[0] == "get_sys_prompt"] == [
        ("get_sys_prompt", (16000,), "audio_roleplay", "en")
    ]
    chats = [c for c in minicpm_hf.CALLS if c[0] == "chat"]
    msgs, max_new, sampling, tts_template, gen_audio, out_path, kwargs = chats[2][1:]
    # msgs = [sys_prompt, user audio, assistant text, user audio, assistant text, user audio]
    assert [m["role"] for m in msgs] == ["user", "user", "assistant", "user", "assistant", "user"]
    assert msgs[0]["content"][0] == "STAND-IN clone prefix"
    for k, m in zip((0, 1, 2), msgs[1::2], strict=True):
        (audio,) = m["content"]
        assert isinstance(audio, np.ndarray) and audio.shape == (int(1.2 * 16000),)
        want = sf.read(wavs[k])[0]
        assert np.allclose(audio, want, atol=2e-4)  # already at 16 kHz: unchanged
    assert msgs[2]["content"] == "stand-in answer 1" and msgs[4]["content"] == "stand-in answer 2"
    # chat(..., sampling=True, max_new_tokens=128, use_tts_template=True, generate_audio=True,
    # temperature=0.3, output_audio_path=...) as in the README
    assert (max_new, sampling, tts_template, gen_audio) == (128, True, True, True)
    assert kwargs == {"temperature": OFFICIAL_SAMPLING["temperature"]}
    assert out_path == replies[2].audio
    assert replies[2].sr == 24000 and replies[2].text == "stand-in answer 3"
    assert model.describe()["mode"] == "audio_roleplay"


def test_minicpm_o_rejects_an_unknown_mode(minicpm_hf):
    from stylebench.model_wrappers.minicpm_o import MiniCPMOModel

    with pytest.raises(ValueError, match="audio_assistant, audio_roleplay, default"):
        MiniCPMOModel(path=str(STANDINS), mode="roleplay")


# ---------------------------------------------------------------- baichuan-omni-1.5 -----------
@pytest.fixture
def baichuan(monkeypatch):
    repo = STANDINS / "baichuan"
    monkeypatch.syspath_prepend(str(repo))
    monkeypatch.setitem(
        sys.modules, "transformers", standin_module("transformers", "transformers_standin")
    )
    from stylebench.model_wrappers.baichuan_omni import BaichuanOmniModel

    return BaichuanOmniModel(path=str(STANDINS), repo=str(repo), device="cpu")


def test_baichuan_omni_contract_with_standin(baichuan, wavs):
    replies = three_turns(baichuan, wavs)
    hf = sys.modules["transformers_standin"].CALLS
    prompts = [c[1][0] for c in hf if c[0] == "processor"]

    def ref(kind: str, path: str) -> str:
        start, end = ("<a_start>", "<a_end>") if kind == "audio" else ("<gen_start>", "<gen_end>")
        return start + '{"path": "' + path + '"}' + end

    # s2s_gradio_demo_cosy_multiturn.py generate_one_turn + preprocess_messages: system prompt
    # (the demo's default), user audio references, assistant text interleaved with its audio
    # segments, each assistant turn and the open answer prefixed by the audiogen marker
    seg = replies[0].raw["baichuan_segments"]
    content1 = "w10 w11 " + ref("gen", seg[0]) + "w12 " + ref("gen", seg[1])
    assert replies[0].raw["baichuan_content"] == content1
    assert prompts[0] == "<SYS>STAND-IN voice prompt<Q>" + ref("audio", wavs[0]) + "<AUDIOTEXT><A>"
    assert prompts[1] == (
        "<SYS>STAND-IN voice prompt<Q>" + ref("audio", wavs[0]) + "<AUDIOTEXT><A>" + content1
        + "<Q>" + ref("audio", wavs[1]) + "<AUDIOTEXT><A>"
    )  # fmt: skip
    # generate_text_step / generate_audio_step settings of the demo
    text_steps = [c for c in hf if c[0] == "text"][:2]
    assert text_steps[0] == ("text", None, ["<gen_start>", "<|endoftext|>"], 50, 0.8, 20, 0.85, 1.1)
    stops = ["<gen_start>", ",", "!", "?", "，", "。", "！", "？", ". "]
    assert text_steps[1] == ("text", "kv7", stops, 50, 0.3, 20, 0.85, 1.05)
    gen = sys.modules["generation"].CALLS
    audio_steps = [c for c in gen if c[0] == "audio"][:2]
    assert audio_steps == [("audio", 6, "kv6", 500, 0.5, 5, 0.85, 1.3),
                           ("audio", 9, "kv9", 500, 0.5, 5, 0.85, 1.3)]  # fmt: skip
    # generation.py decode_save_concat joins the turn's segments at 24 kHz, 10 ms overlap
    assert [c for c in gen if c[0] == "decode_save_concat"][0] == (
        "decode_save_concat",
        2,
        24000,
        240,
    )
    assert sf.info(replies[0].audio).frames == 2 * 4800 + 240
    assert [r.text for r in replies] == ["w10 w11 w12"] * 3
    assert ("bind_processor", False, "/") in hf


def test_baichuan_omni_falls_back_to_the_whole_reply(baichuan, wavs):
    first = baichuan.respond((), user(wavs[0], 1), DECODE)
    bare = Turn("assistant", first.text, first.audio, first.sr)
    reply = baichuan.respond((user(wavs[0], 1), bare), user(wavs[1], 2), DECODE)
    prompt = [c[1][0] for c in sys.modules["transformers_standin"].CALLS if c[0] == "processor"][-1]
    assert "<A>w10 w11 w12<gen_start>" + '{"path": "' + first.audio + '"}<gen_end><Q>' in prompt
    assert reply.raw["history_rebuilt"] is True


# ---------------------------------------------------------------- llama-omni2 -----------------
@pytest.fixture
def llama_omni2(monkeypatch, tmp_path):
    repo = STANDINS / "llama_omni2"
    monkeypatch.syspath_prepend(str(repo))
    monkeypatch.setitem(
        sys.modules, "transformers", standin_module("transformers", "transformers_standin")
    )
    monkeypatch.setitem(sys.modules, "whisper", standin_module("whisper", "whisper_standin"))
    decoder = tmp_path / "cosy2_decoder"
    decoder.mkdir()
    from stylebench.model_wrappers.llama_omni2 import LlamaOmni2Model

    return LlamaOmni2Model(
        path=str(STANDINS), decoder=str(decoder), repo=str(repo), speech_encoder="/w/large-v3.pt",
        device="cpu",
    )  # fmt: skip


def test_llama_omni2_contract_with_standin(llama_omni2, wavs):
    replies = three_turns(llama_omni2, wavs)
    # run_llama_omni2.py load_pretrained_model: tts_tokenizer inside the checkpoint, bf16
    loads = sys.modules["llama_omni2.model"].CALLS
    assert loads[0] == (
        "from_pretrained", str(STANDINS), str(STANDINS / "tts_tokenizer"), "/w/large-v3.pt",
        "torch.bfloat16",
    )  # fmt: skip
    # MultiturnSpeechDataset: user turns are <speech>, assistant turns are the reply texts
    chats = [
        c[1] for c in sys.modules["transformers_standin"].CALLS if c[0] == "apply_chat_template"
    ]
    assert chats[2] == [
        {"role": "user", "content": "<speech>"},
        {"role": "assistant", "content": "stand-in reply"},
        {"role": "user", "content": "<speech>"},
        {"role": "assistant", "content": "stand-in reply"},
        {"role": "user", "content": "<speech>"},
    ]
    gens = [c for c in loads if c[0] == "generate"]
    # the <speech> id is replaced by SPEECH_TOKEN_INDEX; one 128-mel matrix per user turn;
    # eval_model's generate arguments with the README's --temperature 0 (greedy)
    assert gens[2][1].count(-200) == 3 and 7 not in gens[2][1]
    assert gens[2][2] == (3, 3000, 128)
    assert gens[2][3:] == (False, None, None, None, 1, 256, True, 0)
    whisper_calls = sys.modules["whisper_standin"].CALLS
    assert [c[1] for c in whisper_calls[-3:]] == wavs
    # run_cosy2_decoder.py: units -> SpeechDecoder.entry(units, prompt_en.wav at 16 kHz)
    entries = [
        c for c in sys.modules["llama_omni2.inference.run_cosy2_decoder"].CALLS if c[0] == "entry"
    ]
    assert entries[0] == ("entry", [12, 7, 7, 30], "prompt:prompt_en.wav@16000", False)
    assert replies[0].text == "stand-in reply" and replies[0].sr == 24000
    assert sf.info(replies[0].audio).samplerate == 24000


def test_llama_omni2_unit_parsing():
    from stylebench.model_wrappers.llama_omni2 import unit_list

    assert unit_list("<12><7> 30") == [12, 7, 30]
    assert unit_list([[1, 2], [3]]) == [1, 2, 3]
    assert unit_list(np.array([4, 5])) == [4, 5]


# ---------------------------------------------------------------- missing package / weights ---
@pytest.fixture(scope="module")
def tiny_set(tmp_path_factory) -> Path:
    """Two pitch samples in English (espeak-ng, a few seconds): enough for `stylebench run`."""
    from stylebench.dialogues.builder import BuildSpec, build_set
    from stylebench.synth.espeak import EspeakSynth, voices_for

    out = tmp_path_factory.mktemp("sets") / "tiny"
    spec = BuildSpec(dims=("pitch",), langs=("en",), per_cell=1, voices_per_lang=1, seed=1)
    build_set(out, spec, EspeakSynth(), {"en": voices_for("en")})
    return out


@pytest.mark.parametrize(
    ("model", "hint"),
    [
        ("kimi-audio", "git clone https://github.com/MoonshotAI/Kimi-Audio"),
        ("glm-4-voice", "git clone --recurse-submodules https://github.com/THUDM/GLM-4-Voice"),
        ("mini-omni", "git clone https://github.com/gpt-omni/mini-omni"),
        ("freeze-omni", "git clone https://github.com/VITA-MLLM/Freeze-Omni"),
    ],
)
def test_cli_run_without_the_package_prints_one_install_line(model, hint, tiny_set, tmp_path):
    cmd = [sys.executable, "-m", "stylebench.cli", "--no-progress", "run", "--model", model]
    cmd += ["--dim", "pitch", "--dialogues", str(tiny_set), "--out", str(tmp_path / "runs")]
    done = subprocess.run(cmd, capture_output=True, text=True, cwd=tmp_path, timeout=120)
    assert done.returncode == 2, done.stderr
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("stylebench: "), done.stderr
    assert hint in lines[0] and f"docs/models.md#{model}" in lines[0]
    assert "Traceback" not in done.stderr + done.stdout


def test_models_lists_every_repo_wrapper_with_its_status(capsys):
    from stylebench.cli import main

    assert main(["models"]) == 0
    rows = {line.split()[0]: line for line in capsys.readouterr().out.splitlines()}
    for name in ("kimi-audio", "glm-4-voice", "mini-omni", "mini-omni2", "slam-omni",
                 "freeze-omni", "baichuan-omni-1.5", "llama-omni2"):  # fmt: skip
        assert "missing package" in rows[name] and "git clone" in rows[name], rows[name]
    # transformers is importable here, the checkpoint is not cached
    assert "missing weights" in rows["minicpm-o-2.6"] or "available" in rows["minicpm-o-2.6"]


def test_a_hub_id_that_cannot_be_loaded_becomes_the_install_line(minicpm_hf, monkeypatch, tmp_path):
    """A loader's OSError for weights that are not here is reported as one actionable line."""
    from stylebench.model_wrappers.minicpm_o import MiniCPMOModel

    monkeypatch.setenv("HF_HUB_CACHE", str(tmp_path))

    def offline(*args, **kwargs):
        raise OSError("We couldn't connect to 'https://huggingface.co' to load this file")

    monkeypatch.setattr(sys.modules["transformers"].AutoModel, "from_pretrained", offline)
    with pytest.raises(MissingExtraError, match="huggingface-cli download openbmb/MiniCPM-o-2_6"):
        MiniCPMOModel(path="openbmb/MiniCPM-o-2_6")
