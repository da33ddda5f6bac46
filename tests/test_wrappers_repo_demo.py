"""Contract tests of the repo-based model wrappers (minicpm-o-2.6, baichuan-omni-1.5, llama-omni2), against NAMED STAND-INS of the
official code.

The real packages and weights cannot run here (no GPU, no downloads). Each test puts a stand-in
of the official repository (tests/standins/<model>: same module names, functions and signatures,
no weights; e.g. ``StandInKimiAudio`` under the official class name) on the path through the
wrapper's own ``repo=`` argument, or installs a stand-in ``transformers`` module, then drives the
wrapper through a three-turn dialogue and checks the exact calls and message structures the
official code expects. The official file and function each structure comes from is cited beside
the assertion. Passing shows the wrapper speaks the official interface, not that the model works.
The stand-ins compute with torch: without it these tests skip.
"""

from __future__ import annotations

import sys

import numpy as np
import pytest
import soundfile as sf
from standins import harness
from standins.harness import DECODE, STANDINS, standin_module, three_turns, user

from stylebench.audio import write_wav
from stylebench.records import Turn
from stylebench.registry import MissingExtraError

pytest.importorskip("torch", reason="the stand-ins of the official code compute with torch")
isolated_imports = harness.isolated_imports  # autouse: stand-ins leave sys.path/sys.modules
wavs = harness.wavs


# ---------------------------------------------------------------- minicpm-o-2.6 ---------------
@pytest.fixture
def minicpm_hf(monkeypatch):
    monkeypatch.syspath_prepend(str(STANDINS / "minicpm_o"))
    module = standin_module("transformers", "transformers_standin")
    monkeypatch.setitem(sys.modules, "transformers", module)
    return sys.modules["transformers_standin"]


def test_minicpm_o_contract_with_standin(minicpm_hf, wavs, tmp_path):
    from stylebench.model_wrappers.hf.minicpm_o import OFFICIAL_SAMPLING, MiniCPMOModel

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


def test_minicpm_o_on_cuda_n_makes_gpu_n_current_before_the_vocoder_is_built(
    minicpm_hf, monkeypatch
):
    """The checkpoint's init_tts builds its vocoder with Vocos(...).to("cuda")
    (modeling_minicpmo.py, initialize_vocos), i.e. on the current GPU: device=cuda:N makes GPU N
    current before the model and its vocoder are built (torch.cuda.set_device is recorded,
    no GPU needed)."""
    import torch

    from stylebench.model_wrappers.hf.minicpm_o import MiniCPMOModel

    monkeypatch.setattr(torch.cuda, "set_device", lambda n: minicpm_hf.CALLS.append(("set", n)))
    MiniCPMOModel(path=str(STANDINS), device="cuda:2")
    kinds = [c[0] for c in minicpm_hf.CALLS]
    assert ("set", 2) in minicpm_hf.CALLS
    assert kinds.index("set") < kinds.index("AutoModel") < kinds.index("init_tts")
    assert ("to", "cuda:2") in minicpm_hf.CALLS
    minicpm_hf.CALLS.clear()
    MiniCPMOModel(path=str(STANDINS), device="cpu")
    assert "set" not in [c[0] for c in minicpm_hf.CALLS]


def test_minicpm_o_rejects_an_unknown_mode(minicpm_hf):
    from stylebench.model_wrappers.hf.minicpm_o import MiniCPMOModel

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
    from stylebench.model_wrappers.repo.baichuan_omni import BaichuanOmniModel

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
        "<SYS>STAND-IN voice prompt<Q>"
        + ref("audio", wavs[0])
        + "<AUDIOTEXT><A>"
        + content1
        + "<Q>"
        + ref("audio", wavs[1])
        + "<AUDIOTEXT><A>"
    )
    # generate_text_step / generate_audio_step settings of the demo
    text_steps = [c for c in hf if c[0] == "text"][:2]
    assert text_steps[0] == ("text", None, ["<gen_start>", "<|endoftext|>"], 50, 0.8, 20, 0.85, 1.1)
    stops = ["<gen_start>", ",", "!", "?", "，", "。", "！", "？", ". "]
    assert text_steps[1] == ("text", "kv7", stops, 50, 0.3, 20, 0.85, 1.05)
    gen = sys.modules["generation"].CALLS
    audio_steps = [c for c in gen if c[0] == "audio"][:2]
    assert audio_steps == [
        ("audio", 6, "kv6", 500, 0.5, 5, 0.85, 1.3),
        ("audio", 9, "kv9", 500, 0.5, 5, 0.85, 1.3),
    ]
    # the scored reply is what the model hears of itself later: its history segments, joined
    # with decode_save_concat's 10 ms cross-fade rule at 24 kHz, not a second (noisy) decode
    assert not [c for c in gen if c[0] == "decode_save_concat"]
    n_steps = len([c for c in gen if c[0] == "audio"])
    assert len([c for c in gen if c[0] == "decode_wave_vocoder"]) == n_steps == 6
    for reply in replies:
        pieces = [sf.read(p, dtype="float32")[0] for p in reply.raw["baichuan_segments"]]
        fade = np.linspace(1.0, 0.0, 240, dtype=np.float32)
        joined = np.concatenate(
            [pieces[0], pieces[0][-240:] * fade + pieces[1][:240] * fade[::-1], pieces[1]]
        )
        heard = sf.read(reply.audio, dtype="float32")[0]
        assert heard.shape == (2 * 4800 + 240,) and np.allclose(heard, joined, atol=1e-4)
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
    whisper_file = tmp_path / "w" / "large-v3.pt"
    whisper_file.parent.mkdir()
    whisper_file.write_bytes(b"stand-in")
    from stylebench.model_wrappers.repo.llama_omni2 import LlamaOmni2Model

    return LlamaOmni2Model(
        path=str(STANDINS),
        decoder=str(decoder),
        repo=str(repo),
        speech_encoder=str(whisper_file),
        device="cpu",
    )


def test_llama_omni2_speech_encoder_defaults_to_the_checkout(tmp_path, monkeypatch):
    from stylebench.model_wrappers.repo.llama_omni2 import speech_encoder_path
    from stylebench.registry import MissingExtraError

    checkout = tmp_path / "LLaMA-Omni2"
    rel = "models/speech_encoder/large-v3.pt"  # the released config's value (README line 41)
    with pytest.raises(MissingExtraError, match="speech_encoder=/path/to/large-v3.pt"):
        speech_encoder_path(None, rel, checkout)
    (checkout / "models" / "speech_encoder").mkdir(parents=True)
    (checkout / rel).write_bytes(b"stand-in")
    monkeypatch.chdir(tmp_path)  # not the checkout: the config's relative path must not matter
    assert speech_encoder_path(None, rel, checkout) == str((checkout / rel).resolve())
    assert speech_encoder_path(None, None, checkout) == str((checkout / rel).resolve())
    with pytest.raises(MissingExtraError, match="no Whisper-large-v3 at /nowhere.pt"):
        speech_encoder_path("/nowhere.pt", rel, checkout)


def test_llama_omni2_contract_with_standin(llama_omni2, wavs):
    replies = three_turns(llama_omni2, wavs)
    # run_llama_omni2.py load_pretrained_model: tts_tokenizer inside the checkpoint, bf16
    loads = sys.modules["llama_omni2.model"].CALLS
    assert loads[0] == (
        "from_pretrained",
        str(STANDINS),
        str(STANDINS / "tts_tokenizer"),
        llama_omni2.speech_encoder,
        "torch.bfloat16",
    )
    assert llama_omni2.speech_encoder.endswith("/w/large-v3.pt")
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


def test_a_hub_id_that_cannot_be_loaded_becomes_the_install_line(minicpm_hf, monkeypatch, tmp_path):
    """A loader's OSError for weights that are not here is reported as one actionable line."""
    from stylebench.model_wrappers.hf.minicpm_o import MiniCPMOModel

    monkeypatch.setenv("HF_HUB_CACHE", str(tmp_path))

    def offline(*args, **kwargs):
        raise OSError("We couldn't connect to 'https://huggingface.co' to load this file")

    monkeypatch.setattr(sys.modules["transformers"].AutoModel, "from_pretrained", offline)
    with pytest.raises(MissingExtraError, match="huggingface-cli download openbmb/MiniCPM-o-2_6"):
        MiniCPMOModel(path="openbmb/MiniCPM-o-2_6")
