"""The model registry: one explicit dict of lazy names.

Adding a model is one line here and one file beside it.
"""

from stylebench.registry import LazyRegistry

MODELS = LazyRegistry.from_pairs(
    "model",
    [
        ("reference", "stylebench.model_wrappers.reference:ReferenceModel"),
        ("neutral", "stylebench.model_wrappers.neutral:NeutralModel"),
    ],
)

#: what each embedded model is, for reports
EMBEDDED_NOTES = {
    "reference": "reference = oracle calibration row (espeak-ng, exact style steps); VSP should be near 100%",
    "neutral": "neutral = floor calibration row (instructions ignored, natural jitter); VSP should be near 0%",
}


def model_status(name: str) -> tuple[str, str]:
    """``(status, detail)`` for ``stylebench models``: available / missing package / missing weights.

    A wrapper may define a classmethod ``check() -> tuple[str, str]`` that looks for its package
    and weights without loading them; wrappers without one are reported as importable or not.
    """
    try:
        cls = MODELS.load(name)
    except ImportError as exc:
        return "missing package", str(exc).splitlines()[0]
    check = getattr(cls, "check", None)
    if callable(check):
        return check()
    return "available", (cls.__doc__ or "").strip().splitlines()[0]
