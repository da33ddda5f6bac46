"""Caption-based VSP and how it agrees with the acoustic scores (the report's ``captions`` block).

Per (dim, direction, lang, pair) cell, over the samples whose two captions were compared:

- *valid*: the caption judge's verdict is the instructed direction (``increased`` for intensify,
  ``decreased`` for attenuate);
- ``vsp`` = 100 * valid / decided, where decided verdicts are increased, decreased or same; its CI
  is the percentile bootstrap of the 0/100 indicator (:func:`.vsp.total_vsp`);
- ``vsp_all`` = 100 * valid / ok verdicts (``cannot_tell`` and ``unparseable`` count as not valid);
- ``tie_rate`` = share of ok verdicts that are ``same``, ``cannot_tell_rate`` and
  ``unparseable_rate`` likewise; failed comparisons are counted in ``errors``, in no rate.

Agreement with the acoustic scores (acoustic dims), per (sample, pair) with both: the acoustic
label is ``increased``/``decreased`` when the perceptual change reaches the threshold in that
direction, else ``same``; Cohen's kappa over those three labels (``kappa_direction``) and over
valid/not valid (``kappa_valid``). Emotion: kappa of increased/decreased against the human
majority later/earlier, where one was imported. Groundedness: Spearman's rho between each
caption's ordinal level for its dimension (read by the lexicon, :mod:`stylebench.metrics.captions.lexicon`)
and the reply's measured score, and its change against turn 1, across replies.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from stylebench.metrics.dims.base import dimension
from stylebench.records import (
    PAIRS,
    TURNS,
    CaptionRecord,
    CaptionVerdictRecord,
    Key,
    Sample,
)
from stylebench.scoring.cells import (
    Thresholds,
    TurnScore,
    cell_sort_key,
    pair_values,
    perceptual_change,
)
from stylebench.scoring.emotion import cohen_kappa
from stylebench.scoring.vsp import VspCell, key_json, round_vsp, vsp_cell

if TYPE_CHECKING:
    from stylebench.config import RunConfig

WANTED = {"intensify": "increased", "attenuate": "decreased"}
DECIDED = ("increased", "decreased", "same")


def _rate(n: int, d: int) -> float | None:
    return None if not d else round(n / d, 4)


def caption_cells(
    samples: Sequence[Sample],
    verdicts: Mapping[Key, CaptionVerdictRecord],
    *,
    n_boot: int = 2000,
    seed: int = 0,
    exclude: Collection[str] = (),
) -> list[dict[str, Any]]:
    """One dict per (dim, direction, lang, pair) with caption-VSP, its CI, rates and counts."""
    cells: dict[tuple[str, str, str, str], dict[str, Any]] = {}
    for s in sorted(samples, key=lambda s: s.id):
        if s.id in exclude:
            continue
        for a, b in PAIRS:
            c = cells.setdefault(
                (s.dim, s.direction, s.lang, f"{a}-{b}"), {"n": 0, "labels": [], "errors": {}}
            )
            c["n"] += 1
            v = verdicts.get((s.id, b))
            if v is None:
                c["errors"]["no verdict (a caption failed or is missing)"] = (
                    c["errors"].get("no verdict (a caption failed or is missing)", 0) + 1
                )
            elif v.status != "ok":
                why = v.error.splitlines()[0][:200] if v.error else "error"
                c["errors"][why] = c["errors"].get(why, 0) + 1
            else:
                c["labels"].append(v.label)
    out = []
    for (dim, direction, lang, pair), c in sorted(
        cells.items(), key=lambda kv: cell_sort_key(kv[0][0], kv[0][1], kv[0][2], kv[0][3], "")
    ):
        labels, want = c["labels"], WANTED[direction]
        cell = vsp_cell(
            CaptionCell,
            (dim, direction, lang, pair, ""),
            (x == want for x in labels if x in DECIDED),
            n=c["n"],
            n_boot=n_boot,
            seed=seed,
            errors=c["errors"],
            n_captioned=len(labels),
            tie_rate=_rate(labels.count("same"), len(labels)),
            cannot_tell_rate=_rate(labels.count("cannot_tell"), len(labels)),
            unparseable_rate=_rate(labels.count("unparseable"), len(labels)),
        )
        out.append(caption_cell_dict(cell))
    return out


@dataclass(frozen=True, kw_only=True)
class CaptionCell(VspCell):
    """A caption VSP cell (no group: ``""``): the shared VSP fields (``n_decided`` = verdicts
    increased, decreased or same), the verdicts the judge gave (``n_captioned``, stored as
    ``n_ok``; ``cannot_tell`` and ``unparseable`` included) and each verdict's share of them."""

    n_captioned: int
    tie_rate: float | None
    cannot_tell_rate: float | None
    unparseable_rate: float | None

    @property
    def vsp_all(self) -> float | None:
        """100 * valid / every verdict given (``cannot_tell`` and ``unparseable``: not valid)."""
        return 100.0 * self.n_valid / self.n_captioned if self.n_captioned else None


def caption_cell_dict(c: CaptionCell) -> dict[str, Any]:
    """A caption cell's JSON form (no group): percents to 2 decimals, rates to 4."""
    vsp, vsp_ci = round_vsp(c)
    return {
        **key_json(c, group=False),
        "n": c.n,
        "n_ok": c.n_captioned,
        "n_decided": c.n_decided,
        "n_valid": c.n_valid,
        "vsp": vsp,
        "vsp_ci": vsp_ci,
        "vsp_all": None if c.vsp_all is None else round(c.vsp_all, 2),
        "tie_rate": c.tie_rate,
        "cannot_tell_rate": c.cannot_tell_rate,
        "unparseable_rate": c.unparseable_rate,
        "errors": dict(c.errors),
    }


def acoustic_label(dim: str, a: float, b: float, thresholds: Thresholds) -> str:
    change, thr = perceptual_change(dim, a, b), thresholds.for_dim(dim)
    return (
        "increased"
        if change >= thr and change > 0
        else "decreased"
        if change <= -thr and change < 0
        else "same"
    )


def _kappa(x: list[str], y: list[str]) -> dict[str, Any]:
    if not x:
        return {"n": 0, "percent": None, "kappa": None}
    k = cohen_kappa(x, y)
    agree = 100.0 * sum(p == q for p, q in zip(x, y, strict=True)) / len(x)
    return {"n": len(x), "percent": round(agree, 2), "kappa": None if k is None else round(k, 4)}


def acoustic_agreement(
    samples: Sequence[Sample],
    verdicts: Mapping[Key, CaptionVerdictRecord],
    turn_scores: Sequence[TurnScore],
    thresholds: Thresholds,
) -> dict[str, Any]:
    """Cohen's kappa of caption verdicts with the acoustic change, per acoustic dim and overall."""
    by_key = {(t.sample_id, t.turn): t for t in turn_scores}
    rows: dict[str, tuple[list[str], list[str], list[str], list[str]]] = {}
    for s in samples:
        if not dimension(s.dim).acoustic:
            continue
        for a, b in PAIRS:
            v, got = (
                verdicts.get((s.id, b)),
                pair_values(by_key.get((s.id, a)), by_key.get((s.id, b))),
            )
            if v is None or v.status != "ok" or isinstance(got, str):
                continue
            ac = acoustic_label(s.dim, *got, thresholds)
            want = WANTED[s.direction]
            for key in (s.dim, "all"):
                r = rows.setdefault(key, ([], [], [], []))
                r[0].append(ac)
                r[1].append(v.label)
                r[2].append(str(ac == want))
                r[3].append(str(v.label == want))
    return {
        k: {"direction": _kappa(r[0], r[1]), "valid": _kappa(r[2], r[3])}
        for k, r in sorted(rows.items())
    }


def human_agreement(
    verdicts: Mapping[Key, CaptionVerdictRecord], majority: Sequence[Mapping[str, Any]] | None
) -> dict[str, Any] | None:
    """Emotion: caption increased/decreased vs the human majority later/earlier (ties left out)."""
    if majority is None:
        return None
    to = {"increased": "later", "decreased": "earlier"}
    x, y = [], []
    for r in majority:
        b = int(str(r.get("pair", "0-0")).split("-")[1])
        v = verdicts.get((r["sample_id"], b))
        if (
            v is not None
            and v.status == "ok"
            and v.label in to
            and r.get("majority") in ("later", "earlier")
        ):
            x.append(r["majority"])
            y.append(to[v.label])
    return _kappa(x, y)


def groundedness(
    samples: Sequence[Sample],
    captions: Mapping[Key, CaptionRecord],
    turn_scores: Sequence[TurnScore],
) -> dict[str, Any]:
    """Spearman's rho of caption level (lexicon reading) vs measured score, per dim."""
    from scipy.stats import spearmanr

    from stylebench.metrics.captions.lexicon import caption_level

    by_key = {(t.sample_id, t.turn): t for t in turn_scores}
    pts: dict[str, list[tuple[float, float, float | None]]] = {}
    for s in samples:
        for k in TURNS:
            c, tk = captions.get((s.id, k)), by_key.get((s.id, k))
            v = None if tk is None else tk.value
            lvl = caption_level(c.text, s.dim) if c is not None and c.status == "ok" else None
            if lvl is not None and v is not None:
                got = pair_values(by_key.get((s.id, 1)), tk)
                ch = (
                    perceptual_change(s.dim, *got)
                    if not isinstance(got, str) and dimension(s.dim).acoustic
                    else None
                )
                pts.setdefault(s.dim, []).append((lvl, v, ch))
    out = {}
    for dim, p in sorted(pts.items()):
        row: dict[str, Any] = {"n": len(p)}
        for name, ys in (
            ("rho_value", [q[1] for q in p]),
            ("rho_change_vs_turn1", [q[2] for q in p]),
        ):
            pairs = [(q[0], y) for q, y in zip(p, ys, strict=True) if y is not None]
            xs = [a for a, _ in pairs]
            ok = len(pairs) >= 3 and len(set(xs)) > 1 and len({y for _, y in pairs}) > 1
            row[name] = (
                round(float(spearmanr(xs, [y for _, y in pairs]).statistic), 4) if ok else None
            )
        out[dim] = row
    return out


CIRCULAR_NOTE = (
    "caption-VSP from the features captioner is CIRCULAR: its captions are written from the "
    "same pitch/level/rate measurements as the acoustic VSP, so its agreement with acoustic VSP "
    "holds by construction and is no evidence; it only shows the probe runs offline"
)


def caption_report_block(
    samples: Sequence[Sample],
    cfg: RunConfig,
    captions: Mapping[Key, CaptionRecord],
    verdicts: Mapping[Key, CaptionVerdictRecord],
    describe: Mapping[str, Any],
    turn_scores: Sequence[TurnScore],
    thresholds: Thresholds,
    *,
    exclude: Collection[str] = (),
    majority: Sequence[Mapping[str, Any]] | None = None,
) -> tuple[dict[str, Any], list[str]]:
    """``({"captions": block}, notes)``, or ``({}, [])`` when no captioner ran.

    ``describe`` is what the captioner, the caption judge and the instructions were
    (``captioner``, ``judge``, ``instructions``); ``majority`` the imported listening test's
    per-pair majorities, if any.
    """
    cc = cfg.caption
    if cc.captioner == "none":
        return {}, []
    n_ok = sum(1 for c in captions.values() if c.status == "ok")
    block = {
        "captioner": cc.captioner,
        "judge": cc.caption_judge,
        "describe": dict(describe),
        "circular": cc.captioner == "features",
        "captions": {"n_ok": n_ok, "n_total": len(captions)},
        "cells": caption_cells(
            samples,
            verdicts,
            n_boot=cfg.score.n_boot,
            seed=cfg.decode.seed,
            exclude=exclude,
        ),
        "agreement_acoustic": acoustic_agreement(
            [s for s in samples if s.id not in exclude], verdicts, turn_scores, thresholds
        ),
        "agreement_human": human_agreement(verdicts, majority)
        if any(dimension(s.dim).rated_by_humans for s in samples)
        else None,
        "groundedness": groundedness(samples, captions, turn_scores),
    }
    notes = [CIRCULAR_NOTE] if block["circular"] else []
    return {"captions": block}, notes
