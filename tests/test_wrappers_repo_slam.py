"""slam-omni: the reply's sample rate and the config's paths, against the NAMED STAND-IN of
SLAM-LLM (tests/standins/slam_llm; see tests/test_wrappers_repo_omni.py for the contract test)
and the real ``snac`` class. A wrong rate biases pitch and speaking rate by the ratio (24000 /
22050 = +8.8%); a missing audio prompt silently changes the voice: both stop the run.
"""

from __future__ import annotations

import sys

import pytest
import soundfile as sf
from standins import harness
from standins.harness import DECODE, STANDINS, user
from test_wrappers_repo_omni import SLAM_YAML

from stylebench.registry import MissingExtraError

pytest.importorskip("torch", reason="the stand-ins of the official code compute with torch")
isolated_imports = harness.isolated_imports  # autouse: stand-ins leave sys.path/sys.modules
wavs = harness.wavs


def _slam(tmp_path, text: str, repo=STANDINS / "slam_llm"):
    config = tmp_path / "c.yaml"
    config.write_text(text)
    from stylebench.model_wrappers.repo.slam_omni import SlamOmniModel

    return SlamOmniModel(config=str(config), repo=str(repo), device="cpu")


def test_slam_omni_writes_at_the_decoders_rate_or_refuses(tmp_path, wavs):
    pytest.importorskip("omegaconf", reason="the dev extra installs omegaconf")
    unset = SLAM_YAML.replace("speech_sample_rate: 22050\n", "")
    # RunConfig's default speech_sample_rate is 24000; the CosyVoice decoder writes 22050
    model = _slam(tmp_path, unset)
    reply = model.respond((), user(wavs[0], 1), DECODE)
    assert reply.sr == sf.info(reply.audio).samplerate == 22050 == model.describe()["output_sr"]
    with pytest.raises(ValueError, match="speech_sample_rate=24000 but the decoder writes 22050"):
        _slam(tmp_path, SLAM_YAML.replace("22050", "24000"))
    decoder = tmp_path / "CosyVoice-300M-SFT"  # a decoder folder; the decoder object names no rate
    decoder.mkdir()
    with_path = unset.replace(
        "  code_type: CosyVoice", f"  code_type: CosyVoice\n  codec_decoder_path: {decoder}"
    )
    with pytest.raises(MissingExtraError, match="cannot read the codec decoder's sample rate"):
        _slam(tmp_path, with_path)
    (decoder / "cosyvoice.yaml").write_text("# hyperpyyaml\nsample_rate: 22050\nllm: !new:x\n")
    assert _slam(tmp_path, with_path).output_sr == 22050


def test_slam_omni_resolves_the_audio_prompt_against_the_checkout(tmp_path, wavs, monkeypatch):
    pytest.importorskip("omegaconf", reason="the dev extra installs omegaconf")
    monkeypatch.chdir(tmp_path)  # the run does not start in the checkout
    rel = "examples/s2s/conf/prompt.yaml"  # any file of the stand-in checkout stands for a wav
    model = _slam(tmp_path, SLAM_YAML + f"audio_prompt_path: ./{rel}\n")
    assert model.audio_prompt == str((STANDINS / "slam_llm" / rel).resolve())
    model.respond((), user(wavs[0], 1), DECODE)
    gen = sys.modules["generate.generate_s2s_online_multi_round"].CALLS[-1]
    assert gen["tone_dir"] == "prompt" and gen["audio_prompt"] == model.audio_prompt
    with pytest.raises(MissingExtraError, match="audio_prompt_path not found at .*nope.wav"):
        _slam(tmp_path, SLAM_YAML + "audio_prompt_path: ./examples/s2s/audio_prompt/nope.wav\n")


def test_slam_omni_reads_the_rate_of_the_real_snac_class():
    """SNAC (PyPI ``snac``, the SLAM-Omni SNAC decoder): its ``sampling_rate`` is what the
    wrapper reads; a tiny random SNAC, so no weights."""
    snac = pytest.importorskip("snac", reason="the dev extra installs snac")
    from stylebench.model_wrappers.repo.slam_omni import decoder_rate

    tiny = dict(encoder_dim=8, encoder_rates=[2], decoder_dim=16, decoder_rates=[2])
    tiny |= dict(attn_window_size=None, codebook_size=16, codebook_dim=4, vq_strides=[1])
    assert decoder_rate(snac.SNAC(sampling_rate=24000, **tiny), None) == 24000
    assert decoder_rate(snac.SNAC(sampling_rate=32000, **tiny), None) == 32000


def test_slam_omni_takes_a_hub_id_for_the_snac_decoder(tmp_path, wavs, monkeypatch):
    """SLAM-LLM's SNAC scripts set codec_decoder_path=hubertsiuzdak/snac_24khz
    (examples/s2s/scripts/inference/mini-omni/inference_s2s_online.sh:14), which setup_codec
    passes to SNAC.from_pretrained (examples/s2s/utils/codec_utils.py:11): a hub id, not a
    folder of the checkout. A relative path that is not a hub id still has to exist."""
    pytest.importorskip("omegaconf", reason="the dev extra installs omegaconf")
    monkeypatch.chdir(tmp_path)
    snac = SLAM_YAML.replace("speech_sample_rate: 22050\n", "speech_sample_rate: 24000\n")
    snac = snac.replace(
        "  code_type: CosyVoice",
        "  code_type: SNAC\n  codec_decoder_type: SNAC\n"
        "  codec_decoder_path: hubertsiuzdak/snac_24khz",
    )
    model = _slam(tmp_path, snac)
    assert model.cfg.model_config.codec_decoder_path == "hubertsiuzdak/snac_24khz"
    assert model.model.codec_decoder.loaded_from == "hubertsiuzdak/snac_24khz"
    reply = model.respond((), user(wavs[0], 1), DECODE)
    assert reply.sr == model.output_sr == 24000
    missing = snac.replace("hubertsiuzdak/snac_24khz", "./models/snac_24khz")
    with pytest.raises(MissingExtraError, match="codec_decoder_path not found at"):
        _slam(tmp_path, missing)
