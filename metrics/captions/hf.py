"""``transformers``: an audio LLM captions each reply in process (a GPU machine for real models).

``TransformersCaptioner(model)`` loads ``AutoProcessor`` and ``model_class`` (default
``AutoModelForMultimodalLM``; e.g. ``Qwen2AudioForConditionalGeneration``) from a local folder or
hub id, renders one user turn (the reply's audio, then the instruction text) with the checkpoint's
chat template, and decodes greedily (``temperature`` 0) or sampled with ``seed``. Omni
checkpoints whose processor needs torchvision, or whose ``generate`` also speaks, are better
served with vLLM and the ``openai`` captioner (docs/captioning.md). Tested on a tiny random
Qwen2-Audio config (tests/test_caption_hf.py).
"""

from __future__ import annotations

from typing import Any

from stylebench.errors import BadValue
from stylebench.metrics.captions.base import CaptionError, CaptionRequest
from stylebench.metrics.judges.prompting import LANGUAGE_NAMES
from stylebench.registry import MissingExtraError


class TransformersCaptioner:
    name = "transformers"

    #: the file a weights folder holds (``--caption-model`` is looked up before any work)
    weights_marker = "config.json"

    def __init__(
        self,
        model: str | None = None,
        *,
        model_class: str = "AutoModelForMultimodalLM",
        device: str = "cpu",
        dtype: str = "float32",
        max_new_tokens: int = 256,
        temperature: float = 0.0,
        seed: int = 0,
    ) -> None:
        if not model:
            raise BadValue("the transformers captioner needs --caption-model (a folder or hub id)")
        from importlib.metadata import PackageNotFoundError, version

        try:
            self.version = version("transformers")
        except PackageNotFoundError:
            raise MissingExtraError(
                "transformers/torch are not installed: pip install 'stylebench[hf]'"
            ) from None
        self.model_name, self.model_class, self.device, self.dtype = (
            str(model),
            model_class,
            device,
            dtype,
        )
        self.max_new_tokens, self.temperature, self.seed = (
            int(max_new_tokens),
            float(temperature),
            int(seed),
        )
        self._net: Any = None  # loaded on the first caption: `report` and resumes only describe()

    def _load(self) -> None:
        try:
            import torch
            import transformers
        except ImportError:
            raise MissingExtraError(
                "transformers/torch are not installed: pip install 'stylebench[hf]'"
            ) from None
        cls = getattr(transformers, self.model_class, None)
        if cls is None:
            raise ValueError(f"transformers {transformers.__version__} has no {self.model_class}")
        try:
            self.processor = transformers.AutoProcessor.from_pretrained(self.model_name)
            self._net = (
                cls.from_pretrained(self.model_name, dtype=getattr(torch, self.dtype))
                .to(self.device)
                .eval()
            )
        except OSError as exc:
            raise CaptionError(
                f"cannot load captioner {self.model_name}: {str(exc).splitlines()[0]}"
            ) from None
        self.torch = torch

    def caption(self, req: CaptionRequest) -> str:
        from stylebench.audio import load_audio

        if self._net is None:
            self._load()
        text = req.instruction.text.replace("{{language}}", LANGUAGE_NAMES.get(req.lang, req.lang))
        msgs = [
            {
                "role": "user",
                "content": [{"type": "audio", "audio": req.audio}, {"type": "text", "text": text}],
            }
        ]
        prompt = self.processor.apply_chat_template(
            msgs, add_generation_prompt=True, tokenize=False
        )
        sr = int(self.processor.feature_extractor.sampling_rate)
        wave, _ = load_audio(req.audio, target_sr=sr)
        inputs = self.processor(text=prompt, audio=[wave], sampling_rate=sr, return_tensors="pt")
        inputs = inputs.to(self._net.device).to(
            self._net.dtype
        )  # float features follow a bf16 model
        sample = (
            {"do_sample": True, "temperature": self.temperature}
            if self.temperature > 0
            else {"do_sample": False}
        )
        self.torch.manual_seed(self.seed)
        with self.torch.inference_mode():
            out = self._net.generate(**inputs, max_new_tokens=self.max_new_tokens, **sample)
        ids = getattr(out, "sequences", out)[:, inputs["input_ids"].shape[1] :]
        caption = self.processor.batch_decode(ids, skip_special_tokens=True)[0].strip()
        if not caption:
            raise CaptionError(f"captioner {self.model_name} returned an empty caption")
        return caption

    def describe(self) -> dict[str, Any]:
        return {
            "backend": self.name,
            "model": self.model_name,
            "model_class": self.model_class,
            "decode": {
                "temperature": self.temperature,
                "max_new_tokens": self.max_new_tokens,
                "seed": self.seed,
            },
            "transformers": self.version,
        }
