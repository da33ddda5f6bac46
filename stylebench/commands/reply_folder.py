"""The folder of replies made outside stylebench, as ``import-replies`` reads it (docs/import.md).

Layout::

    DIR/meta.json                 optional: who made the replies and how (a JSON object)
    DIR/<sample_id>/turn1.wav     the reply to user turn 1 (.wav, .flac or .mp3)
    DIR/<sample_id>/turn1.txt     optional: the reply's text channel (UTF-8)
    DIR/<sample_id>/turn2.*, turn3.*

``export-set`` writes the user turns into the same layout (``user1.wav``, ``user1.txt``, ...,
``set.json``, ``README.txt``); those files are read by nobody here, so one folder can hold both.

This module only finds and hashes files: whether a reply is usable audio is decided when it is
imported (:mod:`stylebench.commands.importing`). What it cannot place (a folder that is no
sample of the set, a stray file) becomes a note, one line each; what is wrong with one turn's
files (missing, two candidates, outside the folder, unreadable) becomes that turn's
``problem``, which the import turns into an error record.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from stylebench.audio import sha256_file
from stylebench.errors import BadValue, MissingFile
from stylebench.records import TURNS, Key, Sample

AUDIO_SUFFIXES = (".wav", ".flac", ".mp3")
META_NAME = "meta.json"
#: what ``export-set`` writes beside the replies (never read by the import)
EXPORT_NAMES = ("set.json", "README.txt")
USER_FILES = tuple(f"user{k}{ext}" for k in TURNS for ext in (".wav", ".txt"))
#: meta.json keys with a meaning (any other key is kept as given): name -> JSON type, help
META_KEYS: dict[str, tuple[type, str]] = {
    "model": (str, "the model (or app) that made the replies"),
    "revision": (str, "its checkpoint, version or date"),
    "decode": (dict, "the decoding settings it used, as declared (not checked)"),
    "history_kind": (str, "what the model heard of its own earlier replies"),
    "made_with": (str, "how the replies were made and saved (script, app, recording chain)"),
}


@dataclass(frozen=True)
class TurnFiles:
    """One turn's files, or why they cannot be used (``problem``)."""

    sample_id: str
    turn: int
    audio: Path | None = None  # the reply file, inside the folder
    audio_rel: str = ""  # its path relative to the folder, with "/" separators
    text: Path | None = None  # its text channel, when given
    text_rel: str = ""
    problem: str = ""


@dataclass(frozen=True)
class ReplyFolder:
    """What a reply folder holds for a dialogue set's samples."""

    root: Path
    meta: Mapping[str, Any]
    turns: Mapping[Key, TurnFiles]  # every turn of every sample of the set
    files: Mapping[str, str]  # relative path -> sha256 of every reply and text file found
    notes: tuple[str, ...]  # one line per entry that was left out (not a problem of a turn)

    @property
    def digest(self) -> str:
        """The sha256 of the listing: any reply or text file changed, added or removed changes it."""
        blob = json.dumps(sorted(self.files.items()), ensure_ascii=False)
        return hashlib.sha256(blob.encode("utf-8")).hexdigest()


def read_meta(root: Path) -> dict[str, Any]:
    """``DIR/meta.json`` (``{}`` without one), its documented keys checked.

    Raises:
        BadValue: not a JSON object, or a documented key of the wrong type or value.
    """
    from stylebench.model_wrappers.common import HISTORY_KINDS

    path = root / META_NAME
    if not path.exists():
        return {}
    try:
        data = json.loads(path.read_bytes().decode("utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError, OSError) as exc:
        raise BadValue(f"{path}: not readable JSON ({exc})") from None
    if not isinstance(data, dict):
        raise BadValue(f"{path}: must be a JSON object, got a {type(data).__name__}")
    for key, (kind, _) in META_KEYS.items():
        if key in data and not isinstance(data[key], kind):
            raise BadValue(f"{path}: {key!r} must be a JSON {kind.__name__}, got {data[key]!r}")
    history_kind = data.get("history_kind")
    if history_kind is not None and history_kind not in HISTORY_KINDS:
        raise BadValue(
            f"{path}: 'history_kind' must be one of {list(HISTORY_KINDS)}, got {history_kind!r}"
        )
    return data


def _inside(path: Path, root: Path) -> bool:
    try:
        return path.resolve().is_relative_to(root.resolve())
    except (OSError, RuntimeError, ValueError):  # a symlink loop resolves to nothing
        return False


def _present(path: Path) -> bool:
    return path.exists() or path.is_symlink()  # a dangling link is there, and wrong


def _turn_files(root: Path, sid: str, k: int, found: dict[str, str]) -> TurnFiles:
    folder = root / sid
    stem = f"turn{k}"
    candidates = [folder / f"{stem}{ext}" for ext in AUDIO_SUFFIXES]
    there = [p for p in candidates if _present(p)]
    if not there:
        return TurnFiles(sid, k, problem=f"{sid}/{stem}: no reply file ({stem}.wav, .flac or .mp3)")
    if len(there) > 1:
        names = " and ".join(p.name for p in there)
        return TurnFiles(sid, k, problem=f"{sid}/{stem}: both {names}; keep one")
    audio = there[0]
    rel = f"{sid}/{audio.name}"
    text = folder / f"{stem}.txt"
    text_rel = f"{sid}/{text.name}"
    has_text = _present(text)
    for path, name in ((audio, rel), (text, text_rel)):
        if path is audio or has_text:
            if not _inside(path, root):
                return TurnFiles(
                    sid,
                    k,
                    problem=f"{name}: lies outside {root} (a symlink or '..'); copy the file in",
                )
            try:
                found[name] = sha256_file(path)
            except OSError as exc:
                return TurnFiles(sid, k, problem=f"{name}: cannot be read ({exc.strerror or exc})")
    return TurnFiles(
        sid, k, audio, rel, text if has_text else None, text_rel if has_text else "", ""
    )


def scan(root: Path | str, samples: Sequence[Sample]) -> ReplyFolder:
    """Find and hash the reply files of ``samples`` (a whole dialogue set) under ``root``.

    Raises:
        MissingFile: ``root`` is not a folder. BadValue: a bad ``meta.json``.
    """
    root = Path(root)
    if not root.is_dir():
        raise MissingFile(f"{root}: no such folder of replies")
    meta = read_meta(root)
    by_id = {s.id: s for s in samples}
    turns: dict[Key, TurnFiles] = {}
    found: dict[str, str] = {}
    for s in samples:
        folder = root / s.id
        why = ""
        if Path(s.id).name != s.id or s.id in (".", ".."):
            why = f"{s.id}: this sample id is not one folder name, so its replies would lie outside {root}"
        elif not _present(folder):
            why = f"{s.id}: no folder of replies for this sample"
        elif not _inside(folder, root):
            why = f"{s.id}: the sample's folder lies outside {root} (a symlink or '..')"
        elif not folder.is_dir():
            why = f"{s.id}: is a file, not a folder of replies"
        for k in s.turn_numbers:
            turns[(s.id, k)] = (
                TurnFiles(s.id, k, problem=why) if why else _turn_files(root, s.id, k, found)
            )
    most = max((len(s.turns) for s in samples), default=len(TURNS))
    every = range(1, max(most, len(TURNS)) + 1)  # a persistence set's dialogues have N turns
    known = {f"turn{k}{ext}" for k in every for ext in (*AUDIO_SUFFIXES, ".txt")}
    known |= set(USER_FILES) | {f"user{k}{ext}" for k in every for ext in (".wav", ".txt")}
    notes = []
    for entry in sorted(root.iterdir()):
        if entry.name in (META_NAME, *EXPORT_NAMES) or entry.name.startswith("."):
            continue
        if entry.name not in by_id:
            notes.append(f"{entry.name}: not a sample of the dialogue set; left out")
            continue
        if entry.is_dir() and _inside(entry, root):
            for f in sorted(entry.iterdir()):
                if f.name not in known and not f.name.startswith("."):
                    notes.append(f"{entry.name}/{f.name}: not a reply file of the layout; left out")
    return ReplyFolder(root, meta, turns, found, tuple(notes))
