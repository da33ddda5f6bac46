"""Helpers shared by the wrappers of models that run from their own repository or package.

These models (Kimi-Audio, GLM-4-Voice, Mini-Omni, ...) ship inference code that is not a
transformers class: a cloned repository that must be importable, weights in a local folder or on
the Hugging Face hub, and pinned dependencies that conflict with each other. Each wrapper states
its requirements in a :class:`RepoSpec`; the helpers here turn a missing piece into one actionable
line (:class:`~stylebench.registry.MissingExtraError`), record revisions for the run manifest, and
hold the small pieces of dialogue bookkeeping every wrapper needs. The base class the wrappers
share is :class:`._repo_model.RepoModel`. Nothing heavy is imported here.
"""

from __future__ import annotations

import hashlib
import subprocess
import sys
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from stylebench.model_wrappers._common import (
    AVAILABLE,
    MISSING_PACKAGE,
    has_package,
    hf_hub_cache,
    require_package,
    weights_status,
)
from stylebench.records import DecodeConfig
from stylebench.registry import MissingExtraError

#: sampling modes: the model's own documented defaults, or the run's DecodeConfig where it maps
OFFICIAL, RUN = "official", "run"


@dataclass(frozen=True)
class RepoSpec:
    """What a repo-based model needs, in words a user can act on.

    Attributes:
        name: registry name (also the docs/models.md anchor).
        repo_url: the official repository.
        import_name: a module whose import proves the model's code is usable here.
        install: one line saying how to get that code (clone, pip install, ...).
        weights: default weights, a hub id or "" when the user must give a local folder.
        local_weights: the weights are a local folder given by --model-arg (``check`` looks
            for none, even when ``weights`` names the hub id to download them from).
        output_sr: the reply's sample rate (or how it is known), for the manifest.
        official_sampling: the model's documented sampling settings, in its argument names.
        run_mapping: DecodeConfig field -> the model's argument name, for ``sampling=run``.
        history: how earlier turns reach the model, in words, for the manifest.
    """

    name: str
    repo_url: str
    import_name: str
    install: str
    weights: str = ""
    local_weights: bool = False
    output_sr: int | str | None = None
    official_sampling: Mapping[str, Any] = field(default_factory=dict, compare=False)
    run_mapping: Mapping[str, str] = field(default_factory=dict, compare=False)
    history: str = ""

    def hint(self) -> str:
        """The one-line install hint used in every missing-package message."""
        return (
            f"{self.install}; best in its own env via --worker-python "
            f"(see docs/models.md#{self.name})"
        )


def arg_choice(value: str, name: str, choices: Sequence[str]) -> str:
    """A model argument restricted to ``choices`` (ValueError names the alternatives)."""
    if value not in choices:
        raise ValueError(f"--model-arg {name}={value!r}: expected one of {', '.join(choices)}")
    return value


def add_repo(repo: str | None, spec: RepoSpec, subdirs: Sequence[str] = ("",)) -> Path | None:
    """Make a cloned official repository importable (its code is not an installable package).

    The folders are prepended to ``sys.path`` once, when the wrapper is constructed, never at
    import time. Without ``repo`` the code must already be importable (pip install or PYTHONPATH).
    """
    if not repo:
        return None
    root = Path(repo).expanduser().resolve()
    if not root.is_dir():
        raise MissingExtraError(f"no {spec.name} checkout at {root}: {spec.hint()}")
    for sub in reversed(tuple(subdirs)):
        folder = str(root / sub) if sub else str(root)
        if folder not in sys.path:
            sys.path.insert(0, folder)
    return root


def require_code(
    spec: RepoSpec, repo: str | None, subdirs: Sequence[str] = ("",)
) -> tuple[Path | None, Any]:
    """Add ``repo`` to the path and import ``spec.import_name``, or raise the one-line hint.

    Returns:
        ``(checkout folder or None, imported module)``.
    """
    root = add_repo(repo, spec, subdirs)
    return root, require_package(spec.import_name, spec.hint())


def require_local_dir(path: str | None, what: str, how: str) -> Path:
    """A folder that must exist locally (decoders, checkpoints the hub loaders cannot fetch)."""
    if not path:
        raise MissingExtraError(f"{what} is needed: {how}")
    p = Path(path).expanduser()
    if not p.is_dir():
        raise MissingExtraError(f"{what} not found at {p}: {how}")
    return p


def require_weights(path_or_id: str, spec: RepoSpec) -> str:
    """Fail early on a local weights path that does not exist; hub ids are left to the loader.

    A hub id that is not cached is downloaded by the model's own loader on a machine with
    network access, so it is not an error here (``stylebench models`` reports it).
    """
    status, _ = weights_status(path_or_id)
    local = Path(path_or_id).expanduser()
    looks_local = path_or_id.startswith(("/", ".", "~")) or path_or_id.count("/") != 1
    if looks_local and status != AVAILABLE:
        raise MissingExtraError(
            f"no {spec.name} weights at {local}: download them "
            f"(huggingface-cli download {spec.weights or '<repo id>'} --local-dir {local})"
        )
    return str(local) if local.exists() else path_or_id


def check_spec(spec: RepoSpec, weights: str | None = None) -> tuple[str, str]:
    """``(status, detail)`` for ``stylebench models`` without importing anything heavy."""
    top = spec.import_name.split(".")[0]
    if not has_package(top):
        return MISSING_PACKAGE, f"{top} is not importable here: {spec.hint()}"
    target = weights if weights is not None else spec.weights
    if not target:
        return AVAILABLE, "code importable; weights are a local folder given by --model-arg"
    return weights_status(target)


def git_commit(folder: Path | str | None) -> str:
    """The git commit of a checkout (``+dirty`` when modified), or "unknown"."""
    if folder is None:
        return "unknown"
    try:
        out = subprocess.run(
            ["git", "-C", str(folder), "rev-parse", "HEAD"],
            capture_output=True,
            text=True,
            timeout=5,
            check=False,
        )
        dirty = subprocess.run(
            ["git", "-C", str(folder), "status", "--porcelain", "--untracked-files=no"],
            capture_output=True,
            text=True,
            timeout=5,
            check=False,
        )
    except (OSError, subprocess.TimeoutExpired):
        return "unknown"
    rev = out.stdout.strip()
    if out.returncode != 0 or not rev:
        return "unknown"
    return rev + ("+dirty" if dirty.stdout.strip() else "")


def code_revision(repo: Path | None, module: Any) -> str:
    """Commit of the repo checkout, else of the checkout the imported module lives in."""
    if repo is not None:
        return git_commit(repo)
    origin = getattr(module, "__file__", None)
    return git_commit(Path(origin).parent) if origin else "unknown"


def weights_revision(path_or_id: str) -> str:
    """What identifies a set of weights without reading them.

    A hub id resolves to the commit of its cached snapshot; a local folder to a hash of its
    file names and sizes (``local:<12 hex>``); anything else is "unknown".
    """
    local = Path(path_or_id).expanduser()
    if local.is_dir():
        if local.parent.name == "snapshots":  # a hub cache snapshot: the folder is the commit
            return local.name
        entries = sorted(
            (str(p.relative_to(local)), p.stat().st_size) for p in local.rglob("*") if p.is_file()
        )
        digest = hashlib.sha256(repr(entries).encode()).hexdigest()[:12]
        return f"local:{digest}"
    if path_or_id.count("/") == 1:
        ref = hf_hub_cache() / ("models--" + path_or_id.replace("/", "--")) / "refs" / "main"
        if ref.is_file():
            return ref.read_text(encoding="utf-8").strip()
    return "unknown"


def sampling_for(
    mode: str, official: Mapping[str, Any], decode: DecodeConfig, mapping: Mapping[str, str]
) -> dict[str, Any]:
    """The sampling settings of one call.

    Args:
        mode: ``official`` keeps the model's documented defaults (the run's temperature and top_p
            are not used); ``run`` writes the run's DecodeConfig fields named in ``mapping``
            over them.
        official: the documented defaults, in the model's own argument names.
        decode: the run's decoding settings.
        mapping: DecodeConfig field -> the model's argument name, e.g. ``{"temperature":
            "text_temperature"}``.
    """
    out = dict(official)
    if mode == RUN:
        for field_name, arg in mapping.items():
            out[arg] = getattr(decode, field_name)
    return out


def seed_all(seed: int) -> None:
    """Seed Python, numpy and torch (all devices) so sampling is reproducible per turn."""
    import random

    random.seed(seed)
    np.random.seed(seed % (2**32))
    try:
        import torch
    except ImportError:
        return
    torch.manual_seed(seed)
    if torch.cuda.is_available():
        torch.cuda.manual_seed_all(seed)


def describe_repo_model(
    spec: RepoSpec,
    *,
    weights: str,
    code: str,
    history: str,
    sampling_mode: str,
    sampling: Mapping[str, Any],
    output_sr: int | None,
    **extra: Any,
) -> dict[str, Any]:
    """The manifest entry of a repo-based model: what it is, which revision, how it decodes.

    ``history`` says in words how earlier turns reach the model (audio, text or not at all);
    ``sampling`` holds the settings used when ``sampling_mode`` is official (in run mode the
    run's DecodeConfig, recorded beside the model in the manifest, overrides the mapped ones).
    """
    return {
        "name": spec.name,
        "repo": spec.repo_url,
        "code_revision": code,
        "weights": weights,
        "weights_revision": weights_revision(weights) if weights else "unknown",
        "history": history,
        "sampling_mode": sampling_mode,
        "sampling": dict(sampling),
        "seed": "torch/numpy/random seeded with the run seed before every turn",
        "output_sr": output_sr,
        **extra,
    }


@contextmanager
def loading_weights(spec: RepoSpec, weights: str) -> Iterator[None]:
    """Turn a loader's OSError into the one-line hint when the weights are not available here.

    Hub loaders raise OSError (or subclasses) when a hub id is neither cached nor downloadable;
    with the weights present, an OSError is a real fault and propagates unchanged.
    """
    try:
        yield
    except OSError as exc:
        status, detail = weights_status(weights)
        if status == AVAILABLE:
            raise
        first = (str(exc).strip().splitlines() or [type(exc).__name__])[0][:200]
        raise MissingExtraError(
            f"{spec.name}: could not load weights {weights} ({first}); {detail}"
        ) from exc


def use_cuda_device(device: str) -> None:
    """Select the GPU for official code that always uses the *current* CUDA device.

    ``cuda`` keeps the current one; ``cuda:N`` makes GPU N current. Anything else is a
    ValueError: that code cannot run elsewhere.
    """
    if device == "cuda":
        return
    if not (device.startswith("cuda:") and device[5:].isdigit()):
        raise ValueError(f"--model-arg device={device!r}: this model runs on cuda or cuda:N only")
    import torch

    torch.cuda.set_device(int(device[5:]))
