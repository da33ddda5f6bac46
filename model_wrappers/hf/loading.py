"""Loading the speech models whose classes transformers provides (Qwen2.5-Omni, Qwen3-Omni).

These wrappers load a checkpoint folder with ``<Model>.from_pretrained`` and ``<Processor>``, so
the shared work is: find the weights without downloading (a local folder, or a hub id already in
the Hugging Face cache), name their revision for the run manifest, turn the run's model arguments
into loader arguments, and build the processor. The per-turn helpers (the documented
conversation, the generate arguments) live in :mod:`.turns`; the wrapper class both models share
is :mod:`.qwen_omni`. Nothing heavy is imported at module level; torch and transformers load
inside the functions that need them.
"""

from __future__ import annotations

import importlib.metadata
from dataclasses import dataclass
from pathlib import Path
from types import SimpleNamespace
from typing import Any

from stylebench.errors import BadValue
from stylebench.model_wrappers.weights import (
    MISSING_PACKAGE,
    has_package,
    hf_hub_cache,
    hub_repo,
    is_local_path,
    weights_revision,
    weights_status,
)
from stylebench.registry import MissingExtraError

PROCESSOR_MODES = ("auto", "official", "audio-only")
DTYPES = {"auto": "auto", "bf16": "bfloat16", "fp16": "float16", "fp32": "float32"}
DTYPES |= {name: name for name in ("bfloat16", "float16", "float32")}
#: attributes the Qwen omni processors copy from their tokenizer in ``__init__``
TOKEN_ATTRS = [f"{m}_token{i}" for m in ("image", "audio", "video") for i in ("", "_id")]
TOKEN_ATTRS += [f"{m}_{e}_token" for m in ("vision", "audio") for e in ("bos", "eos")]


@dataclass(frozen=True)
class HFSpec:
    """What one transformers-based model needs, in words a user can act on.

    Attributes:
        name: registry name (also the docs/models.md anchor).
        default_weights: the official hub id.
        module: the transformers submodule that holds the classes (proves the version is new enough).
        model_class: the ``*ForConditionalGeneration`` class name.
        processor_class: the processor class name.
        min_transformers: the first transformers release with these classes.
    """

    name: str
    default_weights: str
    module: str
    model_class: str
    processor_class: str
    min_transformers: str

    def hint(self) -> str:
        return f"pip install 'stylebench[qwen-omni]' (see docs/models.md#{self.name})"


@dataclass(frozen=True)
class Weights:
    """A checkpoint found on this machine: what the user asked for, where it is, its revision."""

    source: str
    folder: Path
    revision: str


def check(spec: HFSpec) -> tuple[str, str]:
    """``(status, detail)`` for ``stylebench models``, without importing torch or downloading."""
    for pkg in ("torch", "transformers"):
        if not has_package(pkg):
            return MISSING_PACKAGE, f"{pkg} is not installed: {spec.hint()}"
    if not has_package(spec.module):
        version = importlib.metadata.version("transformers")
        return (
            MISSING_PACKAGE,
            f"transformers {version} has no {spec.model_class} (needs >= {spec.min_transformers}): "
            f"{spec.hint()}",
        )
    return weights_status(spec.default_weights)


def require_packages(spec: HFSpec) -> None:
    """Fail with the one-line hint when torch or transformers is absent (nothing is imported)."""
    for pkg in ("torch", "transformers"):
        if not has_package(pkg):
            raise MissingExtraError(f"{pkg} is not installed: {spec.hint()}")


def import_transformers(spec: HFSpec) -> tuple[Any, Any]:
    """Import torch and transformers, or raise the hint when the spec's classes are missing."""
    require_packages(spec)
    import torch
    import transformers

    for cls in (spec.model_class, spec.processor_class):
        if not hasattr(transformers, cls):
            raise MissingExtraError(
                f"transformers {transformers.__version__} has no {cls} (needs >= "
                f"{spec.min_transformers}): {spec.hint()}"
            )
    return torch, transformers


def resolve_weights(spec: HFSpec, path: str) -> Weights:
    """The local folder of ``path`` (a folder, or a hub id in the HF cache), never downloading.

    Raises:
        MissingExtraError: one line saying where to put the weights.
    """
    get = f"huggingface-cli download {spec.default_weights}"
    local = Path(path).expanduser()
    if is_local_path(path):
        if not (local / "config.json").is_file():
            what = "no config.json" if local.is_dir() else "does not exist"
            raise MissingExtraError(
                f"no {spec.name} weights at {local} ({what}): `{get} --local-dir {local}` "
                "or pass --model-arg path=<checkpoint folder>"
            )
        return Weights(path, local.resolve(), weights_revision(local.resolve()))
    repo = hub_repo(path)
    ref = repo / "refs" / "main"
    snaps = sorted(p for p in (repo / "snapshots").glob("*") if p.is_dir())
    commit = ref.read_text(encoding="utf-8").strip() if ref.is_file() else ""
    if not commit and len(snaps) == 1:
        commit = snaps[0].name
    folder = repo / "snapshots" / commit
    if not commit or not (folder / "config.json").is_file():
        raise MissingExtraError(
            f"{path} is not in the Hugging Face cache ({hf_hub_cache()}) and stylebench does not "
            f"download during a run: `huggingface-cli download {path}` first, or pass "
            "--model-arg path=<checkpoint folder>"
        )
    return Weights(path, folder, commit)


def loader_kwargs(torch: Any, device: str, dtype: str, attn: str) -> tuple[dict[str, Any], str]:
    """``from_pretrained`` keyword arguments and the device to move to afterwards ("" = none).

    ``device="auto"`` is the README's ``device_map="auto"`` on a CUDA machine (needs accelerate,
    else the model is loaded and moved to ``cuda``) and the CPU elsewhere.
    """
    if dtype not in DTYPES:
        raise BadValue(f"--model-arg dtype={dtype!r}: expected one of {', '.join(DTYPES)}")
    name = DTYPES[dtype]
    kwargs: dict[str, Any] = {
        "dtype": "auto" if name == "auto" else getattr(torch, name),
        "local_files_only": True,
    }
    if attn != "auto":
        if attn == "flash_attention_2" and not has_package("flash_attn"):
            raise MissingExtraError(
                "flash-attn is not installed: pip install flash-attn --no-build-isolation "
                "(or drop --model-arg attn=flash_attention_2)"
            )
        kwargs["attn_implementation"] = attn
    if device == "auto":
        device = "cuda" if torch.cuda.is_available() else "cpu"
        if device == "cuda" and has_package("accelerate"):
            kwargs["device_map"] = "auto"
            return kwargs, ""
    if device != "cpu" and has_package("accelerate"):
        kwargs["device_map"] = {"": device}
        return kwargs, ""
    return kwargs, device


def from_pretrained(spec: HFSpec, cls: Any, folder: Path, **kwargs: Any) -> Any:
    """``cls.from_pretrained(folder)``; an incomplete checkpoint becomes the one-line hint."""
    try:
        return cls.from_pretrained(str(folder), **kwargs)
    except OSError as exc:  # a missing shard or file: transformers raises OSError/EnvironmentError
        first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        raise MissingExtraError(
            f"could not load {spec.name} from {folder} ({first}): download it again with "
            f"`huggingface-cli download {spec.default_weights}`"
        ) from exc


def load_processor(spec: HFSpec, transformers: Any, folder: Path, mode: str) -> tuple[Any, str]:
    """The checkpoint's processor, and which way it was built.

    ``official`` is ``<Processor>.from_pretrained``. In transformers 5 that also builds the
    processor's image and video halves, and the video half needs torchvision. ``audio-only``
    builds the same processor class from the checkpoint's tokenizer, feature extractor and chat
    template without those halves; the audio and text code that runs is the class's own.
    ``auto`` picks ``official`` when torchvision is installed.
    """
    if mode not in PROCESSOR_MODES:
        raise BadValue(f"--model-arg processor={mode!r}: expected one of {PROCESSOR_MODES}")
    cls = getattr(transformers, spec.processor_class)
    if mode == "auto":
        mode = "official" if has_package("torchvision") else "audio-only"
    if mode == "official":
        if not has_package("torchvision"):
            raise MissingExtraError(
                f"torchvision is not installed ({spec.processor_class} needs it in transformers "
                f"{transformers.__version__}): install the torchvision that matches your torch, "
                "or pass --model-arg processor=audio-only"
            )
        return from_pretrained(spec, cls, folder, local_files_only=True), mode
    tok = from_pretrained(spec, transformers.AutoTokenizer, folder, local_files_only=True)
    fe = from_pretrained(spec, transformers.AutoFeatureExtractor, folder, local_files_only=True)
    proc = cls.__new__(cls)  # the class's __init__ would insist on the image/video halves
    proc.tokenizer, proc.feature_extractor = tok, fe
    proc.chat_template = chat_template_of(folder, tok)
    for attr in TOKEN_ATTRS:
        setattr(proc, attr, getattr(tok, attr, None))
    # transformers 4.57's replace_multimodal_special_tokens reads image_processor.merge_size and
    # video_processor.merge_size on every call (to size image/video placeholders, of which
    # there are none here): stand-ins that hold only the checkpoint's merge_size
    merge = SimpleNamespace(merge_size=merge_size_of(folder))
    proc.image_processor = proc.video_processor = merge
    if proc.audio_token is None or proc.audio_token_id is None:
        raise BadValue(
            f"the tokenizer in {folder} names no audio_token; use --model-arg processor=official"
        )
    return proc, mode


def merge_size_of(folder: Path) -> int:
    """The vision merge size in the checkpoint's preprocessor config (2, Qwen's, when absent)."""
    import json

    p = folder / "preprocessor_config.json"
    try:
        return int(json.loads(p.read_text(encoding="utf-8")).get("merge_size") or 2)
    except (OSError, ValueError, AttributeError):
        return 2


def chat_template_of(folder: Path, tokenizer: Any) -> str:
    """The processor's chat template (``chat_template.jinja`` / ``.json``), else the tokenizer's."""
    import json

    jinja = folder / "chat_template.jinja"
    if jinja.is_file():
        return jinja.read_text(encoding="utf-8")
    for name in ("chat_template.json", "processor_config.json"):
        p = folder / name
        if p.is_file():
            tpl = json.loads(p.read_text(encoding="utf-8")).get("chat_template")
            if tpl:
                return tpl
    if getattr(tokenizer, "chat_template", None):
        return tokenizer.chat_template
    raise ValueError(f"{folder} has no chat template (chat_template.jinja/.json or tokenizer's)")
