"""Speech quality per turn, and what following the style instruction cost it (pure; reads nothing).

Every ok reply's features carry DNSMOS P.835 SIG, BAK and OVRL (:mod:`stylebench.metrics.quality`)
where speechmos was installed. :func:`quality_block` gives, for all samples and for each
(dim, direction), the mean of each score per turn with ``n_ok / n``, and the change from turn 1
to turns 2 and 3: the mean over samples of the paired difference (turn k minus turn 1, both
measured), with a percentile bootstrap CI (:func:`stylebench.scoring.bootstrap.bootstrap_ci`).
A negative change in OVRL means the styled replies sound worse than the neutral one (louder often
means clipped, faster often slurred). Quality is a property of the reply, not of its relevance,
so samples the relevance gate leaves out of style scores are counted here.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from stylebench.records import TURNS, FeatureRecord, Key, Sample
from stylebench.scoring.bootstrap import bootstrap_ci

#: the DNSMOS scores, as the report names them, and their feature keys
SCORES: dict[str, str] = {"sig": "dnsmos_sig", "bak": "dnsmos_bak", "ovrl": "dnsmos_ovrl"}
#: the turn pairs whose change is reported: turn 1 (neutral) against each styled turn
PAIRS: tuple[tuple[int, int], ...] = ((1, 2), (1, 3))
ALL = "all"


def _r(x: float | None) -> float | None:
    return None if x is None else round(float(x), 3)


def _scores(features: Mapping[Key, FeatureRecord], key: Key) -> dict[str, float] | None:
    f = features.get(key)
    if f is None or f.status != "ok" or SCORES["ovrl"] not in f.values:
        return None
    return {name: float(f.values[k]) for name, k in SCORES.items()}


def _group_rows(
    label: str,
    members: Sequence[Sample],
    features: Mapping[Key, FeatureRecord],
    boot: Mapping[str, Any],
) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    per = {s.id: {k: _scores(features, (s.id, k)) for k in TURNS} for s in members}
    turns = []
    for k in TURNS:
        ok = [x for v in per.values() if (x := v[k]) is not None]
        row: dict[str, Any] = {"group": label, "turn": k}
        for name in SCORES:
            row[name] = _r(sum(x[name] for x in ok) / len(ok)) if ok else None
        turns.append({**row, "n_ok": len(ok), "n": len(members)})
    changes = []
    for a, b in PAIRS:
        both = [(x, y) for v in per.values() if (x := v[a]) is not None and (y := v[b]) is not None]
        row = {"group": label, "pair": f"{a}-{b}"}
        for name in SCORES:
            diffs = [y[name] - x[name] for x, y in both]
            ci = bootstrap_ci(diffs, **boot)
            row[f"d_{name}"] = _r(sum(diffs) / len(diffs)) if diffs else None
            row[f"d_{name}_ci"] = [_r(ci[0]), _r(ci[1])] if ci else None
        changes.append({**row, "n": len(both)})
    return turns, changes


def quality_block(
    samples: Sequence[Sample],
    features: Mapping[Key, FeatureRecord],
    *,
    n_boot: int = 2000,
    seed: int = 0,
    ci: float = 0.95,
) -> dict[str, Any]:
    """The report's ``quality`` block: ``turns`` (per group and turn: mean ``sig``, ``bak``,
    ``ovrl``, ``n_ok``, ``n``) and ``changes`` (per group and pair ``1-2``/``1-3``: ``d_<score>``,
    the mean paired change, its ``d_<score>_ci``, and ``n`` paired samples). Groups: ``all``,
    then each ``<dim> <direction>`` in the samples' order. ``measured`` counts the replies with a
    score; 0 means no reply was scored (the caller says why)."""
    boot = {"n_boot": n_boot, "seed": seed, "ci": ci}
    groups: dict[str, list[Sample]] = {ALL: list(samples)}
    for s in samples:
        groups.setdefault(f"{s.dim} {s.direction}", []).append(s)
    turns: list[dict[str, Any]] = []
    changes: list[dict[str, Any]] = []
    for label, members in groups.items():
        t, c = _group_rows(label, members, features, boot)
        turns += t
        changes += c
    measured = sum(r["n_ok"] for r in turns if r["group"] == ALL)
    return {"measured": measured, "turns": turns, "changes": changes, "ci": ci}
