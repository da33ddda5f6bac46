"""Speech quality: DNSMOS P.835 (SIG, BAK, OVRL) through the ``speechmos`` package's ONNX models.

DNSMOS (Reddy et al., ICASSP 2022) is a non-intrusive predictor of the ITU-T P.835 listening
scores that the Deep Noise Suppression challenge collected: SIG (the speech itself), BAK (the
background) and OVRL (overall), each on a 1-5 scale. It was trained on noisy and noise-suppressed
human speech, so it knows noise, suppression artefacts, clipping and band-limiting. What it was not
trained for: synthetic voices (a clean vocoder reads as clean, its buzz may or may not be seen) and
very expressive speech (shouting and whispering were rare in its ratings, so a low SIG on a shout
may be the style, not a fault). It is therefore a measured value beside the style scores, never a
gate unless a user asks for one (``--min-quality``).

Definitions: the audio is resampled to 16 kHz (the models' only rate); a clip shorter than the
models' 9.01 s window is repeated end to end to exactly one window (``speechmos`` and Microsoft's
reference script double it until it is long enough, then average the overlapping windows); longer clips are scored on 9.01 s windows one second apart and the window
scores averaged. Scores are the polynomial-mapped (non-personalised) DNSMOS values.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from stylebench.metrics._common import resample
from stylebench.metrics.spec import MetricSpec

DNSMOS_SR = 16_000
#: what a run says when the quality score cannot be computed here
MISSING = (
    "DNSMOS needs speechmos, onnxruntime and librosa, which are not installed: "
    "pip install 'stylebench[voice]' (then `stylebench score RUN` adds it)"
)
MIN_SPEECH_S = 0.5  # below this a "clip repeated to 9 s" is a buzz, not speech

SPEC = MetricSpec(
    name="dnsmos",
    version="1",
    outputs=("dnsmos_sig", "dnsmos_bak", "dnsmos_ovrl"),
    needs=("audio",),
    description=(
        "DNSMOS P.835 (speechmos 0.0.1.1 ONNX models, non-personalised): predicted SIG, BAK and "
        "OVRL MOS (1-5) of the whole reply at 16 kHz; clips under 9.01 s are repeated to exactly "
        "one window, longer ones averaged over 9.01 s windows 1 s apart. Trained on noisy and "
        "noise-suppressed human speech; a measured value, not a gate."
    ),
)


@dataclass(frozen=True)
class Dnsmos:
    """DNSMOS P.835 scores (1-5) of one clip."""

    sig: float
    bak: float
    ovrl: float

    def values(self) -> dict[str, float]:
        """The feature-record values (:data:`SPEC` outputs)."""
        return {"dnsmos_sig": self.sig, "dnsmos_bak": self.bak, "dnsmos_ovrl": self.ovrl}


_MODEL: Any = None
_LOCK = threading.Lock()


def _model() -> Any:
    """speechmos' DNSMOS scorer, its ONNX sessions built once with one thread each (so scores
    are identical on every machine and the stage's own workers set the parallelism)."""
    global _MODEL
    with _LOCK:
        if _MODEL is None:
            try:
                import onnxruntime as ort
                from speechmos import dnsmos as sm
            except ImportError:
                from stylebench.registry import MissingExtraError

                raise MissingExtraError(MISSING) from None
            root = Path(sm.__file__).parent / "dnsmos_models"
            opts = ort.SessionOptions()
            opts.intra_op_num_threads = 1
            opts.inter_op_num_threads = 1

            def session(name: str) -> Any:
                return ort.InferenceSession(
                    str(root / name), opts, providers=["CPUExecutionProvider"]
                )

            # speechmos' own constructor builds sessions with onnxruntime's default thread pool,
            # and its P.808 model too (a librosa mel spectrogram whose first call compiles numba
            # code: about 2 s of every worker process), which no score here reads; its P.835
            # model and polynomial mapping are used as they are, on one single-thread session
            scorer = sm.DNSMOS.__new__(sm.DNSMOS)
            scorer.primary_model_path = str(root / "sig_bak_ovr.onnx")
            scorer.onnx_sess = session("sig_bak_ovr.onnx")
            _MODEL = scorer
        return _MODEL


def sm_input_length() -> float:
    """speechmos' DNSMOS window in seconds (9.01)."""
    from speechmos import dnsmos as sm

    return float(sm.INPUT_LENGTH)


def available() -> bool:
    """Whether speechmos (and so DNSMOS) is installed; the features stage leaves the values out
    otherwise, so a run without the ``[voice]`` extra still measures everything else."""
    import importlib.util

    return all(importlib.util.find_spec(m) for m in ("speechmos", "onnxruntime", "librosa"))


def dnsmos(wave: np.ndarray, sr: int) -> Dnsmos:
    """DNSMOS P.835 of ``wave`` (mono float in [-1, 1]) at rate ``sr``.

    Raises:
        ValueError: not mono, non-finite samples, or under :data:`MIN_SPEECH_S` long.
    """
    x = np.asarray(wave, dtype=np.float64)
    if x.ndim != 1:
        raise ValueError(f"DNSMOS needs mono audio, got shape {x.shape}")
    if not np.all(np.isfinite(x)):
        raise ValueError("DNSMOS: the audio contains NaN or infinite samples")
    if x.size < MIN_SPEECH_S * sr:
        raise ValueError(f"DNSMOS: {x.size / sr:.2f} s of audio is under {MIN_SPEECH_S} s")
    y = np.clip(resample(x, sr, DNSMOS_SR), -1.0, 1.0).astype(np.float32)
    window = int(sm_input_length() * DNSMOS_SR)
    if y.size < window:
        # repeat to exactly one window: speechmos doubles the clip until it is long enough, which
        # for a 2 s reply gives 16 s and seven overlapping windows of the same repeated speech
        # (seven times the cost for near-identical scores)
        y = np.resize(y, window)
    scorer = _model()
    # speechmos' DNSMOS.__call__ without its P.808 half: 9.01 s windows 1 s apart, each scored
    # by the P.835 model and mapped by its (non-personalised) polynomials, then averaged
    hops = int(np.floor(y.size / DNSMOS_SR) - sm_input_length()) + 1
    scores = []
    with _LOCK:  # one ONNX run at a time on the shared single-thread session
        for idx in range(hops):
            seg = y[int(idx * DNSMOS_SR) : int((idx + sm_input_length()) * DNSMOS_SR)]
            if seg.size < window:
                continue
            raw = scorer.onnx_sess.run(None, {"input_1": seg[np.newaxis, :]})[0][0]
            scores.append(scorer.get_polyfit_val(*raw, False))
    sig, bak, ovrl = np.mean(np.asarray(scores, dtype=np.float64), axis=0)
    return Dnsmos(sig=float(sig), bak=float(bak), ovrl=float(ovrl))
