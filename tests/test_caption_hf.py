"""The ``transformers`` captioner on a tiny random Qwen2-Audio checkpoint (NAMED STAND-IN of a
real captioner: the real transformers classes, tiny config, random weights, a byte-level
tokenizer and our own stand-in chat template), in a unit call and in a whole run."""

from __future__ import annotations

import json

import numpy as np
import pytest
from standins.judge import cfg_for

pytest.importorskip("torch")
pytest.importorskip("transformers")

SPECIAL = [
    "<|endoftext|>",
    "<|im_start|>",
    "<|im_end|>",
    "<|AUDIO|>",
    "<|audio_bos|>",
    "<|audio_eos|>",
]
TEMPLATE = (
    "{%- for m in messages -%}{{- '<|im_start|>' + m.role + '\\n' -}}{%- for p in m.content -%}"
    "{%- if p.type == 'audio' -%}{{- '<|audio_bos|><|AUDIO|><|audio_eos|>' -}}"
    "{%- elif p.type == 'text' -%}{{- p.text -}}{%- endif -%}{%- endfor -%}{{- '<|im_end|>\\n' -}}"
    "{%- endfor -%}{%- if add_generation_prompt -%}{{- '<|im_start|>assistant\\n' -}}{%- endif -%}"
)


@pytest.fixture(scope="module")
def tiny_captioner(tmp_path_factory):
    import torch
    import transformers
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers

    vocab = {t: i for i, t in enumerate(SPECIAL)}
    for ch in sorted(pre_tokenizers.ByteLevel.alphabet()):
        vocab.setdefault(ch, len(vocab))
    tk = Tokenizer(models.BPE(vocab=vocab, merges=[]))
    tk.pre_tokenizer, tk.decoder = (
        pre_tokenizers.ByteLevel(add_prefix_space=False),
        decoders.ByteLevel(),
    )
    tk.add_special_tokens(SPECIAL)
    tok = transformers.PreTrainedTokenizerFast(
        tokenizer_object=tk,
        eos_token="<|im_end|>",
        pad_token="<|endoftext|>",
        extra_special_tokens={
            "audio_token": "<|AUDIO|>",
            "audio_bos_token": "<|audio_bos|>",
            "audio_eos_token": "<|audio_eos|>",
        },
    )
    fe = transformers.WhisperFeatureExtractor(feature_size=128)
    proc = transformers.Qwen2AudioProcessor(
        feature_extractor=fe, tokenizer=tok, chat_template=TEMPLATE
    )
    audio = dict(
        d_model=16,
        encoder_layers=1,
        encoder_attention_heads=2,
        encoder_ffn_dim=32,
        num_mel_bins=128,
    )
    text = dict(
        model_type="qwen2",
        vocab_size=len(tok),
        hidden_size=32,
        num_hidden_layers=1,
        num_attention_heads=2,
        num_key_value_heads=1,
        intermediate_size=64,
    )
    cfg = transformers.Qwen2AudioConfig(
        audio_config=audio,
        text_config=text,
        audio_token_index=tok.convert_tokens_to_ids("<|AUDIO|>"),
    )
    torch.manual_seed(0)
    folder = tmp_path_factory.mktemp("tiny-qwen2-audio")
    transformers.Qwen2AudioForConditionalGeneration(cfg).eval().save_pretrained(folder)
    proc.save_pretrained(folder)
    return folder


def test_caption_of_one_reply_is_deterministic(tiny_captioner, tmp_path):
    import soundfile as sf

    from stylebench.metrics.captions.base import CaptionRequest, load_instruction
    from stylebench.metrics.captions.hf import TransformersCaptioner

    wav = tmp_path / "a.wav"
    sf.write(wav, (0.1 * np.sin(np.arange(32000) * 0.05)).astype("float32"), 16000)
    c = TransformersCaptioner(
        str(tiny_captioner), max_new_tokens=5, model_class="Qwen2AudioForConditionalGeneration"
    )
    req = CaptionRequest(str(wav), "pitch", "en", load_instruction("pitch"))
    first = c.caption(req)
    assert first and c.caption(req) == first  # greedy: the same caption twice
    assert c.describe()["decode"] == {"temperature": 0.0, "max_new_tokens": 5, "seed": 0}
    bf16 = TransformersCaptioner(str(tiny_captioner), max_new_tokens=2, dtype="bfloat16")
    assert bf16.caption(req)  # float32 features are cast to the model's dtype
    with pytest.raises(ValueError, match="--caption-model"):
        TransformersCaptioner(None)


def test_a_run_captions_every_reply_in_process(tiny_captioner, small_set, tmp_path):
    from stylebench.commands.runs import run

    cfg = cfg_for(
        small_set,
        tmp_path,
        dim="pitch",
        judge="none",
        asr="none",
        captioner="transformers",
        caption_model=str(tiny_captioner),
        caption_args={"max_new_tokens": "4"},
    )
    res = run(cfg, progress=False)
    caps = [json.loads(x) for x in res.store.stage_path("caption").read_text().splitlines()]
    assert len(caps) == 6 and all(
        c["status"] == "ok" and c["backend"] == "transformers" for c in caps
    )
    assert res.report["captions"]["captions"] == {"n_ok": 6, "n_total": 6}
    # random text names no pitch: every comparison is cannot_tell, counted, not scored as "same"
    assert all(
        c["cannot_tell_rate"] == 1.0 and c["vsp"] is None and c["vsp_all"] == 0.0
        for c in res.report["captions"]["cells"]
    )
