"""Loading the emotion2vec probe: only missing weights or packages read as "download them".

funasr is replaced by named stand-ins for its ``AutoModel`` that fail the way a load can fail.
"""

from __future__ import annotations

import sys
import types

import pytest

from stylebench.metrics.emotion_probe import Emotion2VecProbe
from stylebench.registry import MissingExtraError


def _funasr_whose_automodel_raises(exc: BaseException) -> types.SimpleNamespace:
    """Stand-in for the funasr package: ``AutoModel(...)`` raises ``exc``."""

    def stand_in_automodel(**kwargs: object) -> None:
        raise exc

    return types.SimpleNamespace(AutoModel=stand_in_automodel)


@pytest.mark.parametrize(
    "exc",
    [
        RuntimeError("CUDA out of memory. Tried to allocate 2.00 GiB"),
        KeyError("model_conf"),
        AssertionError("emotion2vec is not registered"),
    ],
)
def test_other_failures_keep_their_own_type_and_text(monkeypatch, exc):
    monkeypatch.setitem(sys.modules, "funasr", _funasr_whose_automodel_raises(exc))
    probe = Emotion2VecProbe("iic/emotion2vec_plus_large")
    with pytest.raises(type(exc)) as err:
        probe.probabilities("any.wav")
    assert not isinstance(err.value, MissingExtraError)
    assert err.value is exc and "download" not in str(err.value)


@pytest.mark.parametrize(
    "exc",
    [
        FileNotFoundError("model.pt not found"),
        ConnectionError("Max retries exceeded with url: modelscope.cn"),
    ],
)
def test_missing_weights_or_hub_offline_say_download(monkeypatch, exc):
    monkeypatch.setitem(sys.modules, "funasr", _funasr_whose_automodel_raises(exc))
    with pytest.raises(MissingExtraError, match="download them and pass --probe-model") as err:
        Emotion2VecProbe("iic/emotion2vec_plus_large").probabilities("any.wav")
    assert type(exc).__name__ in str(err.value) and "\n" not in str(err.value)


def test_a_package_the_model_needs_is_named(monkeypatch):
    missing = ModuleNotFoundError("No module named 'torchaudio'")
    monkeypatch.setitem(sys.modules, "funasr", _funasr_whose_automodel_raises(missing))
    with pytest.raises(MissingExtraError, match="torchaudio.*stylebench\\[emotion\\]"):
        Emotion2VecProbe("iic/emotion2vec_plus_large").probabilities("any.wav")


def test_a_local_folder_without_weights_is_named(monkeypatch, tmp_path):
    built = []
    funasr = types.SimpleNamespace(AutoModel=lambda **kw: built.append(kw))  # never reached
    monkeypatch.setitem(sys.modules, "funasr", funasr)
    with pytest.raises(MissingExtraError, match="holds no config.yaml"):
        Emotion2VecProbe(str(tmp_path)).probabilities("any.wav")
    assert built == []


def test_funasr_not_installed(monkeypatch):
    monkeypatch.setitem(sys.modules, "funasr", None)
    with pytest.raises(MissingExtraError, match="funasr is not installed"):
        Emotion2VecProbe().probabilities("any.wav")
