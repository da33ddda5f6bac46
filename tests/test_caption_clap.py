"""S-CLAP through a real transformers ``ClapModel``: a tiny random config saved to a folder (no
weights can be downloaded here), loaded from that folder as a user's would be."""

from __future__ import annotations

import numpy as np
import pytest

from stylebench.metrics.captions import caf


@pytest.fixture(scope="module")
def tiny_clap(tmp_path_factory):
    pytest.importorskip("transformers")
    import torch
    from tokenizers import Tokenizer, models, pre_tokenizers
    from transformers import ClapConfig, ClapFeatureExtractor, ClapModel, PreTrainedTokenizerFast

    torch.manual_seed(0)
    folder = tmp_path_factory.mktemp("tiny-clap")
    text = dict(
        vocab_size=32,
        hidden_size=16,
        num_hidden_layers=1,
        num_attention_heads=2,
        intermediate_size=32,
        max_position_embeddings=40,
        projection_dim=8,
    )
    audio = dict(
        spec_size=256,
        patch_size=4,
        patch_stride=(4, 4),
        num_mel_bins=64,
        window_size=8,
        depths=[1, 1],
        num_attention_heads=[1, 1],
        hidden_size=16,
        patch_embeds_hidden_size=8,
        projection_dim=8,
        enable_fusion=False,
    )
    ClapModel(ClapConfig(text_config=text, audio_config=audio, projection_dim=8)).save_pretrained(
        folder
    )
    ClapFeatureExtractor().save_pretrained(folder)
    words = ["<s>", "<pad>", "</s>", "<unk>", *"a the quiet loud room voice fast slow tone".split()]
    tk = Tokenizer(models.WordLevel({w: i for i, w in enumerate(words)}, unk_token="<unk>"))
    tk.pre_tokenizer = pre_tokenizers.Whitespace()
    PreTrainedTokenizerFast(
        tokenizer_object=tk, bos_token="<s>", eos_token="</s>", pad_token="<pad>", unk_token="<unk>"
    ).save_pretrained(folder)
    return folder


def test_s_clap_is_the_max_over_window_cosines(tiny_clap, tmp_path):
    import soundfile as sf

    from stylebench.metrics.captions.clap import ClapScorer

    rng = np.random.default_rng(1)
    sr = 48000
    wave = np.concatenate(
        [0.05 * rng.standard_normal(6 * sr), 0.3 * np.sin(np.arange(6 * sr) * 0.05)]
    )  # 12 s
    path = tmp_path / "a.wav"
    sf.write(path, wave.astype("float32"), sr)
    s = ClapScorer(str(tiny_clap))
    assert (s.window_s, s.hop_s) == (10.0, 1.0)
    w = s.embed_windows(s.load(path), sr)
    assert w.shape == (3, 8)  # windows start at 0, 1 and 2 s: the last one ends at 12 s
    t = s.embed_text(["a quiet room"])[0]
    cos = (w / np.linalg.norm(w, axis=1, keepdims=True)) @ (t / np.linalg.norm(t))
    assert s.s_clap(path, "a quiet room") == pytest.approx(float(cos.max()), abs=1e-6)
    compat = s.s_clap(path, "a quiet room", mode="max_embedding")
    assert compat == pytest.approx(caf.s_clap(w, t, mode="max_embedding"), abs=1e-6)
    assert -1.0 <= compat <= 1.0
    assert ClapScorer(str(tiny_clap), window_s=7.0).embed_windows(s.load(path), sr).shape == (6, 8)
