"""Contract tests of the repo-based model wrappers (mini-omni, mini-omni2, slam-omni, freeze-omni), against NAMED STAND-INS of the
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

import pytest
import soundfile as sf
from standins import harness
from standins.harness import DECODE, STANDINS, calls, three_turns, user

from stylebench.records import DecodeConfig, Turn
from stylebench.registry import MissingExtraError

pytest.importorskip("torch", reason="the stand-ins of the official code compute with torch")
isolated_imports = harness.isolated_imports  # autouse: stand-ins leave sys.path/sys.modules
wavs = harness.wavs


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


@pytest.mark.parametrize("folder", ["mini_omni", "mini_omni2"])
def test_mini_omni_run_sampling_reaches_the_text_layer_only(folder, wavs, tmp_path):
    """run_AT_batch_stream passes one temperature/top_k/top_p to litgpt's sample for the audio
    and the text layers (inference.py:425-427, 458-460); upstream's audio is always top_k=1
    (inference.py:391-392). With sampling=run above temperature 0 only the text layer (logits
    152000 wide) gets the run's settings; the seven SNAC layers (4160 wide) keep top_k=1."""
    from stylebench.model_wrappers.registry import MODELS
    from stylebench.model_wrappers.repo.gpt_omni import AUDIO_SAMPLING, GptOmniModel

    name = folder.replace("_", "-")
    model = MODELS.load(name)(
        path=str(tmp_path), repo=str(STANDINS / folder), device="cpu", sampling="run"
    )
    assert isinstance(model, GptOmniModel)
    base = sys.modules["litgpt.generate.base"]
    official_sample = base.sample
    hot = DecodeConfig(temperature=0.7, top_p=0.9, max_new_tokens=64, seed=1)
    reply = model.respond((), user(wavs[0], 1), hot)
    audio = [c for c in base.CALLS if c[1] == 4160]
    text = [c for c in base.CALLS if c[1] == 152000]
    assert audio == [("sample", 4160, 0.9, 1, 1.0)] * 7
    assert text == [("sample", 152000, 0.7, None, 0.9)]
    assert base.sample is official_sample  # restored after the turn
    assert reply.raw["audio_sampling"] == AUDIO_SAMPLING
    assert "text layer only" in model.describe()["audio_sampling"]
    base.CALLS.clear()  # official mode: upstream's own settings everywhere, nothing replaced
    official = MODELS.load(name)(path=str(tmp_path), repo=str(STANDINS / folder), device="cpu")
    official.respond((), user(wavs[0], 1), hot)
    assert {c[2:] for c in base.CALLS} == {(0.9, 1, 1.0)} and len(base.CALLS) == 8


def test_mini_omni_decodes_the_complete_snac_streams(wavs, tmp_path):
    from stylebench.model_wrappers.repo.mini_omni import MiniOmniModel

    model = MiniOmniModel(path=str(tmp_path), repo=str(STANDINS / "mini_omni"), device="cpu")
    model.respond((), user(wavs[0], 1), DECODE)
    # utils/snac_utils.py: the 7 SNAC layers (not the text layer) -> reconscruct_snac ->
    # reconstruct_tensors -> snacmodel.decode, as inference.py A1_A2 does after generation
    assert calls("utils.snac_utils", "reconscruct_snac") == [("reconscruct_snac", [20] * 7)]
    assert calls("inference", "snac.decode") == [("snac.decode", [(1, 13)])]


def test_cuda_n_becomes_the_current_device(tmp_path, monkeypatch):
    """``device=cuda:N``: the official helpers allocate on the *current* GPU, so the wrappers
    of mini-omni(2), glm-4-voice and baichuan make GPU N current (torch.cuda.set_device is
    recorded here; no GPU is needed)."""
    import inspect

    import torch

    from stylebench.model_wrappers.repo import baichuan_omni, glm4_voice
    from stylebench.model_wrappers.repo.mini_omni import MiniOmniModel
    from stylebench.model_wrappers.repo.upstream import select_cuda

    chosen: list[int] = []
    monkeypatch.setattr(torch.cuda, "set_device", chosen.append)
    for device in ("cpu", "cuda", "cuda:0", "cuda:3"):
        select_cuda(device)
    assert chosen == [0, 3]
    MiniOmniModel(path=str(tmp_path), repo=str(STANDINS / "mini_omni"), device="cuda:2")
    assert chosen[-1] == 2
    for cls in (glm4_voice.GLM4VoiceModel, baichuan_omni.BaichuanOmniModel):  # source check:
        init = inspect.getsource(cls.__init__)  # their stand-ins need more set-up than this
        assert init.index("select_cuda(device)") < init.index("from_pretrained"), cls


def test_mini_omni_needs_a_local_checkpoint(wavs):
    from stylebench.model_wrappers.repo.mini_omni import MiniOmniModel

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
    from stylebench.model_wrappers.repo.slam_omni import SlamOmniModel

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
    slam.code.sampling_mode = "run"
    reply = slam.respond((user(wavs[0], 1), bare), user(wavs[1], 2), DecodeConfig(temperature=0.5))
    last = sys.modules["generate.generate_s2s_online_multi_round"].CALLS[-1]
    assert last["history"] == "USER: w1 request ASSISTANT: reply 1 "
    assert reply.raw["history_transcript_substituted"] is True
    assert last["decode"]["temperature"] == 0.5 and last["decode"]["do_sample"] is True


def test_slam_omni_run_sampling_reaches_the_text_layer_only(slam, wavs):
    """The official generate passes one decode_config to sample_next_token for the text and
    every audio layer (examples/s2s/model/slam_model_s2s.py:555, 562), and the script decodes
    them all greedily. With sampling=run above temperature 0 the text logits (152000 wide) get
    the run's settings; the audio layers (4160 wide) keep the config's do_sample=false."""
    model_calls = slam.model.to.__globals__["CALLS"]
    slam.code.sampling_mode = "run"
    hot = DecodeConfig(temperature=0.7, top_p=0.9, max_new_tokens=64, seed=1)
    reply = slam.respond((), user(wavs[0], 1), hot)
    sampled = [c for c in model_calls if c[0] == "sample_next_token"]
    assert [c for c in sampled if c[1] == 152000] == [
        ("sample_next_token", 152000, True, 0.7, 0, 0.9)
    ]
    assert [c for c in sampled if c[1] == 4160] == [
        ("sample_next_token", 4160, False, 1.0, 0, 1.0)
    ] * 7
    assert "sample_next_token" not in vars(slam.model)  # the class's method again
    want = {"do_sample": False, "temperature": 1.0, "top_k": 0, "top_p": 1.0}
    assert reply.raw["audio_sampling"] == want == slam.describe()["audio_sampling"]


def test_slam_omni_needs_its_run_configuration():
    pytest.importorskip("omegaconf", reason="the dev extra installs omegaconf")
    from stylebench.model_wrappers.repo.slam_omni import SlamOmniModel

    with pytest.raises(MissingExtraError, match="config=/path.yaml"):
        SlamOmniModel(repo=str(STANDINS / "slam_llm"))


# ---------------------------------------------------------------- freeze-omni -----------------
@pytest.fixture
def freeze(tmp_path):
    ckpt, llm = tmp_path / "checkpoints", tmp_path / "Qwen2-7B-Instruct"
    ckpt.mkdir()
    llm.mkdir()
    from stylebench.model_wrappers.repo.freeze_omni import FreezeOmniModel

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


def test_what_each_model_hears_is_named(freeze, slam):
    """The history kind in each wrapper's manifest entry (issue 11: Freeze-Omni's KV cache holds
    its own text tokens, not its reply audio, so it is "text only")."""
    from stylebench.model_wrappers.common import HISTORY_KINDS
    from stylebench.model_wrappers.hf import minicpm_o
    from stylebench.model_wrappers.repo import baichuan_omni, glm4_voice, gpt_omni, llama_omni2

    assert freeze.describe()["history_kind"] == "text only"
    assert "never heard" in freeze.describe()["history"]
    assert slam.describe()["history_kind"] == "text only"
    kinds = {
        "glm-4-voice": glm4_voice.SPEC.history_kind,
        "baichuan-omni-1.5": baichuan_omni.SPEC.history_kind,
        "mini-omni": gpt_omni.gpt_omni_spec("mini-omni").history_kind,
        "llama-omni2": llama_omni2.SPEC.history_kind,
        "minicpm-o-2.6": minicpm_o.SPEC.history_kind,
    }
    assert kinds == {
        "glm-4-voice": "own audio + text",
        "baichuan-omni-1.5": "own audio + text",
        "mini-omni": "none (single-turn)",
        "llama-omni2": "text only",
        "minicpm-o-2.6": "text only",
    }
    assert set(kinds.values()) <= set(HISTORY_KINDS)


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


def test_freeze_omni_finds_its_state_from_a_copied_reply(freeze, wavs, tmp_path):
    """The runner moves each reply into the run folder; the state is keyed by the wav's bytes."""
    history: list[Turn] = []
    replies = []
    for k, wav in enumerate(wavs, start=1):
        reply = freeze.respond(tuple(history), user(wav, k), DECODE)
        kept = tmp_path / f"run-{k}.wav"
        shutil.move(reply.audio, kept)  # as the respond stage does
        kept_reply = Turn("assistant", reply.text, str(kept), reply.sr, dict(reply.raw))
        history += [user(wav, k), kept_reply]
        replies.append(reply)
    assert [r.raw["history_replayed"] for r in replies] == [False] * 3
