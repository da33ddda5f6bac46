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
import tempfile
from collections import Counter
from concurrent.futures import ThreadPoolExecutor
from dataclasses import asdict, dataclass
from importlib import resources
from pathlib import Path
from typing import Any

import numpy as np

from stylebench.audio import write_wav
from stylebench.dialogues.card import card_markdown
from stylebench.errors import FileClash
from stylebench.metrics.dims.base import dimension
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
#: (:mod:`stylebench.dialogues.intelligibility`), the card names each language's synthesiser
BUILDER_VERSION = "2"


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


def plan_samples(spec: BuildSpec, voices: dict[str, list[Voice]]) -> list[dict[str, Any]]:
    """Decide every sample's texts and voice (deterministic for ``spec.seed``), no audio yet."""
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
                            "voice": lang_voices[i % len(lang_voices)].id,
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
                        "voice": lang_voices[i % len(lang_voices)].id,
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


def build_set(
    out_dir: Path,
    spec: BuildSpec,
    synth: Synthesizer,
    voices: dict[str, list[Voice]],
    *,
    jobs: int = 4,
    checker: Any = None,
    progress: Any = None,
) -> dict[str, Any]:
    """Synthesise the planned samples into ``out_dir`` (built in a temp folder, then renamed).

    With ``checker`` (:class:`stylebench.dialogues.intelligibility.Checker`) every user turn is
    transcribed and scored once all are synthesised; a turn over the checker's bound is
    synthesised again (:data:`~stylebench.dialogues.intelligibility.RETRIES` times at most);
    a sample with a turn still over it is spoken again by the next voice of its language (all
    its turns, so a dialogue keeps one speaker), and the set is refused when no voice is read:
    nothing is written to ``out_dir``.

    ``progress`` (optional) is told how far each stage has got: ``progress.bar(name, total,
    unit)`` opens a stage's bar (``"synthesis"``, then ``"check"``, counted in user turns),
    whose ``update(n)`` adds ``n`` turns done and ``close()`` ends it (``scripts/setup_models.py``
    draws it for ``make setup``).

    Returns:
        The set card (also written as ``set_card.json`` and ``SET_CARD.md``).

    Raises:
        Unintelligible: a user turn the ASR cannot read, with each such turn and its reason.
    """
    out_dir = Path(out_dir)
    if out_dir.exists():
        raise FileClash(f"{out_dir} exists; choose a new --out (sets are never overwritten)")
    plans = plan_samples(spec, voices)
    voice_by_id = {v.id: v for vs in voices.values() for v in vs}
    set_version = f"b{BUILDER_VERSION}-p{pools_checksum(spec.dims)[:8]}-s{spec.seed}"
    out_dir.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=".building-", dir=out_dir.parent))
    try:

        def render(plan: dict[str, Any]) -> Sample:
            turns = []
            for k, text in enumerate(plan["texts"], start=1):
                audio = synth.synthesize(text, voice_by_id[plan["voice"]])
                rel = f"audio/{plan['id']}_u{k}.wav"
                sha = write_wav(tmp / rel, audio.wave, audio.sr)
                turns.append(UserTurn(text=text, audio=rel, sr=audio.sr, sha256=sha))
            return Sample(
                id=plan["id"],
                set_version=set_version,
                dim=plan["dim"],
                direction=plan["direction"],
                lang=plan["lang"],
                voice=plan["voice"],
                content=plan["content"],
                turns=tuple(turns),
                emotion=plan.get("emotion", ""),
            )

        n_turns = sum(len(p["texts"]) for p in plans)
        bar = _open_bar(progress, "synthesis", n_turns)
        samples = []
        with ThreadPoolExecutor(max_workers=max(1, jobs)) as pool:
            for sample in pool.map(render, plans):
                samples.append(sample)
                bar.update(len(sample.turns))
        bar.close()
        checks: list[Any] = []
        if checker is not None:
            lang_voices = {lg: vs[: spec.voices_per_lang] for lg, vs in voices.items()}
            bar = _open_bar(progress, "check", n_turns)
            samples, checks = _check_turns(tmp, samples, synth, lang_voices, checker, bar)
            bar.close()
        lines = [json.dumps(asdict(s), ensure_ascii=False, sort_keys=True) for s in samples]
        manifest = "\n".join(lines) + "\n"
        (tmp / "manifest.jsonl").write_text(manifest, encoding="utf-8")
        card = _set_card(samples, spec, synth.name, set_version, manifest)
        card["voice_notes"] = {v: voice_by_id[v].description for v in card["voices"]}
        card["synthesizers"] = _synth_versions(synth, spec.langs)
        if checker is not None:
            from stylebench.dialogues.intelligibility import as_record, per_voice

            card["intelligibility"] = {
                **checker.describe(),
                "per_voice": per_voice(checks, checker.bounds),
            }
            (tmp / "intelligibility.jsonl").write_text(
                "".join(json.dumps(as_record(c), ensure_ascii=False) + "\n" for c in checks),
                encoding="utf-8",
            )
        (tmp / "set_card.json").write_text(
            json.dumps(card, indent=2, ensure_ascii=False), encoding="utf-8"
        )
        (tmp / "SET_CARD.md").write_text(card_markdown(card), encoding="utf-8")
        os.replace(tmp, out_dir)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    return card


class _NoBar:
    def update(self, n: int = 1) -> None:
        pass

    def close(self) -> None:
        pass


def _open_bar(progress: Any, name: str, total: int) -> Any:
    return _NoBar() if progress is None else progress.bar(name, total, "turn")


def _synth_versions(synth: Any, langs: tuple[str, ...]) -> dict[str, str]:
    """What spoke each language (engine, voice model, versions), as far as the synth says."""
    if hasattr(synth, "versions"):
        return dict(synth.versions(langs))
    if hasattr(synth, "version"):
        return {lang: str(synth.version()) for lang in langs}
    return {lang: synth.name for lang in langs}


def _check_turns(
    tmp: Path,
    samples: list[Sample],
    synth: Synthesizer,
    voices: dict[str, list[Voice]],
    checker: Any,
    bar: Any,
) -> tuple[list[Sample], list[Any]]:
    """Transcribe every user turn; a turn over the bound is synthesised again (keeping the best
    reading); a sample with a turn still over it is spoken again, all turns, by the next voice
    of its language that the ASR reads; the set is refused when no voice does."""
    from dataclasses import replace

    from stylebench.dialogues.intelligibility import Unintelligible

    checks, failed, out = [], [], []
    for s in samples:
        turns, got = _check_sample(tmp, s, s.voice, synth, voices, checker, rendered=True)
        bad = [c for c in got if c.over(checker.bounds)]
        voice = s.voice
        for alt in (v.id for v in voices[s.lang] if v.id != s.voice) if bad else ():
            turns2, got2 = _check_sample(tmp, s, alt, synth, voices, checker, rendered=False)
            if not any(c.over(checker.bounds) for c in got2):
                turns, voice, bad = turns2, alt, []
                got = [replace(c, revoiced_from=s.voice) for c in got2]
                break
        checks += got
        failed += bad
        out.append(replace(s, voice=voice, turns=tuple(turns)))
        bar.update(len(turns))
    if failed:
        raise Unintelligible(failed, checker.bounds)
    return out, checks


def _check_sample(
    tmp: Path,
    s: Sample,
    voice_id: str,
    synth: Synthesizer,
    voices: dict[str, list[Voice]],
    checker: Any,
    *,
    rendered: bool,
) -> tuple[list[UserTurn], list[Any]]:
    """Check (and where over the bound resynthesise) every turn of ``s`` in ``voice_id``;
    ``rendered=False`` synthesises each turn in that voice first. The wavs in ``tmp`` end as
    the best reading of each turn."""
    from dataclasses import replace

    from stylebench.audio import load_audio
    from stylebench.dialogues.intelligibility import RETRIES

    voice = next(v for v in voices[s.lang] if v.id == voice_id)
    turns, checks = [], []
    for k, t in enumerate(s.turns, start=1):
        where = {"text": t.text, "lang": s.lang, "sample_id": s.id, "turn": k, "voice": voice_id}
        if rendered:
            wave, sr = load_audio(tmp / t.audio)
        else:
            audio = synth.synthesize(t.text, voice)
            wave, sr = audio.wave, audio.sr
            t = replace(t, sr=sr, sha256=write_wav(tmp / t.audio, wave, sr))
        best = checker.check(wave, sr, **where)
        for attempt in range(2, RETRIES + 2):
            if not best.over(checker.bounds):
                break
            audio = synth.synthesize(t.text, voice)
            c = replace(checker.check(audio.wave, audio.sr, **where), attempts=attempt)
            if c.error_rate < best.error_rate:
                t = replace(t, sr=audio.sr, sha256=write_wav(tmp / t.audio, audio.wave, audio.sr))
            best = replace(min(best, c, key=lambda x: x.error_rate), attempts=attempt)
        turns.append(t)
        checks.append(best)
    return turns, checks


def _set_card(
    samples: list[Sample], spec: BuildSpec, synth_name: str, set_version: str, manifest: str
) -> dict[str, Any]:
    cells = Counter((s.dim, s.direction, s.lang, s.emotion) for s in samples)
    return {
        "set_version": set_version,
        "builder_version": BUILDER_VERSION,
        "checksum": hashlib.sha256(manifest.encode("utf-8")).hexdigest(),
        "n_samples": len(samples),
        "synthesizer": synth_name,
        "spec": asdict(spec),
        "voices": sorted({s.voice for s in samples}),
        "cells": [
            {"dim": d, "direction": r, "lang": lg, **({"emotion": e} if e else {}), "n": n}
            for (d, r, lg, e), n in sorted(cells.items())
        ],
        "pools_checksum": pools_checksum(spec.dims),
    }
