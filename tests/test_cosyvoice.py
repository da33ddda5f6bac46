"""CosyVoice2 synthesis: the exact calls of the official inference code, checked against named
stand-ins for the absent ``cosyvoice`` package (both prompt APIs), in process and in a worker.

The stand-ins that synthesise return torch tensors, as the package does: those tests skip when
torch is absent. The loading tests need no torch."""

from __future__ import annotations

import json
import sys
import textwrap
import types
from pathlib import Path

import numpy as np
import pytest
import soundfile as sf

from stylebench.cli import main
from stylebench.registry import MissingExtraError
from stylebench.synth.base import Style
from stylebench.synth.cosyvoice import CosyVoice2Synth, load_voices_file

# Source of a stand-in for the `cosyvoice` package, as released up to late 2025: the prompt is a
# 16 kHz (1, T) tensor. Written to disk for the worker test, exec'd in process for the others.
STAND_IN_TENSOR_API = textwrap.dedent('''
    """Stand-in for cosyvoice.cli.cosyvoice (the real package is not installed here)."""
    import torch

    CALLS = []


    class CosyVoice2:
        def __init__(self, model_dir, load_jit=False, load_trt=False, load_vllm=False,
                     fp16=False, trt_concurrent=1):
            if model_dir == "missing/weights":
                raise FileNotFoundError("cosyvoice2.yaml not found!")
            CALLS.append(("init", model_dir, dict(load_jit=load_jit, load_trt=load_trt, fp16=fp16)))
            self.sample_rate = 24000

        def _chunks(self):
            yield {"tts_speech": torch.full((1, 4800), 0.1)}
            yield {"tts_speech": torch.full((1, 2400), 0.2)}

        def inference_zero_shot(self, tts_text, prompt_text, prompt_speech_16k,
                                zero_shot_spk_id="", stream=False, speed=1.0, text_frontend=True):
            CALLS.append(("zero_shot", tts_text, prompt_text, prompt_speech_16k, stream))
            return self._chunks()

        def inference_instruct2(self, tts_text, instruct_text, prompt_speech_16k,
                                zero_shot_spk_id="", stream=False, speed=1.0, text_frontend=True):
            CALLS.append(("instruct2", tts_text, instruct_text, prompt_speech_16k, stream))
            return self._chunks()
''')


class StandInCosyVoice2PathAPI:
    """Stand-in for CosyVoice2 as released from December 2025: the prompt is a wav path."""

    calls: list = []

    def __init__(
        self,
        model_dir,
        load_jit=False,
        load_trt=False,
        load_vllm=False,
        fp16=False,
        trt_concurrent=1,
    ):
        self.sample_rate = 24000

    def inference_zero_shot(
        self,
        tts_text,
        prompt_text,
        prompt_wav,
        zero_shot_spk_id="",
        stream=False,
        speed=1.0,
        text_frontend=True,
    ):
        import torch

        self.calls.append(("zero_shot", tts_text, prompt_text, prompt_wav, stream))
        yield {"tts_speech": torch.full((1, 480), 0.3)}

    def inference_instruct2(
        self,
        tts_text,
        instruct_text,
        prompt_wav,
        zero_shot_spk_id="",
        stream=False,
        speed=1.0,
        text_frontend=True,
    ):
        import torch

        self.calls.append(("instruct2", tts_text, instruct_text, prompt_wav, stream))
        yield {"tts_speech": torch.full((1, 480), 0.3)}


def _install(monkeypatch, module: types.ModuleType) -> None:
    pkg, cli = types.ModuleType("cosyvoice"), types.ModuleType("cosyvoice.cli")
    for name, mod in (
        ("cosyvoice", pkg),
        ("cosyvoice.cli", cli),
        ("cosyvoice.cli.cosyvoice", module),
    ):
        monkeypatch.setitem(sys.modules, name, mod)


def _raising_api(monkeypatch, exc: BaseException) -> None:
    """Install a stand-in ``cosyvoice`` whose ``CosyVoice2(...)`` raises ``exc`` (no torch)."""

    class StandInCosyVoice2Raising:
        def __init__(self, model_dir, **kwargs):
            raise exc

    module = types.ModuleType("cosyvoice.cli.cosyvoice")
    module.CosyVoice2 = StandInCosyVoice2Raising
    _install(monkeypatch, module)


@pytest.fixture
def tensor_api(monkeypatch) -> types.ModuleType:
    pytest.importorskip("torch")
    module = types.ModuleType("cosyvoice.cli.cosyvoice")
    exec(STAND_IN_TENSOR_API, module.__dict__)  # noqa: S102 - our own stand-in source
    _install(monkeypatch, module)
    return module


@pytest.fixture
def voices_file(tmp_path: Path) -> Path:
    t = np.arange(11025) / 22050  # 0.5 s at 22.05 kHz: 8000 samples once resampled to 16 kHz
    (tmp_path / "prompts").mkdir()
    for name, f0 in (("en_f1", 220.0), ("zh_m1", 120.0)):
        sf.write(tmp_path / "prompts" / f"{name}.wav", 0.3 * np.sin(2 * np.pi * f0 * t), 22050)
    entries = [
        {
            "id": "en-f1",
            "lang": "en",
            "prompt_wav": "prompts/en_f1.wav",
            "prompt_text": "The prompt speaker reads one calm sentence.",
        },
        {
            "id": "zh-m1",
            "lang": "zh",
            "prompt_wav": "prompts/zh_m1.wav",
            "prompt_text": "希望你以后能够做得更好。",
            "instruct": "用平静的语气说",
        },
    ]
    path = tmp_path / "voices.json"
    path.write_text(json.dumps(entries, ensure_ascii=False), encoding="utf-8")
    return path


def test_zero_shot_contract_with_a_16k_prompt_tensor(tensor_api, voices_file):
    synth = CosyVoice2Synth(model="/weights/CosyVoice2-0.5B", voices=str(voices_file))
    voice = synth.voices_for("en")[0]
    audio = synth.synthesize("Say this sentence.", voice)
    init, call = tensor_api.CALLS
    assert init == (
        "init",
        "/weights/CosyVoice2-0.5B",
        {"load_jit": False, "load_trt": False, "fp16": False},
    )
    kind, text, prompt_text, prompt, stream = call
    assert (kind, text, prompt_text, stream) == (
        "zero_shot",
        "Say this sentence.",
        "The prompt speaker reads one calm sentence.",
        False,
    )
    assert tuple(prompt.shape) == (1, 8000) and str(prompt.dtype) == "torch.float32"
    expected = np.concatenate([np.full(4800, 0.1), np.full(2400, 0.2)]).astype(np.float32)
    assert audio.sr == 24000 and np.allclose(audio.wave, expected)
    louder = synth.synthesize("Say this sentence.", voice, Style(gain_db=6.0))  # FFmpeg after
    assert float(np.sqrt(np.mean(louder.wave**2)) / np.sqrt(np.mean(expected**2))) == (
        pytest.approx(10 ** (6 / 20), rel=0.02)
    )


def test_instruct2_contract_in_both_prompt_apis(tensor_api, voices_file, monkeypatch):
    synth = CosyVoice2Synth(model="/w", voices=str(voices_file))
    zh = synth.voices_for("zh")[0]
    synth.synthesize("你好。", zh)  # the voice's own instruction selects instruction mode
    kind, text, instruct, prompt, stream = tensor_api.CALLS[-1]
    assert (kind, text, instruct, stream) == ("instruct2", "你好。", "用平静的语气说", False)
    assert tuple(prompt.shape) == (1, 8000)  # their frontend appends <|endofprompt|> itself

    module = types.ModuleType("cosyvoice.cli.cosyvoice")
    module.CosyVoice2 = StandInCosyVoice2PathAPI
    _install(monkeypatch, module)
    StandInCosyVoice2PathAPI.calls.clear()
    newer = CosyVoice2Synth(model="/w", voices=str(voices_file), instruct="Speak slowly")
    audio = newer.synthesize("Hello.", newer.voices_for("en")[0])
    kind, text, instruct, prompt, _ = StandInCosyVoice2PathAPI.calls[-1]
    assert (kind, instruct) == ("instruct2", "Speak slowly<|endofprompt|>")
    assert prompt == str((voices_file.parent / "prompts" / "en_f1.wav").resolve())
    assert audio.sr == 24000 and audio.wave.size == 480


def test_missing_package_weights_or_voice_give_one_line_hints(monkeypatch, voices_file):
    _raising_api(monkeypatch, FileNotFoundError("/hub/missing/weights/llm.pt not found"))
    synth = CosyVoice2Synth(model="missing/weights", voices=str(voices_file))
    with pytest.raises(MissingExtraError, match="weights 'missing/weights' could not be loaded"):
        synth.synthesize("Hi.", synth.voices_for("en")[0])
    _raising_api(monkeypatch, ConnectionError("Max retries exceeded with url: modelscope.cn"))
    with pytest.raises(MissingExtraError, match="ConnectionError.*download them"):
        synth.synthesize("Hi.", synth.voices_for("en")[0])
    empty = voices_file.parent / "no-weights"
    empty.mkdir()
    no_yaml = CosyVoice2Synth(model=str(empty), voices=str(voices_file))
    with pytest.raises(MissingExtraError, match="holds no cosyvoice2.yaml"):
        no_yaml.synthesize("Hi.", synth.voices_for("en")[0])
    with pytest.raises(ValueError, match="no speaker prompt for voice 'zz'"):
        from stylebench.synth.base import Voice

        synth.synthesize("Hi.", Voice("zz", "en", "x"))
    monkeypatch.setitem(sys.modules, "cosyvoice", None)  # the package is not installed
    monkeypatch.delitem(sys.modules, "cosyvoice.cli.cosyvoice")
    with pytest.raises(MissingExtraError) as err:
        CosyVoice2Synth(voices=str(voices_file)).synthesize("Hi.", synth.voices_for("en")[0])
    assert "cosyvoice is not installed" in str(err.value) and "\n" not in str(err.value)


@pytest.mark.parametrize(
    "exc",
    [
        RuntimeError("CUDA out of memory. Tried to allocate 1.50 GiB"),
        KeyError("llm"),
        ValueError("bad hyperparameter in cosyvoice2.yaml"),
    ],
)
def test_other_load_failures_keep_their_own_type_and_text(monkeypatch, voices_file, exc):
    _raising_api(monkeypatch, exc)
    synth = CosyVoice2Synth(model="iic/CosyVoice2-0.5B", voices=str(voices_file))
    with pytest.raises(type(exc)) as err:
        synth.synthesize("Hi.", synth.voices_for("en")[0])
    assert err.value is exc and not isinstance(err.value, MissingExtraError)


def test_voices_file_errors(tmp_path, voices_file):
    assert sorted(load_voices_file(voices_file)) == ["en-f1", "zh-m1"]
    bad = tmp_path / "bad.json"
    bad.write_text(
        json.dumps([{"id": "a", "lang": "en", "prompt_wav": "nope.wav", "prompt_text": "x"}])
    )
    with pytest.raises(FileNotFoundError, match="prompt wav of voice 'a'"):
        load_voices_file(bad)
    bad.write_text(json.dumps([{"id": "a", "lang": "en"}]))
    with pytest.raises(ValueError, match="lacks"):
        load_voices_file(bad)


def test_build_dialogues_with_cosyvoice2(tensor_api, voices_file, tmp_path, capsys):
    out = tmp_path / "set"
    argv = [
        "build-dialogues",
        "--out",
        str(out),
        "--dims",
        "emotion",
        "--emotions",
        "sad",
        "--langs",
        "en",
        "--per-cell",
        "1",
        "--synth",
        "cosyvoice2",
        "--synth-arg",
        f"voices={voices_file}",
        "--synth-arg",
        "model=/w/CosyVoice2-0.5B",
        "--no-asr-check",  # the stand-in speaks no words for Whisper to read
    ]
    assert main(argv) == 0
    card = json.loads((out / "set_card.json").read_text())
    assert card["synthesizer"] == "cosyvoice2" and card["n_samples"] == 2
    assert card["voices"] == ["en-f1"]
    first = json.loads((out / "manifest.jsonl").read_text().splitlines()[0])
    assert first["emotion"] == "sad" and first["turns"][0]["sr"] == 24000
    assert [c[0] for c in tensor_api.CALLS].count("zero_shot") == 6  # 2 samples x 3 user turns


def test_build_dialogues_without_the_package_prints_the_hint(
    monkeypatch, voices_file, tmp_path, capsys
):
    monkeypatch.setitem(sys.modules, "cosyvoice", None)
    argv = [
        "build-dialogues",
        "--out",
        str(tmp_path / "s"),
        "--dims",
        "volume",
        "--langs",
        "en",
        "--per-cell",
        "1",
        "--synth",
        "cosyvoice2",
        "--synth-arg",
        f"voices={voices_file}",
    ]
    assert main(argv) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("stylebench: ") and "\n" not in err
    assert "cosyvoice is not installed: clone FunAudioLLM/CosyVoice" in err
    assert not (tmp_path / "s").exists()


def test_cosyvoice2_in_its_own_worker_process(voices_file, tmp_path, monkeypatch):
    """The synth worker (the model-worker adapter) with the stand-in package on PYTHONPATH."""
    pytest.importorskip("torch")  # the stand-in returns torch tensors, as the package does
    from stylebench.model_wrappers.worker.synth import WorkerSynth

    pkg = tmp_path / "standin" / "cosyvoice"
    (pkg / "cli").mkdir(parents=True)
    (pkg / "__init__.py").write_text('"""Stand-in for the cosyvoice package."""\n')
    (pkg / "cli" / "__init__.py").write_text("")
    (pkg / "cli" / "cosyvoice.py").write_text(STAND_IN_TENSOR_API)
    monkeypatch.setenv("PYTHONPATH", str(tmp_path / "standin"))
    synth = WorkerSynth(sys.executable, "cosyvoice2", {"voices": str(voices_file), "model": "/w"})
    try:
        assert synth.describe()["name"] == "cosyvoice2"
        audio = synth.synthesize("Hello there.", load_voices_file(voices_file)["en-f1"].voice)
        assert audio.sr == 24000 and audio.wave.size == 7200
        assert np.allclose(audio.wave[:4800], 0.1, atol=1e-4)
    finally:
        synth.close()
