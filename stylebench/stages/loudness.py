"""loudness: integrated loudness (ITU-R BS.1770-4, the EBU R128 measure) of every ok reply.

A perceptual cross-check of the volume score, not a style score (``--loudness``, off by
default). The volume score is the RMS of the frames a relative level gate keeps, on plain power
(docs/metrics.md); loudness weights the spectrum as a listener does (K-weighting) and gates in
400 ms blocks (:mod:`stylebench.metrics.loudness`). Where the two disagree on the direction of a
change a listener would hear (1 LU or more), the report says how often: a voice that moves its
energy into the high band can sound louder while its RMS holds still.

Records are keyed (sample_id, turn) and fingerprinted by this stage's version and the reply's
sha256, so a re-run skips what is done. What the stage adds to the report (the ``loudness``
block and its section) and to a comparison (a table per model) is declared on its
:data:`~stylebench.stages.registry.STAGES` entry, from the functions here.
"""

from __future__ import annotations

import math
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, ClassVar

from stylebench.pipeline.keys import fingerprint
from stylebench.pipeline.stage import Unit, is_ok
from stylebench.records import PAIRS, TURNS, Key, RecordKind, RespondRecord, Status
from stylebench.stages.outputs import LabelledRun, ReportPart, ScoredView
from stylebench.store import RunStore


@dataclass(frozen=True)
class LoudnessRecord:
    """Integrated loudness of one reply, ITU-R BS.1770-4; ``lufs`` is None when no 400 ms block is
    above -70 LUFS. Declared here, with its kind: the store and the stage loop read a stage's
    records through its :class:`~stylebench.records.RecordKind`."""

    sample_id: str
    turn: int
    status: Status
    fp: str
    lufs: float | None = None
    error: str = ""
    stage: str = "loudness"
    elapsed_s: float = 0.0  # seconds computing it (stage.timed); never in the fp


LOUDNESS = RecordKind("loudness", LoudnessRecord)
LOUDNESS_VERSION = "1"
#: a loudness change a listener hears: a pair moving less is left out of the agreement count
AUDIBLE_LU = 1.0
MEASURE = (
    "integrated loudness, ITU-R BS.1770-4 / EBU R128 (K-weighted, 400 ms blocks gated at -70 "
    "LUFS and 10 LU below), LUFS: a perceptual cross-check of the volume score, not a style score"
)


class LoudnessStage:
    """One unit per ok reply; needs numpy and scipy only."""

    records: ClassVar[RecordKind[LoudnessRecord]] = LOUDNESS
    name: ClassVar[str] = LOUDNESS.name
    errors: ClassVar[tuple[type[BaseException], ...]] = (ValueError, OSError)
    unit: ClassVar[str] = "reply"

    def __init__(self, store: RunStore, replies: Mapping[Key, RespondRecord]) -> None:
        self.store, self.replies = store, replies

    def plan(self) -> list[Unit]:
        base = fingerprint("loudness", LOUDNESS_VERSION)
        return [
            Unit(f"{k[0]}/{k[1]}", {k: fingerprint(base, r.sha256)}, payload=r)
            for k, r in self.replies.items()
            if r.status == "ok"
        ]

    def compute(self, unit: Unit, done: Mapping[Key, LoudnessRecord]) -> Iterator[LoudnessRecord]:
        from stylebench.audio import load_audio
        from stylebench.metrics.loudness import integrated_loudness

        ((key, fp),) = unit.fps.items()
        wave, sr = load_audio(self.store.root / unit.payload.audio)
        lufs = integrated_loudness(wave, sr)
        yield LoudnessRecord(*key, "ok", fp, lufs=None if lufs is None else round(lufs, 3))


def _values(scored: ScoredView, ids: set[str]) -> dict[Key, float]:
    return {
        k: r.lufs
        for k, r in scored.records.get(LOUDNESS.name, {}).items()
        if k[0] in ids and is_ok(r) and r.lufs is not None
    }


def _mean(xs: Sequence[float]) -> float | None:
    return round(sum(xs) / len(xs), 2) if xs else None


def volume_agreement(scored: ScoredView, ids: set[str]) -> dict[str, Any]:
    """On the volume samples among ``ids`` (the gate's exclusions left out), per turn pair: how
    many move by at least :data:`AUDIBLE_LU` in loudness, and of those, how many the volume
    score moves the same way."""
    lufs = _values(scored, ids)
    volume = {
        (t.sample_id, t.turn): t.value
        for t in scored.turn_scores
        if t.dim == "volume" and t.sample_id in ids and t.value
    }
    n_pairs = moved = agree = 0
    for sid in sorted({k[0] for k in volume}):
        for a, b in PAIRS:
            ka, kb = (sid, a), (sid, b)
            if not all(k in volume and k in lufs for k in (ka, kb)):
                continue
            n_pairs += 1
            d_lu = lufs[kb] - lufs[ka]
            if abs(d_lu) < AUDIBLE_LU:
                continue
            moved += 1
            agree += (20.0 * math.log10(volume[kb] / volume[ka]) > 0) == (d_lu > 0)
    return {
        "n_pairs": n_pairs,
        "n_moved": moved,
        "n_agree": agree,
        "percent": round(100.0 * agree / moved, 2) if moved else None,
    }


def _turn_rows(scored: ScoredView, ids: set[str], by_direction: bool) -> list[dict[str, Any]]:
    """Mean loudness per turn over ``ids`` (group ``all``), and with ``by_direction`` over the
    samples asked to intensify and to attenuate (whose changes cancel in ``all``)."""
    lufs = _values(scored, ids)
    groups = {"all": ids}
    if by_direction:
        for direction in ("intensify", "attenuate"):
            groups[direction] = {s.id for s in scored.samples if s.direction == direction} & ids
    return [
        {
            "group": group,
            "turn": t,
            "mean_lufs": _mean([v for k, v in lufs.items() if k[1] == t and k[0] in members]),
            "n_ok": sum(1 for k in lufs if k[1] == t and k[0] in members),
            "n": len(members),
        }
        for group, members in groups.items()
        if members
        for t in TURNS
    ]


def loudness_report_part(scored: ScoredView) -> ReportPart:
    """The report's ``loudness`` block (only when the stage ran): mean loudness per turn over
    all samples, and the volume score's agreement with it."""
    if not scored.cfg.measure.loudness:
        return ReportPart()
    ids = {s.id for s in scored.samples} - scored.exclude
    records = scored.records.get(LOUDNESS.name, {})
    block = {
        "measure": MEASURE,
        "n_ok": sum(1 for r in records.values() if is_ok(r) and r.lufs is not None),
        "n_total": len(records),
        "turns": _turn_rows(scored, ids, by_direction=True),
        "volume_agreement": volume_agreement(scored, ids),
    }
    return ReportPart({"loudness": block})


def _agreement_text(a: Mapping[str, Any]) -> str:
    if not a["n_pairs"]:
        return "no volume sample with both scores"
    pct = "–" if a["percent"] is None else f"{a['percent']:.1f} %"
    return (
        f"{a['n_agree']}/{a['n_moved']} ({pct}) of the volume pairs that move by "
        f"{AUDIBLE_LU:g} LU or more ({a['n_pairs']} pairs)"
    )


def loudness_markdown(block: Mapping[str, Any]) -> list[str]:
    """The report section: loudness per turn, and how often the volume score agrees."""
    from stylebench.report.md_text import fmt_ci, md_escape, md_table

    lines = ["## Loudness (ITU-R BS.1770-4)", "", md_escape(block["measure"]) + ".", ""]
    lines += md_table(
        ("samples", "turn", "mean LUFS", "n ok / n"),
        [
            (r["group"], str(r["turn"]), fmt_ci(r["mean_lufs"], None, 2), f"{r['n_ok']}/{r['n']}")
            for r in block["turns"]
        ],
    )
    return [
        *lines,
        "",
        "The volume score moves the way loudness does on "
        + _agreement_text(block["volume_agreement"])
        + ".",
        "",
    ]


def loudness_compare(
    runs: Sequence[LabelledRun], shared: frozenset[str], boot: Mapping[str, Any]
) -> list[dict[str, Any]] | None:
    """Per model that measured loudness, over the shared samples: mean LUFS per turn and the
    volume score's agreement with it; None (no table) when no run measured it."""
    rows = []
    for r in runs:
        if not r.scored.cfg.measure.loudness:
            continue
        ids = set(shared) - r.scored.exclude
        turns = {row["turn"]: row for row in _turn_rows(r.scored, ids, by_direction=False)}
        rows.append(
            {
                "model": r.label,
                **{f"turn_{t}": turns[t]["mean_lufs"] for t in TURNS},
                "n_ok": sum(row["n_ok"] for row in turns.values()),
                "n": 3 * len(ids),
                "volume_agreement": volume_agreement(r.scored, ids),
            }
        )
    return rows or None


def loudness_compare_markdown(rows: Sequence[Mapping[str, Any]]) -> list[str]:
    from stylebench.report.md_text import fmt_ci, md_escape, md_table

    if not rows:
        return []
    lines = ["", "## Loudness per model and turn (ITU-R BS.1770-4, LUFS)", ""]
    return lines + md_table(
        ("model", *(f"turn {t}" for t in TURNS), "n ok / n", "volume agrees with loudness"),
        [
            (
                md_escape(r["model"]),
                *(fmt_ci(r[f"turn_{t}"], None, 2) for t in TURNS),
                f"{r['n_ok']}/{r['n']}",
                _agreement_text(r["volume_agreement"]),
            )
            for r in rows
        ],
    )


def loudness_compare_html(rows: Sequence[Mapping[str, Any]]) -> list[str]:
    from stylebench.report.html_table import html_num, table

    if not rows:
        return []
    return [
        "<h2>Loudness per model and turn (ITU-R BS.1770-4, LUFS)</h2>"
        + table(
            "loudness",
            ("model", *(f"turn {t}" for t in TURNS), "n ok / n", "volume agrees with loudness"),
            [
                [
                    (r["model"], r["model"]),
                    *((html_num(r[f"turn_{t}"], None, 2), r[f"turn_{t}"]) for t in TURNS),
                    (f"{r['n_ok']}/{r['n']}", r["n_ok"]),
                    (
                        _agreement_text(r["volume_agreement"]),
                        r["volume_agreement"]["percent"],
                    ),
                ]
                for r in rows
            ],
        )
    ]
