"""SRD, MRD and the relevance gate, from judge verdicts (pure functions) and their JSON report block.

Definitions (DESIGN, "Relevance gating"):

- **SRD** = 100 x (samples whose turn-1 reply is judged ``relevant``) / (samples with a
  ``relevant`` or ``irrelevant`` SRD verdict). **MRD** likewise over the per-sample MRD verdicts.
  ``unparseable`` verdicts, judge failures and samples without transcripts are left out of the
  ratio and counted (``n_unparseable``, ``n_error``, ``n_missing``); every figure carries ``n``.
- CIs: percentile bootstrap of the 0/100 indicator (:func:`stylebench.scoring.bootstrap.bootstrap_ci`).
- **Gate**: a model is *eligible* for style scores when MRD > ``threshold`` (default 40%). A model
  at or under it keeps its style cells in every report, marked not eligible. With no MRD
  (no judge, no transcripts) eligibility is unknown (``None``).
- ``filter_mrd``: samples whose MRD verdict is not ``relevant`` (irrelevant, unparseable, failed
  or missing) are left out of style scoring.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from stylebench.records import JudgeRecord, Key, Sample
from stylebench.scoring.bootstrap import bootstrap_ci

#: the paper's judge, named in every report that used another one
PAPER_JUDGE = "Qwen3-4B-Instruct"


@dataclass(frozen=True)
class RelevanceScore:
    """SRD or MRD over a set of samples; ``rate`` in percent, ``None`` with no parseable verdict."""

    kind: str
    rate: float | None
    ci: tuple[float, float] | None
    n: int
    n_judged: int
    n_relevant: int
    n_unparseable: int
    n_error: int
    n_missing: int


def relevance_score(
    kind: str, labels: Mapping[str, str | None], *, n_boot: int = 2000, seed: int = 0
) -> RelevanceScore:
    """SRD or MRD from per-sample labels.

    Args:
        kind: ``"srd"`` or ``"mrd"`` (carried through).
        labels: every sample id of the run -> ``"relevant"``, ``"irrelevant"``,
            ``"unparseable"``, ``"error"`` (the judge failed) or ``None`` (not judged: no
            transcripts).
    """
    values = [
        100.0 if v == "relevant" else 0.0
        for v in labels.values()
        if v in ("relevant", "irrelevant")
    ]
    count = list(labels.values()).count
    return RelevanceScore(
        kind=kind,
        rate=sum(values) / len(values) if values else None,
        ci=bootstrap_ci(values, n_boot=n_boot, seed=seed),
        n=len(labels),
        n_judged=len(values),
        n_relevant=count("relevant"),
        n_unparseable=count("unparseable"),
        n_error=count("error"),
        n_missing=count(None),
    )


def eligible(mrd: RelevanceScore, threshold: float) -> bool | None:
    """MRD > threshold; ``None`` when MRD could not be computed."""
    return None if mrd.rate is None else mrd.rate > threshold


def mrd_exclusions(mrd_labels: Mapping[str, str | None]) -> list[str]:
    """Sample ids that ``filter_mrd`` leaves out: MRD verdict anything but ``relevant``."""
    return sorted(sid for sid, v in mrd_labels.items() if v != "relevant")


def score_dict(s: RelevanceScore) -> dict[str, Any]:
    """The JSON form of a score: rate and CI rounded to 2 decimals, with every count."""
    return {
        "rate": None if s.rate is None else round(s.rate, 2),
        "ci": None if s.ci is None else [round(s.ci[0], 2), round(s.ci[1], 2)],
        "n": s.n,
        "n_judged": s.n_judged,
        "n_relevant": s.n_relevant,
        "n_unparseable": s.n_unparseable,
        "n_error": s.n_error,
        "n_missing": s.n_missing,
    }


def report_block(
    judge: Mapping[str, Any],
    srd_labels: Mapping[str, str | None],
    mrd_labels: Mapping[str, str | None],
    cell_of: Mapping[str, tuple[str, str]],
    *,
    threshold: float,
    filter_mrd: bool,
    n_boot: int,
    seed: int,
) -> dict[str, Any]:
    """The report's top-level judge keys: ``judge``, ``srd``, ``mrd``, ``srd_ci``, ``mrd_ci``,
    ``eligible`` and ``relevance`` (counts, per-(dim, lang) breakdown, gate settings)."""
    srd = relevance_score("srd", srd_labels, n_boot=n_boot, seed=seed)
    mrd = relevance_score("mrd", mrd_labels, n_boot=n_boot, seed=seed)
    by_cell = []
    for dim, lang in sorted(set(cell_of.values())):
        ids = [sid for sid, c in cell_of.items() if c == (dim, lang)]
        cs = relevance_score("srd", {i: srd_labels.get(i) for i in ids}, n_boot=n_boot, seed=seed)
        cm = relevance_score("mrd", {i: mrd_labels.get(i) for i in ids}, n_boot=n_boot, seed=seed)
        by_cell.append(
            {
                "dim": dim,
                "lang": lang,
                "srd": score_dict(cs),
                "mrd": score_dict(cm),
                "eligible": eligible(cm, threshold),
            }
        )
    sd, md = score_dict(srd), score_dict(mrd)
    return {
        "judge": dict(judge),
        "srd": sd["rate"],
        "mrd": md["rate"],
        "srd_ci": sd["ci"],
        "mrd_ci": md["ci"],
        "eligible": eligible(mrd, threshold),
        "relevance": {
            "threshold": threshold,
            "filter_mrd": filter_mrd,
            "n_excluded": len(mrd_exclusions(mrd_labels)) if filter_mrd else 0,
            "srd": sd,
            "mrd": md,
            "by_cell": by_cell,
        },
    }


def skipped_block(judge: Mapping[str, Any], why: str, threshold: float) -> dict[str, Any]:
    """The judge keys of a report whose judge stage did not run (eligibility unknown)."""
    return {
        "judge": {**judge, "skipped": why},
        "srd": None,
        "mrd": None,
        "srd_ci": None,
        "mrd_ci": None,
        "eligible": None,
        "relevance": {"threshold": threshold, "filter_mrd": False, "n_excluded": 0},
    }


def labels_from_records(
    records: Mapping[Key, JudgeRecord], sample_ids: Iterable[str], turn: int
) -> dict[str, str | None]:
    """Per-sample label of the judge records at ``turn`` ("error" for a failed call)."""
    out: dict[str, str | None] = {}
    for sid in sample_ids:
        rec = records.get((sid, turn))
        out[sid] = None if rec is None else (rec.label if rec.status == "ok" else "error")
    return out


def cells_of(samples: Sequence[Sample]) -> dict[str, tuple[str, str]]:
    """Sample id -> (dim, lang), the breakdown of ``report_block``'s ``by_cell``."""
    return {s.id: (s.dim, s.lang) for s in samples}
