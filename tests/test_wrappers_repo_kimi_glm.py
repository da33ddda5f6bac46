"""Contract tests of the repo-based model wrappers (kimi-audio, glm-4-voice), against NAMED STAND-INS of the
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

import shutil
import sys
import types

import numpy as np
import pytest
import soundfile as sf
from standins import harness
from standins.harness import DECODE, STANDINS, calls, standin_module, three_turns, user

from stylebench.records import DecodeConfig, Turn
from stylebench.registry import MissingExtraError

pytest.importorskip("torch", reason="the stand-ins of the official code compute with torch")
isolated_imports = harness.isolated_imports  # autouse: stand-ins leave sys.path/sys.modules
wavs = harness.wavs


# ---------------------------------------------------------------- kimi-audio ------------------
def test_kimi_audio_contract_with_standin(wavs):
    from stylebench.model_wrappers.repo.kimi_audio import OFFICIAL_SAMPLING, KimiAudioModel

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
    assert desc["history_kind"] == "own audio + text"
    assert desc["sampling"] == OFFICIAL_SAMPLING and desc["code_revision"]


def test_kimi_audio_text_history_and_old_checkout(wavs, tmp_path):
    from stylebench.model_wrappers.repo.kimi_audio import KimiAudioModel

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
    assert model.describe()["history_kind"] == "text only"


def test_kimi_audio_run_sampling_maps_only_the_text_temperature(wavs):
    from stylebench.model_wrappers.repo.kimi_audio import OFFICIAL_SAMPLING, KimiAudioModel

    model = KimiAudioModel(path=str(STANDINS), repo=str(STANDINS / "kimi_audio"), sampling="run")
    model.respond((), user(wavs[0], 1), DecodeConfig(temperature=0.7))
    sampling = calls("kimia_infer.api.kimia", "generate")[-1][3]
    assert sampling == {**OFFICIAL_SAMPLING, "text_temperature": 0.7}


def test_kimi_audio_flags_a_reply_cut_off_by_the_shrinking_budget(wavs, monkeypatch):
    """kimia.py:239: with output_type="both" the reply may use int(12.5 * 120) - prompt_len
    tokens; the prompt grows with every earlier turn (its reply audio included), so the same
    reply length fits on turn 1 and is cut off later. Each reply says so."""
    from stylebench.model_wrappers.common import RAW_TRUNCATED
    from stylebench.model_wrappers.repo.kimi_audio import KimiAudioModel

    model = KimiAudioModel(path=str(STANDINS), repo=str(STANDINS / "kimi_audio"))
    kimia = sys.modules["kimia_infer.api.kimia"]
    monkeypatch.setattr(kimia, "REPLY_STEPS", 1470)  # fits 1500 - a 17-token turn-1 prompt
    replies = three_turns(model, wavs)
    prompts = [r.raw["prompt_tokens"] for r in replies]
    assert prompts[0] == 17 and prompts[0] < prompts[1] < prompts[2]  # stand-in lengths
    assert [r.raw["token_budget"] for r in replies] == [1500 - n for n in prompts]
    assert [r.raw[RAW_TRUNCATED] for r in replies] == [False, True, True]
    assert "_generate_loop" not in vars(model.model)  # the official method again
    monkeypatch.setattr(kimia, "REPLY_STEPS", 40)
    short = model.respond((), user(wavs[0], 1), DECODE)
    assert short.raw[RAW_TRUNCATED] is False and short.raw["token_window"] == 1500


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
    from stylebench.model_wrappers.repo.glm4_voice import GLM4VoiceModel

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


def test_glm4_voice_says_temperature_0_decodes_its_audio_tokens_greedily(glm, wavs):
    """One generate call samples the interleaved text and audio tokens (model_server.py:95-103;
    web_demo.py:162 splits them by id): sampling=run at temperature 0 (do_sample=False) is
    greedy for the audio tokens too, and the manifest says so."""
    assert "text and audio tokens alike" in glm.describe()["audio_sampling"]
    glm.code.sampling_mode = "run"
    assert glm.decode_settings(DECODE)["do_sample"] is False
    assert "decodes the audio tokens greedily too" in glm.describe()["audio_sampling"]


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
    from stylebench.model_wrappers.repo.glm4_voice import GLM4VoiceModel

    with pytest.raises(MissingExtraError, match="glm-4-voice-decoder"):
        GLM4VoiceModel(path=str(STANDINS), repo=str(STANDINS / "glm4_voice"))
