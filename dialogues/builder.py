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
from stylebench.records import ACOUSTIC_DIMS, DIRECTIONS, LANGS, Sample, UserTurn
from stylebench.synth.base import Synthesizer, Voice

BUILDER_VERSION = "1"


@dataclass(frozen=True)
class PoolItem:
    id: str
    request: str
    content: str


@dataclass(frozen=True)
class BuildSpec:
    """What to build. ``per_cell`` samples for every (dim, direction, lang)."""

    dims: tuple[str, ...] = ACOUSTIC_DIMS
    langs: tuple[str, ...] = LANGS
    per_cell: int = 6
    voices_per_lang: int = 4
    seed: int = 0
    synth: str = "espeak-ng"


def _pool_file(name: str) -> Any:
    return resources.files("stylebench.dialogues").joinpath("pools", name)


def load_contents(lang: str) -> list[PoolItem]:
    """The neutral (request, content) pool of ``lang``."""
    items = []
    for line in _pool_file(f"neutral_{lang}.jsonl").read_text(encoding="utf-8").splitlines():
        if line.strip():
            items.append(PoolItem(**json.loads(line)))
    if not items:
        raise ValueError(f"content pool for {lang!r} is empty")
    return items


def load_phrasings(lang: str) -> dict[str, dict[str, dict[str, list[str]]]]:
    """Instruction phrasings: ``[dim][direction]["2"|"3"] -> list[str]``."""
    return json.loads(_pool_file(f"phrasings_{lang}.json").read_text(encoding="utf-8"))


def pools_checksum() -> str:
    h = hashlib.sha256()
    for lang in LANGS:
        for name in (f"neutral_{lang}.jsonl", f"phrasings_{lang}.json"):
            h.update(_pool_file(name).read_bytes())
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


def build_set(
    out_dir: Path,
    spec: BuildSpec,
    synth: Synthesizer,
    voices: dict[str, list[Voice]],
    *,
    jobs: int = 4,
) -> dict[str, Any]:
    """Synthesise the planned samples into ``out_dir`` (built in a temp folder, then renamed).

    Returns:
        The set card (also written as ``set_card.json`` and ``SET_CARD.md``).
    """
    out_dir = Path(out_dir)
    if out_dir.exists():
        raise FileExistsError(f"{out_dir} exists; choose a new --out (sets are never overwritten)")
    plans = plan_samples(spec, voices)
    voice_by_id = {v.id: v for vs in voices.values() for v in vs}
    set_version = f"b{BUILDER_VERSION}-p{pools_checksum()[:8]}-s{spec.seed}"
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
            )

        with ThreadPoolExecutor(max_workers=max(1, jobs)) as pool:
            samples = list(pool.map(render, plans))
        lines = [json.dumps(asdict(s), ensure_ascii=False, sort_keys=True) for s in samples]
        manifest = "\n".join(lines) + "\n"
        (tmp / "manifest.jsonl").write_text(manifest, encoding="utf-8")
        card = _set_card(samples, spec, synth.name, set_version, manifest)
        (tmp / "set_card.json").write_text(
            json.dumps(card, indent=2, ensure_ascii=False), encoding="utf-8"
        )
        (tmp / "SET_CARD.md").write_text(_card_markdown(card), encoding="utf-8")
        os.replace(tmp, out_dir)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    return card


def _set_card(
    samples: list[Sample], spec: BuildSpec, synth_name: str, set_version: str, manifest: str
) -> dict[str, Any]:
    cells = Counter((s.dim, s.direction, s.lang) for s in samples)
    return {
        "set_version": set_version,
        "builder_version": BUILDER_VERSION,
        "checksum": hashlib.sha256(manifest.encode("utf-8")).hexdigest(),
        "n_samples": len(samples),
        "synthesizer": synth_name,
        "spec": asdict(spec),
        "voices": sorted({s.voice for s in samples}),
        "cells": [
            {"dim": d, "direction": r, "lang": lg, "n": n}
            for (d, r, lg), n in sorted(cells.items())
        ],
        "pools_checksum": pools_checksum(),
    }


def _card_markdown(card: dict[str, Any]) -> str:
    rows = "\n".join(
        f"| {c['dim']} | {c['direction']} | {c['lang']} | {c['n']} |" for c in card["cells"]
    )
    return (
        f"# Dialogue set {card['set_version']}\n\n"
        f"{card['n_samples']} three-turn samples, synthesised with {card['synthesizer']}, "
        f"builder v{card['builder_version']}.\n\nVoices: {', '.join(card['voices'])}\n\n"
        f"Checksum (sha256 of manifest.jsonl): `{card['checksum']}`\n\n"
        f"| dim | direction | lang | n |\n|---|---|---|---|\n{rows}\n"
    )
