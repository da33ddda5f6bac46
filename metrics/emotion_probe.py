"""Automatic emotion probe: emotion2vec+ class probabilities per reply, through funasr.

emotion2vec+ (``iic/emotion2vec_plus_large`` on ModelScope, ``emotion2vec/emotion2vec_plus_large``
on Hugging Face, or a local folder) is a 9-class speech emotion recogniser. funasr's
``AutoModel(model=...).generate(wav, granularity="utterance", extract_embedding=False)`` returns,
per input, ``{"labels": [...], "scores": [...]}`` with bilingual labels such as ``"生气/angry"``
and a softmax over the classes. This module maps those labels onto ours (:data:`LABELS`) and keeps
the probabilities as given: the probe's score for a turn is the probability of the sample's
target emotion. StyleBench found the probe's top probability above 0.95 on most synthetic turns
(saturation), which hides turn-to-turn changes; :func:`saturation` measures it for every run.

funasr is the optional extra ``emotion``; it cannot load weights offline here, so the tests drive
this code with a stand-in for funasr's ``AutoModel`` (named as such in the test).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from stylebench.metrics.spec import MetricSpec
from stylebench.registry import LazyRegistry, MissingExtraError

SPEC = MetricSpec(
    name="emotion_probe",
    version="1",
    outputs=("probs", "top", "top_prob"),
    needs=("audio",),
    description=(
        "emotion2vec+ (funasr) utterance-level softmax over 9 classes, labels mapped to angry, "
        "disgusted, fearful, happy, neutral, other, sad, surprised, unknown; the turn's probe "
        "score is the probability of the sample's target emotion."
    ),
)

LABELS: tuple[str, ...] = (
    "angry",
    "disgusted",
    "fearful",
    "happy",
    "neutral",
    "other",
    "sad",
    "surprised",
    "unknown",
)
#: Chinese halves of emotion2vec's bilingual labels (models that print only Chinese use these)
_ZH = {
    "生气": "angry",
    "厌恶": "disgusted",
    "恐惧": "fearful",
    "开心": "happy",
    "中立": "neutral",
    "其他": "other",
    "难过": "sad",
    "吃惊": "surprised",
}
SATURATION_TOP = 0.95
DEFAULT_MODEL = "iic/emotion2vec_plus_large"


def map_label(raw: str) -> str:
    """``"生气/angry"`` -> ``"angry"``; ``"<unk>"`` or an empty label -> ``"unknown"``.

    Raises:
        ValueError: a label that is neither ours, nor a known Chinese name.
    """
    text = raw.strip()
    if text in ("", "<unk>", "unk", "unknown"):
        return "unknown"
    zh, _, en = text.partition("/")
    en = en.strip().lower() if en else zh.strip().lower()
    if en in LABELS:
        return en
    if zh.strip() in _ZH:
        return _ZH[zh.strip()]
    raise ValueError(f"emotion probe returned an unknown label {raw!r}; expected {LABELS}")


def map_scores(labels: Sequence[str], scores: Sequence[float]) -> dict[str, float]:
    """The probe's output as ``{our label: probability}`` for every label in :data:`LABELS`.

    Labels the model does not output get 0; scores of labels that map to the same class add.

    Raises:
        ValueError: lengths differ, a score is negative or not finite, or they do not sum to
            about 1 (tolerance 1e-3; the probe is expected to return a softmax).
    """
    if len(labels) != len(scores) or not labels:
        raise ValueError(f"probe returned {len(labels)} labels and {len(scores)} scores")
    out = dict.fromkeys(LABELS, 0.0)
    for raw, score in zip(labels, scores, strict=True):
        p = float(score)
        if not math.isfinite(p) or p < 0:
            raise ValueError(f"probe score for {raw!r} must be a finite probability, got {score!r}")
        out[map_label(raw)] += p
    total = sum(out.values())
    if abs(total - 1.0) > 1e-3:
        raise ValueError(f"probe scores sum to {total:.4f}, not 1; expected softmax scores")
    return out


def top(probs: Mapping[str, float]) -> tuple[str, float]:
    """The most probable label and its probability (ties: first in :data:`LABELS` order)."""
    label = max(LABELS, key=lambda k: (probs.get(k, 0.0), -LABELS.index(k)))
    return label, float(probs.get(label, 0.0))


@dataclass(frozen=True)
class Saturation:
    """Share of turns whose top probability exceeds ``threshold`` (strictly)."""

    n_turns: int
    n_saturated: int
    threshold: float

    @property
    def share(self) -> float | None:
        return self.n_saturated / self.n_turns if self.n_turns else None


def saturation(top_probs: Sequence[float], threshold: float = SATURATION_TOP) -> Saturation:
    """Count turns whose top class probability is ``> threshold`` (default 0.95)."""
    return Saturation(len(top_probs), sum(p > threshold for p in top_probs), threshold)


class Emotion2VecProbe:
    """emotion2vec+ through funasr, loaded lazily on the first call."""

    name = "emotion2vec"

    #: the file a weights folder holds (``--probe-model`` is looked up before any work)
    weights_marker = "config.yaml"

    def __init__(self, model: str = DEFAULT_MODEL, device: str | None = None) -> None:
        self.model = model
        self.device = device
        self._auto = None

    def _load(self) -> Any:
        if self._auto is not None:
            return self._auto
        try:
            from funasr import AutoModel
        except ImportError:
            raise MissingExtraError(
                "funasr is not installed: pip install 'stylebench[emotion]'"
            ) from None
        local = Path(self.model)
        kwargs: dict[str, Any] = {"model": self.model, "disable_update": True}
        if local.exists():
            # funasr only asserts that config.yaml is there; say which folder lacks the weights
            if not (local / "config.yaml").is_file():
                raise MissingExtraError(self._no_weights(f"{local} holds no config.yaml"))
        else:  # a hub id: ModelScope unless it is a Hugging Face repo
            kwargs["hub"] = "hf" if self.model.startswith("emotion2vec/") else "ms"
        if self.device:
            kwargs["device"] = self.device
        try:
            self._auto = AutoModel(**kwargs)
        except ImportError as exc:  # a package the model code needs
            raise MissingExtraError(
                f"emotion2vec needs a package that is not installed ({exc}); "
                "pip install 'stylebench[emotion]'"
            ) from exc
        except OSError as exc:
            # Missing files and an unreachable hub (requests' and huggingface_hub's errors are
            # OSErrors) mean the weights are not here. Anything else (out of memory, a bug) is
            # not a download problem and propagates with its own type and message.
            first = (str(exc).splitlines() or [""])[0][:200]
            raise MissingExtraError(self._no_weights(f"{type(exc).__name__}: {first}")) from exc
        return self._auto

    def _no_weights(self, why: str) -> str:
        return (
            f"emotion2vec weights {self.model!r} could not be loaded ({why}); download them and "
            "pass --probe-model /local/folder"
        )

    def probabilities(self, wav_path: str | Path) -> dict[str, float]:
        """Class probabilities of one reply (a wav file; funasr resamples it to 16 kHz)."""
        result = self._load().generate(
            str(wav_path), granularity="utterance", extract_embedding=False
        )
        if not result or "labels" not in result[0] or "scores" not in result[0]:
            raise ValueError(f"emotion2vec returned no labels/scores for {wav_path}: {result!r}")
        return map_scores(result[0]["labels"], [float(s) for s in result[0]["scores"]])


#: ``--emotion-probe``: probe name -> its class (imported on first use)
PROBES = LazyRegistry.from_pairs(
    "emotion probe", [("emotion2vec", "stylebench.metrics.emotion_probe:Emotion2VecProbe")]
)
