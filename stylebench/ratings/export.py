"""``stylebench export-ratings``: a blinded listening test built from a run's replies.

Output folder ``DIR``::

    rater_r01.html   one self-contained page per rater (items shuffled per rater)
    sheet_r01.csv    the same items as a sheet for raters who work offline
    audio/           the reply wavs, re-encoded (16-bit PCM, no metadata) under opaque names
    key.json         PRIVATE: item id -> run, model, sample, turn, direction; check answers

An *item* is one sample's three replies; the rater says, for turns 1-2 and 2-3, which turn
expresses the target attribute more strongly (forced choice), and rates each turn 1-5. The target
is the sample's emotion, or for the acoustic dims their attribute (speaking speed, loudness, pitch).
The instructed direction is never shown, so the judgement does not lean on what was asked.
*Attention checks* are items made from one reply played three times at clearly different levels
(loudness -8 dB steps, rate x0.75 / x1.4, pitch -4 / +4 semitones, in a random order), so their
answers are known. The key is also copied to ``RUN/ratings/keys/<test_id>.json`` for the import.
"""

from __future__ import annotations

import hashlib
import json
import math
import random
from collections import defaultdict
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from stylebench.atomic import write_text
from stylebench.errors import BadValue, FileClash
from stylebench.metrics.dims.base import all_dims, dimension
from stylebench.ratings.page import COLUMNS, csv_text, render_page
from stylebench.records import Sample
from stylebench.store import RunStore

KEY_FORMAT = "stylebench-ratings-key/1"
PAIRS = ("1-2", "2-3")


def check_levels() -> dict[str, tuple[str, tuple[float, float, float]]]:
    """Attention-check transforms per dim: a ``Style`` field and three levels of one reply (a
    higher level = a stronger attribute), from each dimension's ``check_levels``."""
    return {d.name: d.check_levels for d in all_dims() if d.check_levels is not None}


@dataclass(frozen=True)
class ItemTurn:
    """One turn as the rater sees it: an opaque audio file name and the reply's text."""

    audio: str
    text: str


@dataclass(frozen=True)
class Item:
    """One rating item as shown to raters (nothing here identifies the model or sample)."""

    item_id: str
    question: str
    scale: str
    turns: tuple[ItemTurn, ...]


def question_for(dim: str, emotion: str) -> tuple[str, str]:
    """The forced-choice question and the 1-5 scale for a sample's target attribute (the
    dimension's :meth:`~stylebench.metrics.dims.base.Dimension.question`)."""
    return dimension(dim).question(emotion)


def check_answers(levels: list[float]) -> dict[str, str]:
    """Known answer per pair of a check item: the turn with the higher level (levels differ)."""
    return {f"{a}-{b}": str(a if levels[a - 1] > levels[b - 1] else b) for a, b in ((1, 2), (2, 3))}


def run_replies(store: RunStore) -> tuple[list[Sample], dict[tuple[str, int], Any]]:
    """The samples a run selected and their current replies, from its stored config and
    dialogue set; replies of another configuration in the same folder are not read."""
    from stylebench.commands.runs import open_stored

    run = open_stored(store.root)
    return run.samples, run.replies()


def _unreadable(root: Path, recs: list[Any]) -> str | None:
    """Why a sample's reply audio cannot be put in front of raters, or ``None`` when it can."""
    from stylebench.audio import AudioError, load_audio

    for k, rec in enumerate(recs, start=1):
        try:
            load_audio(root / rec.audio)
        except AudioError as exc:
            return f"turn {k}: {exc}"
    return None


def _pick(samples: list[Sample], per_cell: int | None, rng: random.Random) -> list[Sample]:
    if per_cell is None:
        return samples
    cells: dict[tuple[str, ...], list[Sample]] = defaultdict(list)
    for s in samples:
        cells[(s.dim, s.direction, s.lang, s.emotion)].append(s)
    chosen = [s for k in sorted(cells) for s in rng.sample(cells[k], min(per_cell, len(cells[k])))]
    return sorted(chosen, key=lambda s: s.id)


def export_ratings(
    run_dir: Path | str,
    out: Path | str,
    *,
    raters: int = 3,
    seed: int = 0,
    checks: int | None = None,
    per_cell: int | None = None,
    embed_audio: bool = False,
) -> dict[str, Any]:
    """Write the listening test of a run into the new folder ``out``.

    Args:
        run_dir: a run folder with respond records.
        out: a folder that does not exist yet (or is empty).
        raters: number of rater pages (ids r01, r02, ...).
        seed: fixes item ids, audio names, check items and every rater's order.
        checks: attention-check items; default ``max(2, ceil(items / 10))``.
        per_cell: rate at most this many samples per (dim, direction, lang, emotion), drawn by seed.
        embed_audio: put the audio into each page as base64 data URIs (one file per rater).

    Returns:
        The key (also written to ``out/key.json``).

    Raises:
        ValueError: bad counts, or no sample with three ok replies.
        FileExistsError: ``out`` exists and is not empty.
    """
    from stylebench.audio import load_audio, write_wav
    from stylebench.synth.base import Audio, Style
    from stylebench.synth.ffmpeg import apply_style

    if raters < 1 or (checks is not None and checks < 0) or (per_cell is not None and per_cell < 1):
        raise BadValue("--raters and --per-cell must be >= 1 and --checks >= 0")
    store = RunStore(run_dir)
    manifest = store.read_manifest()
    out = Path(out)
    if out.exists() and any(out.iterdir()):
        raise FileClash(f"{out} is not empty; choose a new --out folder")
    samples, replies = run_replies(store)
    usable, skipped = [], {}
    for s in samples:
        recs = [replies.get((s.id, k)) for k in (1, 2, 3)]
        bad = [k for k, r in zip((1, 2, 3), recs, strict=True) if r is None or r.status != "ok"]
        why = f"turns {bad} have no ok reply" if bad else _unreadable(store.root, recs)
        if why:
            skipped[s.id] = why
        else:
            usable.append(s)
    if not usable:
        raise BadValue(f"{store.root}: no sample has three ok replies; nothing to rate")
    rng = random.Random(f"stylebench-ratings|{seed}")
    chosen = _pick(usable, per_cell, rng)
    n_checks = max(2, math.ceil(len(chosen) / 10)) if checks is None else checks
    ident = f"{manifest.get('run_id')}|{seed}|{n_checks}|{','.join(s.id for s in chosen)}"
    test_id = "T" + hashlib.sha256(ident.encode()).hexdigest()[:10]
    names: set[str] = set()

    def token(prefix: str) -> str:
        while (name := prefix + f"{rng.getrandbits(40):010x}") in names:
            pass
        names.add(name)
        return name

    (out / "audio").mkdir(parents=True, exist_ok=True)
    items: list[Item] = []
    key_items: dict[str, dict[str, Any]] = {}
    for s in chosen:
        turns, key_turns = [], {}
        for k in (1, 2, 3):
            rec = replies[(s.id, k)]
            name = token("a") + ".wav"
            write_wav(out / "audio" / name, *load_audio(store.root / rec.audio))
            turns.append(ItemTurn(name, rec.text))
            key_turns[str(k)] = {"audio": name, "source": rec.audio, "sha256": rec.sha256}
        item = Item(token("i"), *question_for(s.dim, s.emotion), tuple(turns))
        items.append(item)
        key_items[item.item_id] = {
            "kind": "sample",
            "sample_id": s.id,
            "dim": s.dim,
            "direction": s.direction,
            "lang": s.lang,
            "group": s.emotion,
            "voice": s.voice,
            "turns": key_turns,
        }
    # checks on the run's own acoustic dims first, so that they look like the other items
    run_dims = {s.dim for s in chosen}
    checks = {d: c for d, c in check_levels().items() if dimension(d).in_all or d in run_dims}
    dims = sorted(checks, key=lambda d: (d not in run_dims, d))
    for c in range(n_checks):
        src = rng.choice(chosen)
        rec = replies[(src.id, 1)]
        wave, sr = load_audio(store.root / rec.audio)
        dim = dims[c % len(dims)]
        field, dim_levels = checks[dim]
        levels = list(dim_levels)
        rng.shuffle(levels)
        turns = []
        for level in levels:
            style = Style(**{field: level})
            name = token("a") + ".wav"
            write_wav(out / "audio" / name, apply_style(Audio(wave, sr), style).wave, sr)
            turns.append(ItemTurn(name, rec.text))
        item = Item(token("i"), *question_for(dim, ""), tuple(turns))
        items.append(item)
        answers = check_answers(levels)
        key_items[item.item_id] = {
            "kind": "check",
            "transform": dim,
            "levels": levels,
            "answers": answers,
            "source_sample_id": src.id,
            "source_audio": rec.audio,
            "turns": {str(k + 1): {"audio": t.audio} for k, t in enumerate(turns)},
        }
    rater_ids = [f"r{i + 1:02d}" for i in range(raters)]
    orders = {}
    for rid in rater_ids:
        order = list(items)
        random.Random(f"stylebench-ratings|{seed}|{test_id}|{rid}").shuffle(order)
        orders[rid] = [it.item_id for it in order]
        page = render_page(test_id, rid, order, out / "audio", embed_audio=embed_audio)
        (out / f"rater_{rid}.html").write_text(page, encoding="utf-8")
        rows = [_sheet_row(test_id, rid, pos, it) for pos, it in enumerate(order, start=1)]
        (out / f"sheet_{rid}.csv").write_text(csv_text(rows), encoding="utf-8")
    key = {
        "format": KEY_FORMAT,
        "test_id": test_id,
        "run_id": manifest.get("run_id"),
        "run_dir": str(store.root),
        "model": (manifest.get("model") or {}).get("name"),
        "seed": seed,
        "raters": rater_ids,
        "n_checks": n_checks,
        "orders": orders,
        "items": key_items,
        "skipped": skipped,
        "embed_audio": embed_audio,
        "shown": {it.item_id: asdict(it) for it in items},
    }
    text = json.dumps(key, indent=2, sort_keys=True, ensure_ascii=False) + "\n"
    (out / "key.json").write_text(text, encoding="utf-8")
    write_text(store.root / "ratings" / "keys" / f"{test_id}.json", text)
    return key


def _sheet_row(test_id: str, rater_id: str, position: int, item: Item) -> dict[str, str]:
    row = {c: "" for c in COLUMNS}
    row.update(test_id=test_id, rater_id=rater_id, position=str(position), item_id=item.item_id)
    row.update(question=item.question, scale=item.scale)
    for k, t in enumerate(item.turns, start=1):
        row[f"audio_{k}"] = "audio/" + t.audio
        row[f"text_{k}"] = t.text
    return row
