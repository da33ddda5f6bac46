"""What the wrappers of models that run from their own repository or package share.

These models (Kimi-Audio, GLM-4-Voice, Mini-Omni, ...) ship inference code that is not a
transformers class: a cloned repository that must be importable, weights in a local folder or on
the Hugging Face hub, and pinned dependencies that conflict with each other. Each wrapper states
its requirements in a :class:`RepoSpec` and holds an :class:`Upstream` (the imported official
code, its revision and the sampling mode); the helpers here turn a missing piece into one
actionable line (:class:`~stylebench.registry.MissingExtraError`) and write the manifest entry.
Nothing heavy is imported here.
"""

from __future__ import annotations

import sys
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import Any

from stylebench.errors import BadValue
from stylebench.model_wrappers.decoding import run_settings
from stylebench.model_wrappers.weights import (
    AVAILABLE,
    MISSING_PACKAGE,
    has_package,
    is_local_path,
    require_package,
    weights_revision,
    weights_status,
)
from stylebench.paths import git_revision
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
        history_kind: what the model hears of its earlier replies, one of
            :data:`~stylebench.model_wrappers.common.HISTORY_KINDS`.
        greedy: the model's arguments that make its text decoder greedy (``sampling=run`` at
            temperature 0; see :mod:`stylebench.model_wrappers.decoding`).
        sampled: arguments added when ``sampling=run`` samples (temperature above 0).
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
    history_kind: str = ""
    greedy: Mapping[str, Any] = field(default_factory=dict, compare=False)
    sampled: Mapping[str, Any] = field(default_factory=dict, compare=False)

    def hint(self) -> str:
        """The one-line install hint used in every missing-package message."""
        return (
            f"{self.install}; best in its own env via --worker-python "
            f"(see docs/models.md#{self.name})"
        )


class Upstream:
    """The official code one wrapper runs: its checkout, imported module, revision, sampling.

    Built first in a wrapper's ``__init__``: it checks ``--model-arg sampling``, makes ``repo``
    importable (prepending ``subdirs`` to ``sys.path`` once, never at import time) and imports
    ``spec.import_name``, or raises the one-line hint.
    """

    def __init__(
        self, spec: RepoSpec, repo: str | None, sampling: str, subdirs: Sequence[str] = ("",)
    ) -> None:
        self.spec = spec
        self.sampling_mode = arg_choice(sampling, "sampling", (OFFICIAL, RUN))
        self.repo = add_repo(repo, spec, subdirs)
        self.module = require_package(spec.import_name, spec.hint())

    @cached_property
    def code_revision(self) -> str:
        """Commit of the checkout, else of the checkout the imported module lives in."""
        if self.repo is not None:
            return git_revision(self.repo)
        origin = getattr(self.module, "__file__", None)
        return git_revision(Path(origin).parent) if origin else "unknown"

    def sampling(self, decode: DecodeConfig) -> dict[str, Any]:
        """One call's sampling settings.

        ``official`` keeps the model's documented defaults (the run's temperature and top_p are
        not used); ``run`` maps the run's settings with
        :func:`~stylebench.model_wrappers.decoding.run_settings` (temperature 0 = the spec's
        ``greedy`` arguments).
        """
        return spec_settings(self.spec, decode, self.sampling_mode)

    def describe(
        self,
        weights: str,
        *,
        history: str | None = None,
        history_kind: str | None = None,
        sampling: Mapping[str, Any] | None = None,
        output_sr: int | str | None = None,
        **extra: Any,
    ) -> dict[str, Any]:
        """The manifest entry: what the model is, which revision, how it decodes.

        ``history`` (default ``spec.history``) says in words how earlier turns reach the model;
        ``sampling`` (default ``spec.official_sampling``) holds the settings used when the
        sampling mode is official (in run mode the run's DecodeConfig, recorded beside the
        model in the manifest, overrides the mapped ones).
        """
        spec = self.spec
        return {
            "name": spec.name,
            "repo": spec.repo_url,
            "code_revision": self.code_revision,
            "weights": weights,
            "weights_revision": weights_revision(weights) if weights else "unknown",
            "history": spec.history if history is None else history,
            "history_kind": spec.history_kind if history_kind is None else history_kind,
            "sampling_mode": self.sampling_mode,
            "sampling": dict(spec.official_sampling if sampling is None else sampling),
            "seed": "torch/numpy/random seeded with the run seed before every turn",
            "output_sr": spec.output_sr if output_sr is None else output_sr,
            **extra,
        }


def spec_settings(spec: RepoSpec, decode: DecodeConfig, mode: str) -> dict[str, Any]:
    """The arguments one call of ``spec``'s model gets in sampling ``mode`` (see ``sampling``)."""
    if mode != RUN:
        return dict(spec.official_sampling)
    return run_settings(
        spec.official_sampling, spec.run_mapping, decode, greedy=spec.greedy, sampled=spec.sampled
    )


def arg_choice(value: str, name: str, choices: Sequence[str]) -> str:
    """A model argument restricted to ``choices`` (ValueError names the alternatives)."""
    if value not in choices:
        raise BadValue(f"--model-arg {name}={value!r}: expected one of {', '.join(choices)}")
    return value


def add_repo(repo: str | None, spec: RepoSpec, subdirs: Sequence[str] = ("",)) -> Path | None:
    """Make a cloned official repository importable (its code is not an installable package).

    Without ``repo`` the code must already be importable (pip install or PYTHONPATH).
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
    local = Path(path_or_id).expanduser()
    if is_local_path(path_or_id) and weights_status(path_or_id)[0] != AVAILABLE:
        raise MissingExtraError(
            f"no {spec.name} weights at {local}: download them "
            f"(huggingface-cli download {spec.weights or '<repo id>'} --local-dir {local})"
        )
    return str(local) if local.exists() else path_or_id


def check_spec(spec: RepoSpec) -> tuple[str, str]:
    """``(status, detail)`` for ``stylebench models`` without importing anything heavy."""
    top = spec.import_name.split(".")[0]
    if not has_package(top):
        return MISSING_PACKAGE, f"{top} is not importable here: {spec.hint()}"
    if spec.local_weights or not spec.weights:
        return AVAILABLE, "code importable; weights are a local folder given by --model-arg"
    return weights_status(spec.weights)


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


def select_cuda(device: str) -> None:
    """Make GPU N current for ``device="cuda:N"`` (official helpers that allocate on the
    *current* CUDA device then agree with the model); any other device is left alone."""
    if device.startswith("cuda:") and device[5:].isdigit():
        import torch

        torch.cuda.set_device(int(device[5:]))


def use_cuda_device(device: str) -> None:
    """Select the GPU for official code that always uses the *current* CUDA device.

    ``cuda`` keeps the current one; ``cuda:N`` makes GPU N current. Anything else is a
    ValueError: that code cannot run elsewhere.
    """
    if device == "cuda":
        return
    if not (device.startswith("cuda:") and device[5:].isdigit()):
        raise BadValue(f"--model-arg device={device!r}: this model runs on cuda or cuda:N only")
    import torch

    torch.cuda.set_device(int(device[5:]))
