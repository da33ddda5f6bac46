"""Tiny random Qwen omni checkpoints for the transformers-based wrapper tests (NAMED STAND-INS
of the released weights).

The real transformers classes with tiny thinker/talker/vocoder configurations and random
weights, saved with a small byte-level tokenizer, a default WhisperFeatureExtractor and a
stand-in chat template (our own Jinja, in the Qwen chat format). Import only after
``pytest.importorskip("torch")`` and ``("transformers")``.
"""

from __future__ import annotations

from pathlib import Path

import torch
import transformers

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
#: transformers 4.x names the rope settings rope_scaling + rope_theta; 5.x rope_parameters
LEGACY_ROPE = int(transformers.__version__.split(".")[0]) < 5


def rope(**extra) -> dict:
    """The rope settings of one sub-config, under the installed transformers' names."""
    if LEGACY_ROPE:
        scaling = {k: v for k, v in {**ROPE, **extra}.items() if k != "rope_theta"}
        return {"rope_scaling": scaling, "rope_theta": ROPE["rope_theta"]}
    return {"rope_parameters": {**ROPE, **extra}}


SMALL = dict(hidden_size=32, intermediate_size=64, num_attention_heads=2, num_key_value_heads=1)
SMALL |= rope()


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
        model_input_names=["input_ids", "attention_mask"],  # as Qwen2TokenizerFast's
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
    moe = dict(SMALL, **rope(interleaved=True), head_dim=16, num_experts=4, num_experts_per_tok=2)
    moe["moe_intermediate_size"] = 16
    mm = dict(audio_token_id=t("<|AUDIO|>"), image_token_id=t("<|IMAGE|>"))
    mm |= dict(video_token_id=t("<|VIDEO|>"), audio_start_token_id=t("<|audio_bos|>"))
    mm["vision_start_token_id"] = t("<|vision_bos|>")
    audio = dict(num_mel_bins=128, encoder_layers=1, encoder_attention_heads=2, d_model=16)
    audio |= dict(encoder_ffn_dim=32, output_dim=32, downsample_hidden_size=8)
    # the released config's windows; 4.57's defaults (100/400) disagree with the 100-frame
    # chunks its own _get_feat_extract_output_lengths assumes, and audio over 1 s then fails
    audio |= dict(n_window=50, n_window_infer=800)
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


def build_checkpoints(root: Path) -> None:
    """qwen2.5 in ``root/qwen25``; qwen3 as a hub-cache snapshot of the 30B id under ``root/hub``."""
    tok = _tokenizer()
    _qwen25(tok, root / "qwen25")
    repo = root / "hub" / "models--Qwen--Qwen3-Omni-30B-A3B-Instruct"
    _qwen3(tok, repo / "snapshots" / COMMIT)
    (repo / "refs").mkdir()
    (repo / "refs" / "main").write_text(COMMIT)
