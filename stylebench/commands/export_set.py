"""``export-set``: a dialogue set's user turns in the layout ``import-replies`` reads back.

For each selected sample ``DIR/<sample_id>/user{1,2,3}.wav`` (the set's own files, byte for
byte) and ``user{N}.txt`` (what the user says in that turn, instruction included), plus
``DIR/set.json`` (the set, the selection and every sample's files, for scripts) and
``DIR/README.txt`` (the same for people: where the replies go). A lab plays or feeds the user
turns to its model in order, one conversation per sample, and saves each reply as
``DIR/<sample_id>/turnN.wav`` (or .flac, .mp3) with an optional ``turnN.txt``.

Exporting again into the same folder rewrites nothing: a file that is already there must hold
the same bytes, or the export is refused before anything is written.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from stylebench.commands.reply_folder import AUDIO_SUFFIXES, META_NAME
from stylebench.config import RunConfig
from stylebench.dialogues.persistence import PersistenceArm
from stylebench.errors import BadValue, FileClash
from stylebench.records import Sample

LAYOUT_VERSION = 1
RUN_FIELDS = RunConfig.__dataclass_fields__  # the selection flags' defaults are the config's

README = """\
User turns of a stylebench dialogue set, for running a model outside stylebench.

Set: {set_path}
Set checksum: {checksum}
Selection: dims {dims}; languages {langs}; {limit}
Samples: {n} ({n_turns} user turns)

Each folder <sample_id>/ is one conversation of three turns:

  user1.wav  user1.txt   turn 1: a question (audio, and what it says)
  user2.wav  user2.txt   turn 2: asks for the answer again, spoken with a change of style
  user3.wav  user3.txt   turn 3: asks for a further change in the same direction

Play or feed the turns to the model in order, within one conversation, so that the model hears
its own earlier replies as it normally would. Start a new conversation for each folder. Save
the model's reply to turn N as <sample_id>/turnN.wav (or .flac or .mp3; one file per turn) and,
if the model also returns text, its text as <sample_id>/turnN.txt (UTF-8).

Describe how the replies were made in meta.json at the top of this folder (a JSON object), e.g.

  {{"model": "my-model", "revision": "2025-01-01", "decode": {{"temperature": 0.0}},
    "history_kind": "own audio + text", "made_with": "our inference script, 24 kHz wav"}}

Then score them:

  stylebench import-replies {set_arg} THIS_FOLDER --name my-model{select}

set.json lists the same for scripts: each sample's dimension, direction, language and files.
See docs/import.md of stylebench for the whole procedure.
"""


PLAIN_TURNS = """\
Each folder <sample_id>/ is one conversation of three turns:

  user1.wav  user1.txt   turn 1: a question (audio, and what it says)
  user2.wav  user2.txt   turn 2: asks for the answer again, spoken with a change of style
  user3.wav  user3.txt   turn 3: asks for a further change in the same direction
"""
PERSISTENCE_TURNS = """\
A persistence set (docs/persistence.md): each sample is two conversations, answered apart.
<sample_id>/ is the instructed one: user1 asks for a speaking style once, then a question;
user2..userN are ordinary questions. <sample_id>-control/ asks the same questions with no
style request. Each turn is userN.wav (audio) and userN.txt (what it says).
"""


@dataclass(frozen=True)
class ExportResult:
    root: Path
    n_samples: int
    written: int  # files written now (0 when the folder already held the export)


def check_sample_id(sid: str) -> None:
    """A sample id becomes a folder name: one plain path component."""
    if not sid or Path(sid).name != sid or sid in (".", "..") or "\\" in sid or "\0" in sid:
        raise BadValue(f"sample id {sid!r} of the dialogue set cannot be a folder name")


def _set_json(
    cfg: RunConfig, samples: Sequence[Sample], set_root: Path, checksum: str
) -> dict[str, Any]:
    def files(s: Sample, k: int) -> dict[str, Any]:
        t = s.turns[k - 1]
        return {
            "turn": k,
            "user_audio": f"{s.id}/user{k}.wav",
            "user_text": f"{s.id}/user{k}.txt",
            "sr": t.sr,
            "text": t.text,
            "reply": f"{s.id}/turn{k}" + "{" + ",".join(AUDIO_SUFFIXES) + "}",
            "reply_text": f"{s.id}/turn{k}.txt",
        }

    return {
        "layout": "stylebench user turns / reply folder",
        "layout_version": LAYOUT_VERSION,
        "set": {
            "path": str(set_root),
            "checksum": checksum,
            "set_version": samples[0].set_version,
            "argument": cfg.dialogues,
        },
        "selection": {"dims": list(cfg.dims), "langs": list(cfg.langs), "limit": cfg.limit},
        "languages": sorted({s.lang for s in samples}),
        "dims": sorted({s.dim for s in samples}),
        "directions": sorted({s.direction for s in samples}),
        "meta_file": META_NAME,
        **({"protocol": "persistence"} if samples[0].PROTOCOL == "persistence" else {}),
        "samples": [
            {
                "id": s.id,
                "dim": s.dim,
                "direction": s.direction,
                "lang": s.lang,
                **({"emotion": s.emotion} if s.emotion else {}),
                **({"arm": s.arm, "sample": s.base_id} if isinstance(s, PersistenceArm) else {}),
                "turns": [files(s, k) for k in s.turn_numbers],
            }
            for s in samples
        ],
    }


def _readme(cfg: RunConfig, samples: Sequence[Sample], set_root: Path, checksum: str) -> str:
    select = "".join(
        f" {flag} {value}"
        for flag, value, default in (
            ("--dim", cfg.dim, RUN_FIELDS["dim"].default),
            ("--lang", cfg.lang, RUN_FIELDS["lang"].default),
            ("--limit", cfg.limit, RUN_FIELDS["limit"].default),
        )
        if value != default
    )
    readme = README
    if samples[0].PROTOCOL == "persistence":
        readme = README.replace(PLAIN_TURNS, PERSISTENCE_TURNS)
    return readme.format(
        set_path=set_root,
        checksum=checksum,
        dims=", ".join(cfg.dims),
        langs=", ".join(cfg.langs),
        limit=f"at most {cfg.limit} per cell" if cfg.limit else "every sample",
        n=len(samples),
        n_turns=sum(len(s.turns) for s in samples),
        set_arg=cfg.dialogues,
        select=select,
    )


def export_set(cfg: RunConfig, out: Path | str) -> ExportResult:
    """Write the user turns of ``cfg``'s dialogue set and selection under ``out``.

    Raises:
        BadValue: a sample id that cannot be a folder name. FileClash: ``out`` is a file, or a
            file there holds other bytes than the export would write (nothing is written then).
    """
    from stylebench.commands.runs import load_dialogues, persistence_root, select_samples

    if (proot := persistence_root(cfg)) is not None:  # both dialogues of every sample
        from stylebench.commands.persistence import select

        sel = select(cfg, proot)
        samples: list[Sample] = list(sel.arms)
        set_root, checksum = proot, sel.checksum
    else:
        samples_all, set_root, checksum = load_dialogues(cfg)
        samples = select_samples(samples_all, cfg)
    root = Path(out)
    files: dict[Path, bytes] = {}
    for s in samples:
        check_sample_id(s.id)
        for k in s.turn_numbers:
            t = s.turns[k - 1]
            files[root / s.id / f"user{k}.wav"] = (set_root / t.audio).read_bytes()
            files[root / s.id / f"user{k}.txt"] = (t.text + "\n").encode("utf-8")
    card = json.dumps(_set_json(cfg, samples, set_root, checksum), indent=2, ensure_ascii=False)
    files[root / "set.json"] = (card + "\n").encode("utf-8")
    files[root / "README.txt"] = _readme(cfg, samples, set_root, checksum).encode("utf-8")
    if root.exists() and not root.is_dir():
        raise FileClash(f"{root} is a file; export-set writes a folder")
    for path, data in files.items():
        if path.exists() and (not path.is_file() or path.read_bytes() != data):
            raise FileClash(
                f"{path} is already there and differs from what export-set writes (another set "
                "or selection?); export into an empty folder"
            )
    written = 0
    for path, data in files.items():
        if path.exists():
            continue
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_name(path.name + ".part")
        tmp.write_bytes(data)
        tmp.replace(path)
        written += 1
    return ExportResult(root, len(samples), written)
