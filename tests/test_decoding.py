"""``--temperature 0`` = greedy, mapped per model (stylebench.model_wrappers.decoding).

Each mapping is checked against the model's real decoding function where it can be imported
here (transformers' ``generate``, which MiniCPM-o, GLM-4-Voice and Baichuan-Omni call), else
against the STAND-INS in tests/standins/decoders.py that redo upstream's arithmetic (Freeze-Omni,
SLAM-Omni, Mini-Omni). Every case also shows that the literal ``temperature=0`` the wrappers
used to pass breaks that code, so the test fails if a mapping goes back to it.
"""

from __future__ import annotations

from types import SimpleNamespace

import pytest
import torch
from standins import decoders

from stylebench.model_wrappers.decoding import DROP, is_greedy, manifest_entry, run_settings
from stylebench.model_wrappers.hf import minicpm_o
from stylebench.model_wrappers.hf.turns import thinker_sampling
from stylebench.model_wrappers.repo import freeze_omni, glm4_voice, gpt_omni, kimi_audio
from stylebench.model_wrappers.repo.baichuan_omni import BaichuanOmniModel
from stylebench.model_wrappers.repo.slam_omni import SlamOmniModel
from stylebench.model_wrappers.repo.upstream import RUN, spec_settings
from stylebench.records import DecodeConfig

T0 = DecodeConfig()  # the run's default: temperature 0
HOT = DecodeConfig(temperature=0.7, top_p=0.9, max_new_tokens=50)


def test_one_definition_and_its_mapping_rules():
    assert is_greedy(T0) and is_greedy(DecodeConfig(temperature=-1)) and not is_greedy(HOT)
    official = {"temperature": 0.8, "top_p": 0.8, "top_k": 20, "max_new_tokens": 128}
    mapping = {"temperature": "temperature", "top_p": "top_p", "max_new_tokens": "max_new_tokens"}
    greedy = {"temperature": DROP, "do_sample": False}
    out = run_settings(official, mapping, T0, greedy=greedy, sampled={"do_sample": True})
    assert out == {"top_p": 0.8, "top_k": 20, "max_new_tokens": 1024, "do_sample": False}
    out = run_settings(official, mapping, HOT, greedy=greedy, sampled={"do_sample": True})
    assert out == {
        "temperature": 0.7,
        "top_p": 0.9,
        "top_k": 20,
        "max_new_tokens": 50,
        "do_sample": True,
    }
    assert manifest_entry(out, HOT)["greedy"] is False
    assert thinker_sampling(T0) == {"thinker_max_new_tokens": 1024, "thinker_do_sample": False}


@pytest.fixture(scope="module")
def tiny_lm():
    """A tiny random transformers LM: the real ``generate`` the wrappers' models call."""
    from transformers import LlamaConfig, LlamaForCausalLM

    torch.manual_seed(0)
    cfg = LlamaConfig(
        vocab_size=40,
        hidden_size=16,
        intermediate_size=32,
        num_hidden_layers=1,
        num_attention_heads=2,
        num_key_value_heads=1,
        pad_token_id=0,
        eos_token_id=39,
    )
    model = LlamaForCausalLM(cfg).eval()
    # a checkpoint whose generation_config samples (GLM-4-Voice's server passes no do_sample)
    model.generation_config.do_sample, model.generation_config.temperature = True, 0.2
    return model, torch.tensor([[1, 2, 3]])


def generate(lm, seed: int, **kwargs):
    model, ids = lm
    torch.manual_seed(seed)
    kwargs["max_new_tokens"] = 6
    return model.generate(ids, **kwargs).tolist()


def test_minicpm_o_glm4_baichuan_greedy_through_real_generate(tiny_lm):
    greedy = generate(tiny_lm, 0, do_sample=False)
    # MiniCPM-o: chat(sampling=True, **settings) -> generate(**config); stand-in for chat's dict
    settings = spec_settings(minicpm_o.SPEC, T0, RUN)
    assert settings["sampling"] is True and "temperature" not in settings
    cfg = decoders.minicpmo_chat_generation_config(**settings)
    runs = [generate(tiny_lm, s, **cfg) for s in (1, 2)]
    ref = generate(tiny_lm, 0, do_sample=False, repetition_penalty=1.05)
    assert runs == [ref, ref]
    old = decoders.minicpmo_chat_generation_config(sampling=True, temperature=0.0)
    with pytest.raises(ValueError, match="temperature"):
        generate(tiny_lm, 0, **old)
    # GLM-4-Voice: generate(**inputs, **settings) on a checkpoint that samples by default
    settings = {k: v for k, v in spec_settings(glm4_voice.SPEC, T0, RUN).items()}
    assert [generate(tiny_lm, s, **settings) for s in (1, 2)] == [greedy, greedy]
    with pytest.raises(ValueError, match="temperature"):
        generate(tiny_lm, 0, temperature=0.0, top_p=1.0)
    hot = spec_settings(glm4_voice.SPEC, HOT, RUN)
    assert hot["do_sample"] is True and hot["temperature"] == 0.7
    # Baichuan-Omni-1.5: the demo's text steps are generate() calls with these settings
    fake = SimpleNamespace(code=SimpleNamespace(sampling_mode=RUN))
    steps = BaichuanOmniModel.settings(fake, T0)
    text = {k: v for k, v in steps["text_first"].items() if k != "max_new_tokens"}
    ref = generate(tiny_lm, 0, do_sample=False, repetition_penalty=1.1)
    assert [generate(tiny_lm, s, **text) for s in (1, 2)] == [ref, ref]
    assert steps["audio"]["do_sample"] is True  # the audio step keeps the demo's sampling


def logit_rows(n: int = 40, vocab: int = 30):
    g = torch.Generator().manual_seed(4)
    return [torch.randn(vocab, generator=g) * 3 for _ in range(n)]


def test_freeze_omni_greedy_is_the_argmax_and_temperature_zero_breaks_it():
    s = spec_settings(freeze_omni.SPEC, T0, RUN)
    args = {k: s[k] for k in ("temperature", "top_k", "top_p")}
    for seed, row in enumerate(logit_rows()):
        torch.manual_seed(seed)
        assert decoders.freeze_omni_post_decode(row, **args) == int(row.argmax())
    with pytest.raises(RuntimeError):  # logits / 0 -> NaN probabilities -> multinomial refuses
        decoders.freeze_omni_post_decode(torch.tensor([0.0, 1.0, -1.0]), 0.0, 20, 0.8)
    hot = spec_settings(freeze_omni.SPEC, HOT, RUN)
    assert (hot["temperature"], hot["top_p"], hot["top_k"]) == (0.7, 0.9, 20)


def test_slam_omni_greedy_is_the_argmax_and_temperature_zero_picks_wrong():
    fake = SimpleNamespace(
        code=SimpleNamespace(sampling_mode=RUN),
        cfg=SimpleNamespace(
            decode_config={"do_sample": False, "top_k": 0, "repetition_penalty": 1.2}
        ),
    )
    dc = SlamOmniModel.decode_config(fake, T0)
    args = {k: dc[k] for k in ("do_sample", "temperature", "top_p", "top_k")}
    assert all(decoders.slam_sample_next_token(r, **args) == int(r.argmax()) for r in logit_rows())
    row = torch.tensor([0.5, 2.0, -1.0])  # / 0 -> [inf, inf, -inf]: the argmax is now index 0
    assert decoders.slam_sample_next_token(row, do_sample=False, temperature=0.0) == 0 != 1
    hot = SlamOmniModel.decode_config(fake, HOT)
    assert (hot["do_sample"], hot["temperature"], hot["top_p"]) == (True, 0.7, 0.9)


def test_mini_omni_greedy_and_sampling_both_take_effect():
    spec = gpt_omni.gpt_omni_spec("mini-omni")
    s = spec_settings(spec, T0, RUN)
    args = {k: s[k] for k in ("temperature", "top_k", "top_p")}
    for seed, row in enumerate(logit_rows()):
        torch.manual_seed(seed)
        assert decoders.litgpt_sample(row, **args) == int(row.argmax())
    row = torch.zeros(8)  # flat logits: a real draw varies
    hot = spec_settings(spec, DecodeConfig(temperature=1.0), RUN)
    hot_args = {k: hot[k] for k in ("temperature", "top_k", "top_p")}
    torch.manual_seed(0)
    assert len({decoders.litgpt_sample(row, **hot_args) for _ in range(50)}) > 1
    # temperature 0 alone is not greedy in litgpt while top_p > 0: it draws unscaled
    torch.manual_seed(0)
    assert len({decoders.litgpt_sample(row, 0.0, None, 1.0) for _ in range(50)}) > 1


def test_kimi_text_stream_greedy_audio_stream_keeps_its_sampling():
    s = spec_settings(kimi_audio.SPEC, T0, RUN)
    assert s["text_temperature"] == 0.0 and s["audio_temperature"] == 0.8
    assert spec_settings(kimi_audio.SPEC, HOT, RUN)["text_temperature"] == 0.7
