"""``transformers``: the judge model loaded in process (a hub id or a local folder).

The causal LM and its tokenizer load on the first verdict, not when the judge is built, so a
resumed run whose verdicts are all stored never loads weights. The chat is formatted with the
tokenizer's chat template when it has one (``add_generation_prompt=True``); otherwise as plain
``System:/User:/Assistant:`` text. Decoding is greedy at temperature 0 and sampled (seeded) above
it; only the newly generated tokens are decoded, special tokens skipped.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from stylebench.metrics.judges.base import JudgeError
from stylebench.metrics.judges.llm import ChatJudge, chat_dicts, shared_options
from stylebench.metrics.judges.prompting import ChatMessage
from stylebench.registry import MissingExtraError


def _need_hf() -> tuple[Any, Any]:
    try:
        import torch
        import transformers
    except ImportError:
        raise MissingExtraError(
            "transformers is not installed: pip install 'stylebench[hf]' "
            "(CPU machines: pip install torch==2.13.0 first)"
        ) from None
    return torch, transformers


def plain_chat(messages: Sequence[ChatMessage]) -> str:
    """The chat as plain text, for tokenizers without a chat template."""
    parts = [f"{m.role.capitalize()}: {m.content}" for m in messages]
    return "\n\n".join(parts) + "\n\nAssistant:"


class TransformersJudge(ChatJudge):
    """LLM judge run with ``transformers`` in this process."""

    name = "transformers"
    #: the file a weights folder holds (``--judge-model`` is looked up before any work)
    weights_marker = "config.json"

    @shared_options
    def __init__(
        self,
        model: str | None = None,
        *,
        revision: str | None = None,
        device: str = "cpu",
        dtype: str = "auto",
        **shared: Any,
    ) -> None:
        super().__init__(model, **shared)
        self.revision = revision
        self.device = device
        self.dtype = dtype
        self._lm: Any = None
        self._tok: Any = None

    def extra_describe(self) -> dict[str, Any]:
        ident: dict[str, Any] = {"revision": self.revision, "dtype": self.dtype}
        cfg = Path(self.model) / "config.json"
        if cfg.is_file():  # a local folder: name its weights by their config and file sizes
            files = sorted(
                p for p in Path(self.model).iterdir() if p.suffix in (".safetensors", ".bin")
            )
            ident["local"] = {
                "config_sha256": hashlib.sha256(cfg.read_bytes()).hexdigest(),
                "weights": {p.name: p.stat().st_size for p in files},
            }
        try:
            from importlib.metadata import version

            ident["transformers"] = version("transformers")
        except Exception:  # noqa: BLE001 - metadata is informative only
            ident["transformers"] = None
        return ident

    def load(self) -> tuple[Any, Any]:
        """Load (once) and return ``(model, tokenizer)``."""
        if self._lm is None:
            torch, transformers = _need_hf()
            kw: dict[str, Any] = {"revision": self.revision} if self.revision else {}
            try:
                tok = transformers.AutoTokenizer.from_pretrained(self.model, **kw)
                lm = transformers.AutoModelForCausalLM.from_pretrained(
                    self.model, dtype=self.dtype, **kw
                )
            except OSError as exc:
                raise JudgeError(
                    f"cannot load judge model {self.model!r}: {str(exc).splitlines()[0]} "
                    "(pass a local folder or a hub id available offline)"
                ) from None
            lm.to(self.device).eval()
            self._lm, self._tok = lm, tok
        return self._lm, self._tok

    def prompt_text(self, messages: Sequence[ChatMessage]) -> str:
        """The exact text the model is given (chat template if the tokenizer has one)."""
        _, tok = self.load()
        if getattr(tok, "chat_template", None):
            chat = chat_dicts(messages)
            return tok.apply_chat_template(chat, add_generation_prompt=True, tokenize=False)
        return plain_chat(messages)

    def complete(self, messages: Sequence[ChatMessage]) -> str:
        torch, _ = _need_hf()
        lm, tok = self.load()
        text = self.prompt_text(messages)
        has_template = bool(getattr(tok, "chat_template", None))
        enc = tok(text, return_tensors="pt", add_special_tokens=not has_template).to(self.device)
        gen: dict[str, Any] = {"max_new_tokens": self.decode.max_new_tokens}
        if self.decode.temperature > 0:
            torch.manual_seed(self.decode.seed)
            gen.update(do_sample=True, temperature=self.decode.temperature, top_p=1.0)
        else:
            gen.update(do_sample=False)
        pad = tok.pad_token_id if tok.pad_token_id is not None else tok.eos_token_id
        with torch.inference_mode():
            out = lm.generate(**enc, pad_token_id=pad, **gen)
        new = out[0, enc["input_ids"].shape[1] :]
        return tok.decode(new, skip_special_tokens=True)
