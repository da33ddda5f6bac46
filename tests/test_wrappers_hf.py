"""The transformers-based wrappers (qwen2.5-omni, qwen3-omni) run for real on tiny random models.

The checkpoints are built here: the real transformers classes with tiny thinker/talker/vocoder
configurations and random weights, saved with a small byte-level tokenizer, a default
WhisperFeatureExtractor and a stand-in chat template (our own Jinja, in the Qwen chat format).
Random weights speak noise; what is checked is the plumbing: three turns with history, one wav
per turn at 24 kHz, seeding, the manifest entry, and the one-line errors.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

torch = pytest.importorskip("torch")
transformers = pytest.importorskip("transformers")

from stylebench.config import RunConfig  # noqa: E402
from stylebench.model_wrappers import _hf_common as hf  # noqa: E402
from stylebench.model_wrappers.qwen3_omni import Qwen3OmniModel  # noqa: E402
from stylebench.model_wrappers.qwen25_omni import CARD_SYSTEM_PROMPT, Qwen25OmniModel  # noqa: E402
from stylebench.pipeline import run  # noqa: E402
from stylebench.records import DecodeConfig, Turn  # noqa: E402
from stylebench.registry import MissingExtraError  # noqa: E402

COMMIT = "0123456789abcdef0123456789abcdef01234567"
SPECIAL = ["<|endoftext|>", "<|im_start|>", "<|im_end|>", "<|AUDIO|>", "<|audio_bos|>"]
SPECIAL += ["<|audio_eos|>", "<|IMAGE|>", "<|VIDEO|>", "<|vision_bos|>", "<|vision_eos|>"]
SPECIAL += ["<|tts_pad|>", "<|tts_bos|>", "<|tts_eos|>", "<|spk_1|>", "<|spk_2|>"]
NAMED = {"audio_token": "<|AUDIO|>", "audio_bos_token": "<|audio_bos|>"}
NAMED |= {"audio_eos_token": "<|audio_eos|>", "image_token": "<|IMAGE|>"}
NAMED |= {"video_token": "<|VIDEO|>", "vision_bos_token": "<|vision_bos|>"}
NAMED["vision_eos_token"] = "<|vision_eos|>"
# stand-in for the checkpoint's chat template: Qwen's ChatML turns, audio parts as placeholders
TEMPLATE = (
    "{%- for m in messages -%}{{- '<|im_start|>' + m.role + '\\n' -}}"
    "{%- if m.content is string -%}{{- m.content -}}{%- else -%}{%- for p in m.content -%}"
    "{%- if p.type == 'audio' -%}{{- '<|audio_bos|><|AUDIO|><|audio_eos|>' -}}"
    "{%- elif p.type == 'text' -%}{{- p.text -}}{%- endif -%}{%- endfor -%}{%- endif -%}"
    "{{- '<|im_end|>\\n' -}}{%- endfor -%}"
    "{%- if add_generation_prompt -%}{{- '<|im_start|>assistant\\n' -}}{%- endif -%}"
)
ROPE = {"rope_type": "default", "rope_theta": 1e6, "mrope_section": [3, 3, 2]}
SMALL = dict(hidden_size=32, intermediate_size=64, num_attention_heads=2, num_key_value_heads=1)
SMALL["rope_parameters"] = ROPE


def _tokenizer():
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers

    vocab = {t: i for i, t in enumerate(SPECIAL)}
    for ch in sorted(pre_tokenizers.ByteLevel.alphabet()):
        vocab.setdefault(ch, len(vocab))
    tk = Tokenizer(models.BPE(vocab=vocab, merges=[]))
    tk.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tk.decoder = decoders.ByteLevel()
    tk.add_special_tokens(SPECIAL)
    tk.add_tokens(["system", "user", "assistant"])  # one id each, as Qwen3's talker expects
    return transformers.PreTrainedTokenizerFast(
        tokenizer_object=tk,
        eos_token="<|im_end|>",
        pad_token="<|endoftext|>",
        extra_special_tokens=NAMED,
    )


def _draw(module, gain: float) -> None:
    """Re-draw every weight matrix of ``module`` as N(0, gain^2 / fan_in), from torch's seed."""
    with torch.no_grad():
        for p in module.parameters():
            if p.dim() > 1:
                p.normal_(0.0, gain / p[0].numel() ** 0.5)


def _save_processor_parts(tok, folder: Path) -> None:
    tok.save_pretrained(folder)
    transformers.WhisperFeatureExtractor(feature_size=128).save_pretrained(folder)
    (folder / "chat_template.jinja").write_text(TEMPLATE, encoding="utf-8")


def _qwen25(tok, folder: Path) -> None:
    t = tok.convert_tokens_to_ids
    mm = dict(audio_token_index=t("<|AUDIO|>"), image_token_index=t("<|IMAGE|>"))
    mm |= dict(video_token_index=t("<|VIDEO|>"), audio_start_token_id=t("<|audio_bos|>"))
    mm |= dict(audio_end_token_id=t("<|audio_eos|>"), vision_start_token_id=t("<|vision_bos|>"))
    audio = dict(num_mel_bins=128, encoder_layers=1, encoder_attention_heads=2, d_model=16)
    audio |= dict(encoder_ffn_dim=32, output_dim=32)
    vision = dict(depth=1, hidden_size=16, intermediate_size=32, num_heads=2, out_hidden_size=32)
    vision["fullatt_block_indexes"] = [0]
    thinker = dict(audio_config=audio, vision_config=vision, user_token_id=t("user"), **mm)
    thinker["text_config"] = dict(vocab_size=320, num_hidden_layers=1, **SMALL)
    talker = dict(vocab_size=40, embedding_size=32, num_hidden_layers=1, head_dim=16, **SMALL)
    talker |= dict(tts_codec_start_token_id=36, tts_codec_end_token_id=37)
    talker |= dict(tts_codec_pad_token_id=38, tts_codec_mask_token_id=39)
    talker |= dict(tts_text_start_token_id=t("<|tts_bos|>"), tts_text_end_token_id=t("<|tts_eos|>"))
    talker |= dict(tts_text_pad_token_id=t("<|tts_pad|>"), **mm)
    dit = dict(hidden_size=32, num_hidden_layers=2, num_attention_heads=2, head_dim=16, emb_dim=16)
    dit |= dict(num_embeds=41, mel_dim=20, enc_emb_dim=8, enc_dim=16, enc_channels=[16, 16, 16, 32])
    dit |= dict(enc_kernel_sizes=[5, 3, 3, 1], enc_dilations=[1, 2, 3, 1], enc_attention_channels=8)
    dit |= dict(enc_se_channels=8, look_ahead_layers=[1], look_backward_layers=[0])
    vocoder = dict(mel_dim=20, upsample_initial_channel=64, resblock_kernel_sizes=[3])
    vocoder["resblock_dilation_sizes"] = [[1, 3, 5]]
    cfg = transformers.Qwen2_5OmniConfig(
        thinker_config=thinker,
        talker_config=talker,
        token2wav_config=dict(dit_config=dit, bigvgan_config=vocoder),
    )
    torch.manual_seed(0)
    model = transformers.Qwen2_5OmniForConditionalGeneration(cfg).eval()
    _draw(model.token2wav.code2wav_bigvgan_model, 0.7)  # else its noise peaks at ~1e-8
    model.save_pretrained(folder)
    voice = {"cond": torch.randn(1, 8), "ref_mel": torch.randn(1, 30, 20)}
    spk = {"Chelsie": {"bos_token": t("<|spk_1|>"), **voice}}
    spk["Ethan"] = {"bos_token": t("<|spk_2|>"), **voice}
    torch.save(spk, folder / "spk_dict.pt")
    _save_processor_parts(tok, folder)


def _qwen3(tok, folder: Path) -> None:
    t = tok.convert_tokens_to_ids
    rope = {**ROPE, "interleaved": True}
    moe = dict(SMALL, rope_parameters=rope, head_dim=16, num_experts=4, num_experts_per_tok=2)
    moe["moe_intermediate_size"] = 16
    mm = dict(audio_token_id=t("<|AUDIO|>"), image_token_id=t("<|IMAGE|>"))
    mm |= dict(video_token_id=t("<|VIDEO|>"), audio_start_token_id=t("<|audio_bos|>"))
    mm["vision_start_token_id"] = t("<|vision_bos|>")
    audio = dict(num_mel_bins=128, encoder_layers=1, encoder_attention_heads=2, d_model=16)
    audio |= dict(encoder_ffn_dim=32, output_dim=32, downsample_hidden_size=8)
    vision = dict(depth=1, hidden_size=16, intermediate_size=32, num_heads=2, out_hidden_size=32)
    vision |= dict(deepstack_visual_indexes=[0], num_position_embeddings=16)
    thinker = dict(audio_config=audio, vision_config=vision, user_token_id=t("user"), **mm)
    thinker["text_config"] = dict(vocab_size=320, num_hidden_layers=2, **moe)
    predictor = dict(vocab_size=32, num_hidden_layers=1, head_dim=16, num_code_groups=2, **SMALL)
    # codec ids sit above the 32-entry codebook; generate() suppresses the top 1024 talker ids
    talker = dict(num_code_groups=2, thinker_hidden_size=32, accept_hidden_layer=1)
    talker |= dict(codec_pad_id=36, codec_bos_id=37, codec_eos_token_id=38, codec_nothink_id=39)
    talker |= dict(codec_think_bos_id=40, codec_think_eos_id=41, spatial_merge_size=2, **mm)
    talker["speaker_id"] = {"ethan": 42, "chelsie": 43, "aiden": 44}
    talker["text_config"] = dict(vocab_size=1056, num_hidden_layers=1, **moe)
    talker["text_config"]["shared_expert_intermediate_size"] = 16
    talker["code_predictor_config"] = predictor
    c2w = dict(codebook_size=32, num_quantizers=2, decoder_dim=64, num_hidden_layers=1, **SMALL)
    c2w["num_key_value_heads"] = 2
    cfg = transformers.Qwen3OmniMoeConfig(
        thinker_config=thinker,
        talker_config=talker,
        code2wav_config=c2w,
        im_start_token_id=t("<|im_start|>"),
        im_end_token_id=t("<|im_end|>"),
        tts_pad_token_id=t("<|tts_pad|>"),
        tts_bos_token_id=t("<|tts_bos|>"),
        tts_eos_token_id=t("<|tts_eos|>"),
        system_token_id=t("system"),
        user_token_id=t("user"),
        assistant_token_id=t("assistant"),
    )
    torch.manual_seed(0)
    model = transformers.Qwen3OmniMoeForConditionalGeneration(cfg).eval()
    # transformers 5.24 leaves the talker's expert matrices as torch.empty (whatever memory held,
    # at times inf/nan): draw every matrix, then the vocoder's at a gain that keeps its noise
    # audible but unclipped (peak ~0.15)
    _draw(model, 1.0)
    _draw(model.code2wav, 0.7)
    model.save_pretrained(folder)
    _save_processor_parts(tok, folder)


@pytest.fixture(scope="module")
def ckpts(tmp_path_factory):
    """Tiny checkpoints: qwen2.5 in a plain folder, qwen3 as a hub-cache snapshot of the 30B id."""
    threads = torch.get_num_threads()
    torch.set_num_threads(1)  # tiny ops on a busy 2-core machine are ~50x slower threaded
    root = tmp_path_factory.mktemp("hf_tiny")
    tok = _tokenizer()
    _qwen25(tok, root / "qwen25")
    repo = root / "hub" / "models--Qwen--Qwen3-Omni-30B-A3B-Instruct"
    _qwen3(tok, repo / "snapshots" / COMMIT)
    (repo / "refs").mkdir()
    (repo / "refs" / "main").write_text(COMMIT)
    yield root
    torch.set_num_threads(threads)


def _run(model: str, args: dict, small_set: Path, out: Path, seed: int = 0):
    cfg = RunConfig(
        model=model,
        model_args=args,
        dim="volume",  # noise has no F0; volume scores it (and the report plots it)
        lang="en",
        limit=1,
        dialogues=str(small_set),
        out=str(out),
        asr="none",
        vad="energy",
        judge="none",
        max_new_tokens=6,
        seed=seed,
        n_boot=20,
    )
    result = run(cfg, progress=False)
    recs = sorted(result.store.load("respond").values(), key=lambda r: (r.sample_id, r.turn))
    return result, recs


def _check_three_turns(recs, store_root: Path) -> None:
    import soundfile as sf

    assert [r.turn for r in recs] == [1, 2, 3] * (len(recs) // 3) and len(recs) >= 3
    for r in recs:
        assert r.status == "ok", r.error
        info = sf.info(str(store_root / r.audio))
        assert r.sr == info.samplerate == 24000 and info.frames > 0
        # turn k hears k user wavs: earlier user turns travel back as audio
        assert r.raw["audio_inputs"] == r.turn and 0 < r.raw["peak"] <= 1.0
    for a, b in zip(recs, recs[1:], strict=False):
        if b.turn > 1:  # ... and each turn's prompt holds the previous turns
            assert b.raw["prompt_tokens"] > a.raw["prompt_tokens"]


def test_qwen25_three_turn_run_on_tiny_random_model(ckpts, small_set, tmp_path):
    args = {"path": str(ckpts / "qwen25"), "device": "cpu", "talker_max_new_tokens": "16"}
    args["processor"] = "audio-only"  # torchvision (for the official path) is absent here
    result, recs = _run("qwen2.5-omni", args, small_set, tmp_path)
    _check_three_turns(recs, result.store.root)
    model = result.store.read_manifest()["model"]
    assert model["revision"].startswith("local:") and model["weights"] == args["path"]
    assert model["system_prompt"] == CARD_SYSTEM_PROMPT and model["speaker"] == "Chelsie"
    assert model["talker"]["talker_max_new_tokens"] == 16
    assert model["talker"]["talker_eos_token_id"] == [38, 37]  # from the config, not 8292/8294
    assert model["dtype"] == "float32" and model["output_sr"] == 24000
    assert "earlier replies as their text" in model["history"]


def test_qwen3_three_turn_run_from_the_hf_cache(ckpts, small_set, tmp_path, monkeypatch):
    monkeypatch.setenv("HF_HUB_CACHE", str(ckpts / "hub"))
    args = {"device": "cpu", "speaker": "Aiden", "talker_max_new_tokens": "20"}
    args["processor"] = "audio-only"
    # default path: the hub id. Seed 0 makes this random talker stop after two codes (137 ms),
    # under the features stage's 200 ms floor; seed 1 speaks for 0.86 s
    result, recs = _run("qwen3-omni", args, small_set, tmp_path, seed=1)
    _check_three_turns(recs, result.store.root)
    model = result.store.read_manifest()["model"]
    assert model["weights"] == "Qwen/Qwen3-Omni-30B-A3B-Instruct" and model["revision"] == COMMIT
    assert model["system_prompt"] is None and model["speaker"] == "Aiden"
    assert Qwen3OmniModel.check() == (
        "available",
        f"{model['weights']} cached at {ckpts / 'hub' / 'models--Qwen--Qwen3-Omni-30B-A3B-Instruct' / 'snapshots' / COMMIT}",
    )


@pytest.fixture(scope="module")
def q25(ckpts):
    """processor=auto, with torchvision reported absent: the audio-only processor is chosen."""
    real = hf.has_package
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(hf, "has_package", lambda name: name != "torchvision" and real(name))
        model = Qwen25OmniModel(path=str(ckpts / "qwen25"), device="cpu", talker_max_new_tokens=8)
    assert model.processor_mode == "audio-only"
    return model


def _turn(role: str, text: str, audio: str | None) -> Turn:
    return Turn(role, text, audio, 16000 if audio else None)


def test_history_goes_back_as_user_audio_and_reply_text(q25, small_set):
    wavs = sorted(str(p) for p in small_set.rglob("*.wav"))[:3]
    history = [_turn("user", "q1", wavs[0]), _turn("assistant", "first reply", wavs[1])]
    history += [_turn("user", "q2", wavs[1]), _turn("assistant", "second reply", wavs[2])]
    msgs, audio = hf.conversation(history, _turn("user", "q3", wavs[2]), "SYS")
    assert [m["role"] for m in msgs] == ["system", "user", "assistant", "user", "assistant", "user"]
    assert msgs[2]["content"] == "first reply" and audio == [wavs[0], wavs[1], wavs[2]]
    assert msgs[5]["content"] == [{"type": "audio", "audio": wavs[2]}]
    inputs = hf.model_inputs(q25.processor, msgs, audio, q25.model)
    prompt = q25.processor.tokenizer.decode(inputs["input_ids"][0])
    assert prompt.startswith("<|im_start|>system\nSYS<|im_end|>")
    assert "first reply" in prompt and "second reply" in prompt and "q1" not in prompt
    assert prompt.count("<|audio_bos|>") == 3 and prompt.endswith("<|im_start|>assistant\n")
    assert inputs["input_features"].shape[0] == 3
    with pytest.raises(ValueError, match="alternate"):
        hf.conversation(history[:1], _turn("user", "q", wavs[0]), None)


def test_same_seed_same_reply_other_seed_other_reply(q25, small_set):
    wav = str(sorted(small_set.rglob("*.wav"))[0])
    replies = []
    for seed in (3, 3, 4):
        turn = q25.respond((), _turn("user", "", wav), DecodeConfig(max_new_tokens=4, seed=seed))
        replies.append(Path(turn.audio).read_bytes())
    assert replies[0] == replies[1] and replies[0] != replies[2]


def test_decode_settings_map_to_the_thinker_and_are_described(q25):
    assert hf.thinker_sampling(DecodeConfig(max_new_tokens=5)) == {
        "thinker_max_new_tokens": 5,
        "thinker_do_sample": False,
    }
    sampled = hf.thinker_sampling(DecodeConfig(temperature=0.7, top_p=0.9))
    assert sampled["thinker_do_sample"] and sampled["thinker_temperature"] == 0.7
    assert sampled["thinker_top_p"] == 0.9
    desc = q25.describe()
    assert json.loads(json.dumps(desc)) == desc == q25.describe()
    assert desc["talker"]["talker_top_k"] == 40 and desc["talker"]["talker_do_sample"] is True
    assert desc["processor"] == "audio-only" and desc["use_audio_in_video"] is False


def test_bad_arguments_fail_with_actionable_errors(ckpts, monkeypatch):
    path = str(ckpts / "qwen25")
    with pytest.raises(ValueError, match=r"speaker='Nobody'.*\['Chelsie', 'Ethan'\]"):
        Qwen25OmniModel(path=path, device="cpu", processor="audio-only", speaker="Nobody")
    with pytest.raises(ValueError, match="dtype='int8'"):
        Qwen25OmniModel(path=path, device="cpu", dtype="int8")
    with pytest.raises(ValueError, match="talker_max_new_tokens"):
        Qwen25OmniModel(path=path, talker_max_new_tokens="many")
    real = hf.has_package
    monkeypatch.setattr(
        hf, "has_package", lambda n: n not in ("flash_attn", "torchvision") and real(n)
    )
    with pytest.raises(MissingExtraError, match="flash-attn is not installed"):
        Qwen25OmniModel(path=path, device="cpu", attn="flash_attention_2")
    with pytest.raises(MissingExtraError, match="torchvision is not installed"):
        Qwen25OmniModel(path=path, device="cpu", processor="official")


def test_missing_weights_is_one_line(tmp_path, monkeypatch):
    with pytest.raises(MissingExtraError) as err:
        Qwen25OmniModel(path="/nonexistent")
    msg = str(err.value)
    assert "\n" not in msg and "no qwen2.5-omni weights at /nonexistent" in msg
    assert "huggingface-cli download Qwen/Qwen2.5-Omni-7B --local-dir /nonexistent" in msg
    monkeypatch.setenv("HF_HUB_CACHE", str(tmp_path))  # an empty cache: nothing is downloaded
    with pytest.raises(MissingExtraError, match="not in the Hugging Face cache"):
        Qwen3OmniModel()
    assert Qwen25OmniModel.check()[0] == "missing weights"


def test_incomplete_checkpoint_is_one_line(ckpts, tmp_path):
    (tmp_path / "config.json").write_bytes((ckpts / "qwen25" / "config.json").read_bytes())
    with pytest.raises(
        MissingExtraError, match=r"^could not load qwen2.5-omni from .*no file named"
    ):
        Qwen25OmniModel(path=str(tmp_path), device="cpu")


def test_cli_missing_weights_exits_with_the_line(small_set, tmp_path):
    r = subprocess.run(
        [sys.executable, "-m", "stylebench.cli", "--no-progress", "run", "--model", "qwen2.5-omni"]
        + ["--model-arg", "path=/nonexistent", "--dim", "pitch", "--limit", "1"]
        + ["--dialogues", str(small_set), "--out", str(tmp_path)],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert r.returncode == 2 and "Traceback" not in r.stderr
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("stylebench: no qwen2.5-omni weights at")
