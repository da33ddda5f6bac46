"""Where stylebench keeps things outside a run folder, what identifies a checkout, and where the
files and models a user names are.

One cache root for every cache (dialogue sets, judge verdicts, offline models):
``$STYLEBENCH_CACHE`` when set, else ``~/.cache/stylebench``. A file a user names is checked by
:func:`named_file`; a model named by path or hub id by :func:`find_weights`, before any work.
"""

from __future__ import annotations

import os
import subprocess
from collections.abc import Callable, Sequence
from pathlib import Path


def cache_root() -> Path:
    """The cache root: ``$STYLEBENCH_CACHE`` if set, else ``~/.cache/stylebench``."""
    env = os.environ.get("STYLEBENCH_CACHE")
    return Path(env).expanduser() if env else Path.home() / ".cache" / "stylebench"


def git_revision(folder: Path | str | None) -> str:
    """The git commit of the checkout holding ``folder`` (``+dirty`` when tracked files are
    modified), or ``"unknown"`` when there is none or git is missing."""
    if folder is None:
        return "unknown"

    def git(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            ["git", "-C", str(folder), *args],
            capture_output=True,
            text=True,
            timeout=5,
            check=False,
        )

    try:
        head = git("rev-parse", "HEAD")
        dirty = git("status", "--porcelain", "--untracked-files=no")
    except (OSError, subprocess.TimeoutExpired):
        return "unknown"
    rev = head.stdout.strip()
    if head.returncode != 0 or not rev:
        return "unknown"
    return rev + ("+dirty" if dirty.stdout.strip() else "")


def named_file(path: Path | str, what: str) -> Path:
    """The file a user named, checked to be one: ``what`` names it as the message should
    (``"config file"``, ``"--judge-prompt-srd"``).

    Raises:
        BadValue: the path is a folder (a folder is not "missing").
        MissingFile: nothing is there.
    """
    from stylebench.errors import BadValue, MissingFile

    p = Path(path)
    if p.is_dir():
        raise BadValue(f"{what} {p} is a folder, not a file; name the file in it")
    if not p.is_file():
        raise MissingFile(f"{what} {p} does not exist")
    return p


def hf_hub_cache() -> Path:
    """The Hugging Face hub cache folder, resolved the way ``huggingface_hub`` resolves it."""
    for var in ("HF_HUB_CACHE", "HUGGINGFACE_HUB_CACHE"):
        if os.environ.get(var):
            return Path(os.environ[var]).expanduser()
    if os.environ.get("HF_HOME"):
        return Path(os.environ["HF_HOME"]).expanduser() / "hub"
    xdg = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(xdg).expanduser() / "huggingface" / "hub"


def hub_repo(hub_id: str) -> Path:
    """The cache folder of hub model ``org/name`` (it may not exist)."""
    return hf_hub_cache() / ("models--" + hub_id.replace("/", "--"))


def is_local_path(spec: str) -> bool:
    """Whether a weights argument names a local path rather than a hub id (``org/name``).

    A path starts with ``/``, ``.`` or ``~``, has other than exactly one ``/``, or exists here.
    """
    return (
        spec.startswith(("/", ".", "~")) or spec.count("/") != 1 or Path(spec).expanduser().exists()
    )


def cached_hub_snapshot(hub_id: str) -> Path | None:
    """A snapshot folder of ``hub_id`` in the Hugging Face cache that holds a file, or None."""
    snapshots = hub_repo(hub_id) / "snapshots"
    if snapshots.is_dir():
        for snap in sorted(snapshots.iterdir()):
            if snap.is_dir() and any(snap.iterdir()):
                return snap
    return None


def cached_hub_models() -> list[str]:
    """The hub ids with a snapshot in the Hugging Face cache (what loads with no network)."""
    root = hf_hub_cache()
    if not root.is_dir():
        return []
    names = [p.name.removeprefix("models--").replace("--", "/") for p in root.glob("models--*")]
    return sorted(n for n in names if cached_hub_snapshot(n) is not None)


#: how many cached hub ids a message lists
_LISTED = 6


def find_weights(
    ref: str,
    flag: str,
    *,
    offline: Sequence[str] = (),
    hub_names: Sequence[str] = (),
    marker: str | None = None,
    fetch: Callable[[str], object] | None = None,
) -> str:
    """Check, before any work starts, that the model ``ref`` names can be loaded: the one lookup
    behind every model a user names by path or id (``--asr-model``, ``--judge-model``,
    ``--caption-model``, ``--probe-model``). Returns ``ref`` unchanged.

    ``ref`` is looked up as:

    - one of ``offline`` (names the caller resolves itself, e.g. Whisper ``base``): taken;
    - a hub id when nothing is at that path here and it is one of ``hub_names`` (a backend's
      own short names, e.g. faster-whisper's ``large-v3``) or has the form ``org/name``: found
      in the Hugging Face cache, else ``fetch(ref)`` (the backend's own download; default: ask
      the hub for its ``config.json``) must succeed;
    - otherwise a folder (or, with ``marker`` None, a file) on this machine, holding ``marker``.

    Raises:
        MissingFile: a path with nothing there.
        BadValue: a folder without ``marker``, or a hub id neither cached nor fetched. Each
            message is one line naming the flag, how ``ref`` was looked up (a folder or a hub id)
            and which models exist here offline.
    """
    from stylebench.errors import BadValue, MissingFile

    if ref in offline:
        return ref
    local = Path(ref).expanduser()
    hub = not local.exists() and (ref in hub_names or not is_local_path(ref))
    if not hub:
        if not local.exists():
            raise MissingFile(
                f"{flag} {ref}: looked up as a folder (it is a path, not an org/name hub id) "
                f"and there is none; {offline_models(offline)}"
            )
        if marker is not None and not (local / marker).is_file():
            what = (
                f"it holds no {marker}" if local.is_dir() else f"a file, not a folder with {marker}"
            )
            raise BadValue(
                f"{flag} {ref}: looked up as a folder, and {what}; {offline_models(offline)}"
            )
        return ref
    if ref not in hub_names and cached_hub_snapshot(ref) is not None:
        return ref
    try:
        (fetch or _fetch_config)(ref)
    except Exception as exc:  # noqa: BLE001 - every way a lookup fails is said in one line
        first = (str(exc).strip().splitlines() or [""])[0]
        raise BadValue(
            f"{flag} {ref}: looked up as a hub id: not in the Hugging Face cache "
            f"({hf_hub_cache()}) and not fetched ({type(exc).__name__}: {first}); "
            f"{offline_models(offline)}; or give a model folder"
        ) from None
    return ref


def offline_models(offline: Sequence[str] = ()) -> str:
    """What a message lists as loadable with no network: ``offline`` and the cached hub ids."""
    cached = cached_hub_models()
    shown = cached[:_LISTED] + ([f"{len(cached) - _LISTED} more"] if len(cached) > _LISTED else [])
    parts = [f"offline here: {', '.join(offline)}"] if offline else []
    parts.append(
        f"in the Hugging Face cache: {', '.join(shown)}"
        if shown
        else "nothing in the Hugging Face cache"
    )
    return "; ".join(parts)


def _fetch_config(hub_id: str) -> None:
    """Ask the hub for ``hub_id``'s ``config.json`` (a few kB): it exists and is reachable.
    ``HF_HUB_OFFLINE`` is read now: huggingface_hub reads it once, when it is first imported, so
    a process that imported it before the variable was set would still try the network (and wait
    out its timeouts with no network)."""
    from huggingface_hub import hf_hub_download

    offline = os.environ.get("HF_HUB_OFFLINE", "").strip().upper() in {"1", "ON", "YES", "TRUE"}
    hf_hub_download(hub_id, "config.json", local_files_only=offline)
