"""Build three-turn dialogue sets from the text pools in ``pools/``.

A set folder holds ``manifest.jsonl`` (one :class:`~stylebench.records.Sample` per line),
``audio/`` with the synthesised user turns, and ``set_card.json`` / ``SET_CARD.md`` with counts
per cell, voices, the builder version and the checksum that run manifests record.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
from collections import Counter
from collections.abc import Callable
from dataclasses import asdict, dataclass
from importlib import resources
from pathlib import Path
from typing import Any

import numpy as np

from stylebench.atomic import write_text
from stylebench.dialogues.card import card_markdown
from stylebench.errors import BadValue, FileClash, UserError
from stylebench.executors.config import ExecutorConfig
from stylebench.metrics.dims.base import dimension
from stylebench.pipeline.progress import Progress
from stylebench.records import (
    ACOUSTIC_DIMS,
    DIMS,
    DIRECTIONS,
    EMOTIONS,
    LANGS,
    Sample,
    UserTurn,
)
from stylebench.synth.base import Synthesizer, Voice

#: 2: English spoken by Piper by default, every user turn checked by the offline ASR
#: (:mod:`stylebench.dialogues.intelligibility`), the card names each language's synthesiser;
#: 3: Piper's noise drawn from a seed of what each turn says (:mod:`stylebench.synth.onnx_noise`),
#: the check's retries as the seeded draws 1 and 2, so a set's bytes are its plan's (a set cached
#: by builder 2 keeps its name and is not taken for one of these)
BUILDER_VERSION = "3"


@dataclass(frozen=True)
class PoolItem:
    id: str
    request: str
    content: str


@dataclass(frozen=True)
class EmotionItem:
    id: str
    emotion: str
    request: str
    content: str


@dataclass(frozen=True)
class BuildSpec:
    """What to build. ``per_cell`` samples for every (dim, direction, lang), and for emotion
    for every (direction, lang, emotion) with ``emotion`` in ``emotions``."""

    dims: tuple[str, ...] = ACOUSTIC_DIMS
    langs: tuple[str, ...] = LANGS
    per_cell: int = 6
    voices_per_lang: int = 4
    seed: int = 0
    synth: str = "offline"
    emotions: tuple[str, ...] = EMOTIONS


def pool_file(name: str) -> Any:
    return resources.files("stylebench.dialogues").joinpath("pools", name)


def load_contents(lang: str) -> list[PoolItem]:
    """The neutral (request, content) pool of ``lang``."""
    items = []
    for line in pool_file(f"neutral_{lang}.jsonl").read_text(encoding="utf-8").splitlines():
        if line.strip():
            items.append(PoolItem(**json.loads(line)))
    if not items:
        raise ValueError(f"content pool for {lang!r} is empty")
    return items


def load_emotion_pool(lang: str) -> list[EmotionItem]:
    """The emotion (request, content) pool of ``lang``, every item checked for label leakage.

    Raises:
        ValueError: an item whose request or content names an emotion (see
            :mod:`stylebench.dialogues.leakage`), an unknown emotion, or an empty pool.
    """
    from stylebench.dialogues.leakage import check_content

    items = []
    for line in pool_file(f"emotion_{lang}.jsonl").read_text(encoding="utf-8").splitlines():
        if not line.strip():
            continue
        item = EmotionItem(**json.loads(line))
        if item.emotion not in EMOTIONS:
            raise ValueError(f"emotion item {item.id}: unknown emotion {item.emotion!r}")
        check_content(item.id, item.content, lang)
        check_content(item.id, item.request, lang)  # turn 1 must be a neutral request too
        items.append(item)
    if not items:
        raise ValueError(f"emotion pool for {lang!r} is empty")
    return items


def load_phrasings(lang: str) -> dict[str, dict[str, dict[str, list[str]]]]:
    """Instruction phrasings: ``[dim][direction]["2"|"3"] -> list[str]``."""
    return json.loads(pool_file(f"phrasings_{lang}.json").read_text(encoding="utf-8"))


def _canonical(obj: Any) -> bytes:
    return (json.dumps(obj, indent=2, ensure_ascii=False) + "\n").encode("utf-8")


def pools_checksum(dims: tuple[str, ...] = ACOUSTIC_DIMS) -> str:
    """sha256 over the text pools a set of ``dims`` draws on.

    Acoustic dims hash each language's neutral pool and its acoustic phrasings (as canonical
    JSON, which is byte-identical to the shipped files before the emotion key was added, so
    acoustic sets keep their checksum); emotion adds the emotion pools and emotion phrasings.
    Editing emotion texts therefore never changes an acoustic set's version, and vice versa; a
    dim outside ``--dim all`` (its own default set) hashes its content pool and phrasings.
    """
    h = hashlib.sha256()
    for lang in LANGS:
        if any(d in ACOUSTIC_DIMS for d in dims):
            h.update(pool_file(f"neutral_{lang}.jsonl").read_bytes())
            phr = load_phrasings(lang)
            h.update(_canonical({k: v for k, v in phr.items() if k in ACOUSTIC_DIMS}))
    for d in (d for d in DIMS if d in dims and d not in ACOUSTIC_DIMS):
        for lang in LANGS:  # a dim with its own set: its content pool and its phrasings
            h.update(pool_file(f"{dimension(d).content_pool}_{lang}.jsonl").read_bytes())
            h.update(_canonical({d: load_phrasings(lang)[d]}))
    return h.hexdigest()


#: how a cell reuses its pool when it asks for more samples than the pool has items (the set
#: card states it): :func:`reuse_voice`, checked by :func:`check_capacity`
REUSE_RULE = (
    "a cell draws its pool items in a random order and goes round it again when it needs more; "
    "every item is used floor(n / items) or ceil(n / items) times in a cell, the u-th time by "
    "the voice u places after the first one's, so no item is spoken twice in one cell by the "
    "same voice (a cell asks for at most items x voices samples)"
)


def reuse_voice(i: int, n_items: int, n_voices: int) -> int:
    """The voice (index) of a cell's ``i``-th sample: the pool is walked round in one order, and
    each round moves every item's voice on by one, so an item's uses in a cell (``i // n_items``
    = 0, 1, ...) are spoken by different voices while there are voices left. Below one round
    this is ``i % n_voices``, the voice every set was planned with before reuse was ruled."""
    return (i % n_items + i // n_items) % n_voices


def check_capacity(cells: list[tuple[str, int]], per_cell: int, n_voices: int) -> None:
    """Refuse ``per_cell`` when a cell would speak one of its items twice in the same voice.

    Args:
        cells: (what the cell is, e.g. ``"emotion/happy attenuate en"``, its pool's item count).

    Raises:
        BadValue: naming the cells short of content and the largest ``--per-cell`` they allow.
    """
    short = [(what, n) for what, n in cells if per_cell > n * n_voices]
    if not short:
        return
    most = min(n for _, n in short) * n_voices
    shown = "; ".join(
        f"{what}: {n} items x {n_voices} voices = {n * n_voices}" for what, n in short[:4]
    )
    more = f" and {len(short) - 4} more" if len(short) > 4 else ""
    raise BadValue(
        f"--per-cell {per_cell} needs more content than the pools hold without speaking an item "
        f"twice in one cell in the same voice ({shown}{more}); the largest --per-cell these cells "
        f"allow is {most}: lower --per-cell, raise --voices-per-lang with a synthesiser that has "
        "more voices, or add items to the pool"
    )


def plan_samples(spec: BuildSpec, voices: dict[str, list[Voice]]) -> list[dict[str, Any]]:
    """Decide every sample's texts and voice (deterministic for ``spec.seed``), no audio yet.

    A cell that needs more samples than its pool has items reuses them by :data:`REUSE_RULE`.

    Raises:
        BadValue: ``spec.per_cell`` above what a cell's pool and voices allow
            (:func:`check_capacity`).
    """
    _check_content(spec, voices)
    rng = np.random.default_rng(spec.seed)
    plans: list[dict[str, Any]] = []
    for lang in spec.langs:
        contents = load_contents(lang)
        phr = load_phrasings(lang)
        lang_voices = voices[lang][: spec.voices_per_lang]
        if not lang_voices:
            raise ValueError(f"no voices for {lang!r}")
        for dim in spec.dims:
            if dim not in phr:
                raise ValueError(f"phrasings_{lang}.json has no phrasings for dim {dim!r}")
            if dimension(dim).groups:
                plans += _plan_groups(spec, dim, lang, lang_voices, phr[dim], rng)
                continue
            for direction in DIRECTIONS:
                # the same content pool serves every acoustic cell; a fresh order per cell
                order = rng.permutation(len(contents))
                for i in range(spec.per_cell):
                    item = contents[order[i % len(order)]]
                    t2 = phr[dim][direction]["2"]
                    t3 = phr[dim][direction]["3"]
                    plans.append(
                        {
                            "id": f"{dim}-{direction}-{lang}-{i:04d}",
                            "dim": dim,
                            "direction": direction,
                            "lang": lang,
                            "voice": lang_voices[reuse_voice(i, len(order), len(lang_voices))].id,
                            "content": item.content,
                            "pool_id": item.id,
                            "texts": [
                                item.request,
                                t2[rng.integers(len(t2))],
                                t3[rng.integers(len(t3))],
                            ],
                        }
                    )
    return plans


def _check_content(spec: BuildSpec, voices: dict[str, list[Voice]]) -> None:
    """Every cell of ``spec`` has items and voices enough for ``per_cell`` (:func:`check_capacity`)."""
    for lang in spec.langs:
        n_voices = len(voices.get(lang, [])[: spec.voices_per_lang])
        if not n_voices:
            raise ValueError(f"no voices for {lang!r}")
        cells: list[tuple[str, int]] = []
        for dim in spec.dims:
            if dimension(dim).groups:
                pool = load_emotion_pool(lang)
                for emotion in spec.emotions:
                    n = sum(it.emotion == emotion for it in pool)
                    cells += [(f"{dim}/{emotion} {r} {lang}", n) for r in DIRECTIONS if n]
            else:
                n = len(load_contents(lang))
                cells += [(f"{dim} {r} {lang}", n) for r in DIRECTIONS]
        check_capacity(cells, spec.per_cell, n_voices)


def _plan_groups(
    spec: BuildSpec,
    dim: str,
    lang: str,
    lang_voices: list[Voice],
    phr: dict[str, Any],
    rng: np.random.Generator,
) -> list[dict[str, Any]]:
    """Samples of a grouped dimension (emotion) in one language: per (group, direction),
    ``per_cell`` items of the group from the dimension's pool, in a fresh random order;
    ``{emotion}`` in a phrasing becomes the group's name in ``lang``."""
    groups = dimension(dim).groups
    unknown = sorted(set(spec.emotions) - set(groups))
    if unknown:
        raise ValueError(f"unknown emotions {unknown}; choose from {', '.join(groups)}")
    pool = load_emotion_pool(lang)
    plans = []
    for emotion in spec.emotions:
        items = [it for it in pool if it.emotion == emotion]
        if not items:
            raise ValueError(f"emotion_{lang}.jsonl has no items for {emotion!r}")
        name = phr["names"][emotion]
        for direction in DIRECTIONS:
            order = rng.permutation(len(items))
            t2, t3 = phr[direction]["2"], phr[direction]["3"]
            for i in range(spec.per_cell):
                item = items[order[i % len(order)]]
                plans.append(
                    {
                        "id": f"{dim}-{direction}-{lang}-{emotion}-{i:04d}",
                        "dim": dim,
                        "direction": direction,
                        "lang": lang,
                        "emotion": emotion,
                        "voice": lang_voices[reuse_voice(i, len(order), len(lang_voices))].id,
                        "content": item.content,
                        "pool_id": item.id,
                        "texts": [
                            item.request,
                            t2[rng.integers(len(t2))].format(emotion=name),
                            t3[rng.integers(len(t3))].format(emotion=name),
                        ],
                    }
                )
    return plans


#: the build folder of ``--out DIR``: ``DIR``'s parent holds ``.DIR.partial`` until the set is done
PARTIAL_SUFFIX = ".partial"


def partial_folder(out_dir: Path) -> Path:
    """Where the set that will be ``out_dir`` is built: a hidden folder beside it, named by it,
    so that the same ``--out`` finds it again after a kill."""
    return out_dir.parent / f".{out_dir.name}{PARTIAL_SUFFIX}"


class BuildIncomplete(UserError, RuntimeError):
    """Turns the synthesiser or the check failed on: the set is not written, the turns done are
    kept, and the same command retries the failed ones."""


def build_set(
    out_dir: Path,
    spec: BuildSpec,
    synth: Synthesizer,
    voices: dict[str, list[Voice]],
    *,
    jobs: int = 4,
    checker: Any = None,
    executor: ExecutorConfig | None = None,
    synth_factory: Callable[[], Synthesizer] | None = None,
    progress: bool | Progress | None = None,
) -> dict[str, Any]:
    """Synthesise the planned samples and write the set into ``out_dir``; resumable.

    Turns are made in the build folder beside ``out_dir`` (:func:`partial_folder`), each wav
    written atomically before its record (:mod:`stylebench.dialogues.turns`), through the run's
    stage loop and executors: a build killed at any point and called again with the same
    arguments keeps every turn already synthesised and checked and makes the rest; the finished
    set is the one an uninterrupted build writes. Only when every turn is done are the set's
    files written and the folder renamed to ``out_dir`` (nothing appears there before).

    With ``checker`` (:class:`stylebench.dialogues.intelligibility.Checker`) every user turn is
    transcribed and scored; a turn over the checker's bound is synthesised again
    (:data:`~stylebench.dialogues.intelligibility.RETRIES` times at most, keeping the best
    reading); a sample with a turn still over it is spoken again by the next voice of its
    language (all its turns, so a dialogue keeps one speaker; :mod:`.speaking`), and the set is
    refused when no voice is read.

    Args:
        jobs: turns synthesised at once on threads (the serial executor).
        executor: where turns are computed (the run's executor settings: ``--executor ray``
            spreads them over a Ray cluster's actors, each building its own synthesiser and
            checker; this process stays the only writer). Default: this process.
        synth_factory: a picklable callable that builds ``synth`` (needed by Ray's actors).
        progress: turns done / total and the time left (:mod:`stylebench.pipeline.progress`).

    Returns:
        The set card (also written as ``set_card.json`` and ``SET_CARD.md``).

    Raises:
        FileClash: ``out_dir`` exists.
        Unintelligible: a user turn the ASR cannot read, with each such turn and its reason.
        BuildIncomplete: turns that failed; the command is to be run again.
    """
    from stylebench.dialogues.intelligibility import RETRIES, Unintelligible
    from stylebench.dialogues.speaking import speak
    from stylebench.dialogues.turns import TurnResident
    from stylebench.executors.base import make_executor
    from stylebench.store import RunStore

    out_dir = Path(out_dir)
    if out_dir.exists():
        raise _clash(out_dir)
    cfg = executor or ExecutorConfig()
    if cfg.executor == "ray" and synth_factory is None:
        raise ValueError("--executor ray builds the synthesiser on each worker: pass synth_factory")
    plans = plan_samples(spec, voices)
    lang_voices = {lg: vs[: spec.voices_per_lang] for lg, vs in voices.items()}
    set_version = f"b{BUILDER_VERSION}-p{pools_checksum(spec.dims)[:8]}-s{spec.seed}"
    synthesizers = _synth_versions(synth, spec.langs)
    identity = {
        "set_version": set_version,
        "synthesizer": synth.name,
        "synthesizers": synthesizers,
        "check": None if checker is None else {**checker.describe(), "retries": RETRIES},
    }
    resident = TurnResident(
        synth_factory or (lambda: synth), None if checker is None else checker.portable()
    )
    store = RunStore(partial_folder(out_dir))
    with store.lock("stylebench build-dialogues"), make_executor(cfg) as ex:
        if out_dir.exists():  # another process finished it while this one waited
            raise _clash(out_dir)
        write_text(
            store.root / "build.json",
            json.dumps({"out": str(out_dir), "spec": asdict(spec), **identity}, indent=2),
        )
        spoken = speak(
            store,
            plans,
            lang_voices,
            identity,
            local=(synth, checker),
            resident=resident,
            executor=ex,
            jobs=jobs,
            progress=progress,
        )
        kept_in = (
            f"the {spoken.reused + spoken.computed - len(spoken.failed)} turns made so far are "
            f"kept in {store.root} (the same command reuses them; delete it to drop them)"
        )
        if spoken.failed:
            first = "; ".join(f"{r.sample_id} turn {r.turn}: {r.error}" for r in spoken.failed[:3])
            raise BuildIncomplete(
                f"dialogue set not finished: {len(spoken.failed)} user turn(s) failed ({first}); "
                f"{kept_in}: run the same command again to retry the failed ones"
            )
        if spoken.refused:
            raise Unintelligible([r.check() for r in spoken.refused], checker.bounds, kept=kept_in)
        samples, checks = [], []
        for p in plans:
            recs = spoken.kept[p["id"]]
            moved = p["voice"] if recs[0].voice != p["voice"] else None
            samples.append(_sample(p, set_version, recs))
            checks += [r.check(moved) for r in recs] if checker is not None else []
        lines = [json.dumps(asdict(s), ensure_ascii=False, sort_keys=True) for s in samples]
        manifest = "\n".join(lines) + "\n"
        card = _set_card(samples, spec, synth.name, set_version, manifest)
        voice_by_id = {v.id: v for vs in voices.values() for v in vs}
        card["voice_notes"] = {v: voice_by_id[v].description for v in card["voices"]}
        card["synthesizers"] = synthesizers
        if checker is not None:
            from stylebench.dialogues.intelligibility import per_voice

            card["intelligibility"] = {
                **checker.describe(),
                "per_voice": per_voice(checks, checker.bounds),
            }
        _finish(store.root, out_dir, samples, spoken.kept, manifest, card, checks)
        shutil.rmtree(store.root, ignore_errors=True)
    return card


def _sample(plan: dict[str, Any], set_version: str, recs: list[Any]) -> Sample:
    """The sample of ``plan`` as its kept turn records say: the voice that speaks it, and each
    turn's wav under the set's own name."""
    turns = tuple(
        UserTurn(text=r.text, audio=f"audio/{plan['id']}_u{r.turn}.wav", sr=r.sr, sha256=r.sha256)
        for r in recs
    )
    return Sample(
        id=plan["id"],
        set_version=set_version,
        dim=plan["dim"],
        direction=plan["direction"],
        lang=plan["lang"],
        voice=recs[0].voice,
        content=plan["content"],
        turns=turns,
        emotion=plan.get("emotion", ""),
    )


def _finish(
    work: Path,
    out_dir: Path,
    samples: list[Sample],
    kept: dict[str, list[Any]],
    manifest: str,
    card: dict[str, Any],
    checks: list[Any],
) -> None:
    """Lay the finished set out in ``work/set`` (each kept wav linked under its set name, its
    sha256 checked once more) with its manifest and cards, then rename it to ``out_dir``.
    A kill here leaves the build folder whole: the next call lays the set out again."""
    from stylebench.audio import sha256_file
    from stylebench.dialogues.intelligibility import as_record

    staged = work / "set"
    shutil.rmtree(staged, ignore_errors=True)
    (staged / "audio").mkdir(parents=True)
    for s in samples:
        for t, r in zip(s.turns, kept[s.id], strict=True):
            src = work / r.audio
            if sha256_file(src) != r.sha256:
                raise BadValue(
                    f"{src} changed since it was synthesised; delete {work} and build again"
                )
            try:
                os.link(src, staged / t.audio)
            except OSError:  # a file system without hard links
                shutil.copyfile(src, staged / t.audio)
    write_text(staged / "manifest.jsonl", manifest)
    if checks:
        write_text(
            staged / "intelligibility.jsonl",
            "".join(json.dumps(as_record(c), ensure_ascii=False) + "\n" for c in checks),
        )
    write_text(staged / "set_card.json", json.dumps(card, indent=2, ensure_ascii=False))
    write_text(staged / "SET_CARD.md", card_markdown(card))
    try:
        os.rename(staged, out_dir)
    except OSError:
        if out_dir.exists():
            raise _clash(out_dir) from None
        raise


def _clash(out_dir: Path) -> FileClash:
    return FileClash(f"{out_dir} exists; choose a new --out (sets are never overwritten)")


def _synth_versions(synth: Any, langs: tuple[str, ...]) -> dict[str, str]:
    """What spoke each language (engine, voice model, versions), as far as the synth says."""
    if hasattr(synth, "versions"):
        return dict(synth.versions(langs))
    if hasattr(synth, "version"):
        return {lang: str(synth.version()) for lang in langs}
    return {lang: synth.name for lang in langs}


def _set_card(
    samples: list[Sample], spec: BuildSpec, synth_name: str, set_version: str, manifest: str
) -> dict[str, Any]:
    cells = Counter((s.dim, s.direction, s.lang, s.emotion) for s in samples)
    reuse = _reuse(samples)
    return {
        "set_version": set_version,
        "builder_version": BUILDER_VERSION,
        "checksum": hashlib.sha256(manifest.encode("utf-8")).hexdigest(),
        "n_samples": len(samples),
        "synthesizer": synth_name,
        "spec": asdict(spec),
        "voices": sorted({s.voice for s in samples}),
        "cells": [
            {
                "dim": d,
                "direction": r,
                "lang": lg,
                **({"emotion": e} if e else {}),
                "n": n,
                **reuse[(d, r, lg, e)],
            }
            for (d, r, lg, e), n in sorted(cells.items())
        ],
        "reuse_rule": REUSE_RULE,
        "pools_checksum": pools_checksum(spec.dims),
    }


def _reuse(samples: list[Sample]) -> dict[tuple[str, str, str, str], dict[str, int]]:
    """Per cell: its distinct dialogues (pool items: the content), the most and fewest times
    one is used, and how many uses repeat an item in a voice that already spoke it in the cell
    (0 under :data:`REUSE_RULE`)."""
    uses: dict[tuple[str, str, str, str], Counter[str]] = {}
    voiced: dict[tuple[str, str, str, str], Counter[tuple[str, str]]] = {}
    for s in samples:
        cell = (s.dim, s.direction, s.lang, s.emotion)
        uses.setdefault(cell, Counter())[s.content] += 1
        voiced.setdefault(cell, Counter())[(s.content, s.voice)] += 1
    return {
        cell: {
            "items": len(c),
            "uses_min": min(c.values()),
            "uses_max": max(c.values()),
            "same_voice_repeats": sum(n - 1 for n in voiced[cell].values()),
        }
        for cell, c in uses.items()
    }
