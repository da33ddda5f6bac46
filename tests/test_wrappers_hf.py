"""The transformers-based wrappers (qwen2.5-omni, qwen3-omni) run for real on tiny random models.

The checkpoints are built by tests/standins/tiny_qwen.py: the real transformers classes with
tiny thinker/talker/vocoder configurations and random weights, saved with a small byte-level
tokenizer, a default WhisperFeatureExtractor and a stand-in chat template. Random weights speak noise; what is checked is the plumbing: three turns with history, one wav
per turn at 24 kHz, seeding, the manifest entry, and the one-line errors.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path
from types import SimpleNamespace

import pytest

torch = pytest.importorskip("torch")
transformers = pytest.importorskip("transformers")

from standins.tiny_qwen import COMMIT, build_checkpoints  # noqa: E402  (needs torch)

from stylebench.config import make_config  # noqa: E402
from stylebench.model_wrappers.hf import loading as hf  # noqa: E402
from stylebench.model_wrappers.hf.qwen3_omni import Qwen3OmniModel  # noqa: E402
from stylebench.model_wrappers.hf.qwen25_omni import (  # noqa: E402
    CARD_SYSTEM_PROMPT,
    Qwen25OmniModel,
)
from stylebench.model_wrappers.hf.turns import (  # noqa: E402
    conversation,
    model_inputs,
    thinker_sampling,
)
from stylebench.records import DecodeConfig, Turn  # noqa: E402
from stylebench.registry import MissingExtraError  # noqa: E402


@pytest.fixture(scope="module")
def ckpts(tmp_path_factory):
    """Tiny checkpoints: qwen2.5 in a plain folder, qwen3 as a hub-cache snapshot of the 30B id."""
    threads = torch.get_num_threads()
    torch.set_num_threads(1)  # tiny ops on a busy 2-core machine are ~50x slower threaded
    root = tmp_path_factory.mktemp("hf_tiny")
    build_checkpoints(root)
    yield root
    torch.set_num_threads(threads)


def _run(model: str, args: dict, small_set: Path, out: Path, seed: int = 0):
    from stylebench.commands.runs import run

    cfg = make_config(
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
    recs = sorted(
        (SimpleNamespace(**d) for d in result.store.iter_raw("respond")),
        key=lambda r: (r.sample_id, r.turn),
    )
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
    msgs, audio = conversation(history, _turn("user", "q3", wavs[2]), "SYS")
    assert [m["role"] for m in msgs] == ["system", "user", "assistant", "user", "assistant", "user"]
    assert msgs[2]["content"] == "first reply" and audio == [wavs[0], wavs[1], wavs[2]]
    assert msgs[5]["content"] == [{"type": "audio", "audio": wavs[2]}]
    inputs = model_inputs(q25.processor, msgs, audio, q25.model)
    prompt = q25.processor.tokenizer.decode(inputs["input_ids"][0])
    assert prompt.startswith("<|im_start|>system\nSYS<|im_end|>")
    assert "first reply" in prompt and "second reply" in prompt and "q1" not in prompt
    assert prompt.count("<|audio_bos|>") == 3 and prompt.endswith("<|im_start|>assistant\n")
    assert inputs["input_features"].shape[0] == 3
    with pytest.raises(ValueError, match="alternate"):
        conversation(history[:1], _turn("user", "q", wavs[0]), None)


def test_same_seed_same_reply_other_seed_other_reply(q25, small_set):
    wav = str(sorted(small_set.rglob("*.wav"))[0])
    replies = []
    for seed in (3, 3, 4):
        turn = q25.respond((), _turn("user", "", wav), DecodeConfig(max_new_tokens=4, seed=seed))
        replies.append(Path(turn.audio).read_bytes())
    assert replies[0] == replies[1] and replies[0] != replies[2]


def test_decode_settings_map_to_the_thinker_and_are_described(q25):
    assert thinker_sampling(DecodeConfig(max_new_tokens=5)) == {
        "thinker_max_new_tokens": 5,
        "thinker_do_sample": False,
    }
    sampled = thinker_sampling(DecodeConfig(temperature=0.7, top_p=0.9))
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
    assert len(lines) == 1 and re.match(
        r"stylebench: (error: )?no qwen2.5-omni weights at", lines[0]
    )
