"""Helpers shared by wrappers (no wrapper imports another)."""

from __future__ import annotations

import hashlib
import os
import tempfile
from pathlib import Path
from typing import Any

import numpy as np

from stylebench.records import Turn


def scratch_wav(prefix: str = "reply") -> Path:
    """A fresh wav path in the scratch folder (``STYLEBENCH_SCRATCH`` or the system temp dir)."""
    root = (
        Path(os.environ.get("STYLEBENCH_SCRATCH") or tempfile.gettempdir()) / "stylebench-scratch"
    )
    root.mkdir(parents=True, exist_ok=True)
    fd, name = tempfile.mkstemp(prefix=prefix + "-", suffix=".wav", dir=root)
    os.close(fd)
    return Path(name)


def script_of(turn: Turn) -> dict[str, Any]:
    """The dialogue script the runner attaches to user turns.

    Only the embedded calibration models read it (an oracle must know what it is asked to
    say); real model wrappers never do.
    """
    script = turn.raw.get("script")
    if not isinstance(script, dict):
        raise ValueError(
            "this embedded model needs the dialogue script on the user turn (raw['script']); "
            "it can only run inside `stylebench run`"
        )
    return script


def seeded_rng(*parts: Any) -> np.random.Generator:
    """A generator seeded by a stable hash of ``parts`` (not Python's salted ``hash``)."""
    digest = hashlib.sha256("|".join(map(str, parts)).encode()).digest()
    return np.random.default_rng(int.from_bytes(digest[:8], "little"))


def assistant_turns(history: list[Turn] | tuple[Turn, ...]) -> list[Turn]:
    return [t for t in history if t.role == "assistant"]


# -- availability checks shared by wrappers (`stylebench models`, lazy imports) ---------------
AVAILABLE = "available"
MISSING_PACKAGE = "missing package"
MISSING_WEIGHTS = "missing weights"


def has_package(import_name: str) -> bool:
    """Whether ``import_name`` can be imported here, found without importing it."""
    import importlib.util

    try:
        return importlib.util.find_spec(import_name) is not None
    except (ImportError, ValueError):  # a dotted name whose parent is missing
        return False


def require_package(import_name: str, hint: str) -> Any:
    """Import ``import_name`` or raise a one-line :class:`~stylebench.registry.MissingExtraError`.

    Args:
        import_name: the module to import, e.g. ``"kimia_infer.api.kimia"``.
        hint: where to read and what to run, e.g.
            ``"see docs/models.md#kimi-audio (pip install ...)"``.

    Returns:
        The imported module.
    """
    import importlib

    from stylebench.registry import MissingExtraError

    try:
        return importlib.import_module(import_name)
    except ImportError as exc:
        missing = getattr(exc, "name", None) or import_name
        detail = "" if missing == import_name else f" ({missing} missing)"
        raise MissingExtraError(f"{import_name} is not installed{detail}: {hint}") from exc


def hf_hub_cache() -> Path:
    """The Hugging Face hub cache folder, resolved the way ``huggingface_hub`` resolves it."""
    for var in ("HF_HUB_CACHE", "HUGGINGFACE_HUB_CACHE"):
        if os.environ.get(var):
            return Path(os.environ[var]).expanduser()
    if os.environ.get("HF_HOME"):
        return Path(os.environ["HF_HOME"]).expanduser() / "hub"
    xdg = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(xdg).expanduser() / "huggingface" / "hub"


def _looks_like_path(spec: str) -> bool:
    return spec.startswith(("/", ".", "~")) or spec.count("/") != 1 or Path(spec).exists()


def weights_status(path_or_hub_id: str) -> tuple[str, str]:
    """``(status, detail)`` for a weights folder or a hub id, without downloading anything.

    A local path is available when it is a folder holding at least one file. A hub id
    (``org/name``) is available when the Hugging Face cache holds a snapshot of it with at least
    one file; the hub is never contacted.
    """
    if _looks_like_path(path_or_hub_id):
        p = Path(path_or_hub_id).expanduser()
        if p.is_dir() and any(p.iterdir()):
            return AVAILABLE, f"weights at {p}"
        if p.is_file():
            return AVAILABLE, f"weights file {p}"
        return MISSING_WEIGHTS, f"no weights at {p}"
    cache = hf_hub_cache()
    snapshots = cache / ("models--" + path_or_hub_id.replace("/", "--")) / "snapshots"
    if snapshots.is_dir():
        for snap in sorted(snapshots.iterdir()):
            if snap.is_dir() and any(snap.iterdir()):
                return AVAILABLE, f"{path_or_hub_id} cached at {snap}"
    return (
        MISSING_WEIGHTS,
        f"{path_or_hub_id} is not in the Hugging Face cache ({cache}); "
        f"`huggingface-cli download {path_or_hub_id}` or pass --model-arg path=/local/folder",
    )


def requirements_status(packages: dict[str, str], weights: str | None = None) -> tuple[str, str]:
    """``(status, detail)`` for a wrapper's ``check()``: packages first, then weights.

    Args:
        packages: import name -> install hint, e.g.
            ``{"kimia_infer": "see docs/models.md#kimi-audio (pip install ...)"}``.
        weights: a local path or hub id to look for (see :func:`weights_status`), or None.
    """
    for import_name, hint in packages.items():
        if not has_package(import_name):
            return MISSING_PACKAGE, f"{import_name} is not installed: {hint}"
    if weights:
        return weights_status(weights)
    return AVAILABLE, "packages importable (weights not checked)"
