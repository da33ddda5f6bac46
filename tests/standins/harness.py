"""What the repo-based wrapper tests share: the NAMED STAND-INS' folder, an import sandbox,
three user wavs and a three-turn driver.

The stand-ins (tests/standins/<model>) have the official repositories' module names, functions
and signatures, and no weights; see the test modules' docstrings.
"""

from __future__ import annotations

import json
import sys
import types
from pathlib import Path

import numpy as np
import pytest

from stylebench.audio import write_wav
from stylebench.records import DecodeConfig, Turn

STANDINS = Path(__file__).resolve().parent
DECODE = DecodeConfig(temperature=0.0, top_p=1.0, max_new_tokens=1024, seed=3)


@pytest.fixture(autouse=True)
def isolated_imports(monkeypatch):
    """Stand-ins go on sys.path and into sys.modules; both are restored after each test."""
    before = set(sys.modules)
    monkeypatch.setattr(sys, "path", list(sys.path))
    yield
    for name in set(sys.modules) - before:
        module = sys.modules.get(name)
        origin = str(getattr(module, "__file__", "") or "")
        if origin.startswith(str(STANDINS)) or name.split(".")[0] in STANDIN_TOPS:
            del sys.modules[name]


STANDIN_TOPS = {
    "kimia_infer",
    "speech_tokenizer",
    "flow_inference",
    "inference",
    "utils",
    "generate",
    "inference_s2s",
    "slam_llm",
    "s2s_config",
    "models",
    "bin",
    "generation",
    "constants",
    "cosy24k_vocoder",
    "llama_omni2",
    "transformers_standin",
    "litgpt",
}


@pytest.fixture
def wavs(tmp_path) -> list[str]:
    """Three user turns: 1.2 s tones at 16 kHz, different pitches."""
    out = []
    for k, hz in enumerate((180.0, 200.0, 220.0), start=1):
        t = np.arange(int(16000 * 1.2)) / 16000
        path = tmp_path / f"user{k}.wav"
        write_wav(path, 0.3 * np.sin(2 * np.pi * hz * t), 16000)
        out.append(str(path))
    return out


def user(wav: str, k: int) -> Turn:
    return Turn("user", f"w{k} request", wav, 16000)


def three_turns(model, wavs: list[str]) -> list[Turn]:
    """Drive ``model`` through three turns, keeping history as the runner does (raw included)."""
    history: list[Turn] = []
    replies = []
    for k, wav in enumerate(wavs, start=1):
        reply = model.respond(tuple(history), user(wav, k), DECODE)
        assert reply.role == "assistant" and Path(reply.audio).is_file()
        json.dumps(reply.raw)  # stored in the respond record, handed back as history
        replies.append(reply)
        history += [user(wav, k), reply]
    json.dumps(model.describe())  # goes into manifest.json
    return replies


def standin_module(name: str, source_module: str) -> types.ModuleType:
    """A module called ``name`` exposing every public attribute of a stand-in module."""
    __import__(source_module)
    src = sys.modules[source_module]
    mod = types.ModuleType(name)
    mod.__dict__.update({k: v for k, v in vars(src).items() if not k.startswith("__")})
    mod.__version__ = "stand-in"
    return mod


def calls(module: str, kind: str) -> list:
    return [c for c in sys.modules[module].CALLS if c[0] == kind]
