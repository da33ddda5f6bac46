"""Finding a wrapper's packages and weights without loading them, and naming their revision.

``stylebench models`` and every wrapper's one-line errors rest on these: whether a package can be
imported (found without importing it), whether weights are on this machine (a local folder, or a
hub id in the Hugging Face cache; the hub is never contacted), and what identifies a set of
weights in the run manifest (the hub cache's place and what names a path come from
:mod:`stylebench.paths`, which the metrics' models share). Nothing heavy is imported here.
"""

from __future__ import annotations

import hashlib
from pathlib import Path
from typing import Any

# where the hub cache is and what names a path: one owner (the base layer), names kept here
from stylebench.paths import cached_hub_snapshot, hf_hub_cache, hub_repo, is_local_path

AVAILABLE = "available"
MISSING_PACKAGE = "missing package"
MISSING_WEIGHTS = "missing weights"
SMALL_FILE = 1 << 20  # files below 1 MiB (configs, tokenizers) are hashed by content


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


def weights_status(path_or_hub_id: str) -> tuple[str, str]:
    """``(status, detail)`` for a weights folder or a hub id, without downloading anything.

    A local path is available when it is a folder holding at least one file. A hub id
    (``org/name``) is available when the Hugging Face cache holds a snapshot of it with at least
    one file; the hub is never contacted.
    """
    if is_local_path(path_or_hub_id):
        p = Path(path_or_hub_id).expanduser()
        if p.is_dir() and any(p.iterdir()):
            return AVAILABLE, f"weights at {p}"
        if p.is_file():
            return AVAILABLE, f"weights file {p}"
        return MISSING_WEIGHTS, f"no weights at {p}"
    snap = cached_hub_snapshot(path_or_hub_id)
    if snap is not None:
        return AVAILABLE, f"{path_or_hub_id} cached at {snap}"
    return (
        MISSING_WEIGHTS,
        f"{path_or_hub_id} is not in the Hugging Face cache ({hf_hub_cache()}); "
        f"`huggingface-cli download {path_or_hub_id}` or pass --model-arg path=/local/folder",
    )


def weights_revision(path_or_id: str | Path) -> str:
    """What identifies a set of weights, without reading the large files.

    A hub cache snapshot folder is its commit; another local folder is ``local:<12 hex>`` over
    every file's name and size and the bytes of its small files (weight shards are identified by
    name and size only: hashing 20 GB per run is too slow); a hub id resolves to the commit of
    its cached ``main``; anything else is ``"unknown"``.
    """
    folder = Path(path_or_id).expanduser()
    if folder.is_dir():
        if folder.parent.name == "snapshots":
            return folder.name
        h = hashlib.sha256()
        for p in sorted(q for q in folder.rglob("*") if q.is_file()):
            size = p.stat().st_size
            h.update(f"{p.relative_to(folder)}:{size}".encode())
            if size < SMALL_FILE:
                h.update(p.read_bytes())
        return "local:" + h.hexdigest()[:12]
    spec = str(path_or_id)
    if spec.count("/") == 1:
        ref = hub_repo(spec) / "refs" / "main"
        if ref.is_file():
            return ref.read_text(encoding="utf-8").strip()
    return "unknown"
