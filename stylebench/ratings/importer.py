"""``stylebench import-ratings``: read rating CSVs back, check raters, and compute human VSP.

Reading: every CSV (downloaded from the page or filled in offline) must belong to one test; its
key is found by test id in ``RUN/ratings/keys/`` (or given). A blank answer is *not rated*. The
same rater may appear in several files: equal answers merge, conflicting answers are an error.

Rater QC: a rater's *attention accuracy* is correct forced choices on check items / all check
forced choices (unanswered = wrong). Raters below ``min_attention`` are dropped from everything
below; with no check items every rater is kept and the accuracy is ``None``.

Human VSP, per (dim, direction, lang, group, pair), over the samples at least one kept rater
judged on that pair: a sample's *majority* is ``later`` when more kept raters chose the later turn
as stronger, ``earlier`` when fewer, ``tie`` otherwise. It is *valid* when the majority is
``later`` for intensify or ``earlier`` for attenuate; a tie is not valid. VSP = 100 * valid /
judged, with a percentile bootstrap CI (``stylebench.scoring.vsp.vsp_cell``).
Agreement (kept raters, sample items only; checks excluded) is in :mod:`stylebench.ratings.stats`.
"""

from __future__ import annotations

import csv
import hashlib
import io
import json
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from stylebench.atomic import write_text
from stylebench.errors import BadValue, MissingFile
from stylebench.ratings.page import ANSWER_COLUMNS, safe_cell
from stylebench.ratings.stats import (
    category_counts,
    fleiss_kappa,
    krippendorff_alpha,
    pairwise_agreement,
    transpose,
)
from stylebench.scoring.cells import cell_sort_key
from stylebench.scoring.vsp import VspCell, key_json, round_vsp, vsp_cell
from stylebench.store import RunStore

SUMMARY_FORMAT = "stylebench-ratings-summary/1"
SUMMARY_NAME = "ratings_summary.json"
PAIRS = ("1-2", "2-3")
_REQUIRED = ("test_id", "rater_id", "item_id", *ANSWER_COLUMNS)
Answers = dict[tuple[str, str], dict[str, str]]  # (rater_id, item_id) -> field -> value


def _parse(field: str, value: str, where: str) -> str | None:
    v = value.strip().lstrip("'")
    if not v:
        return None
    allowed = {"choice_1_2": ("1", "2"), "choice_2_3": ("2", "3")}.get(field, tuple("12345"))
    if v not in allowed:
        raise BadValue(f"{where}: {field} must be one of {', '.join(allowed)} or blank, got {v!r}")
    return v


def read_ratings(paths: Sequence[Path | str]) -> tuple[str, Answers, list[dict[str, Any]]]:
    """Read rating CSVs into ``(test_id, answers, files)``; see the module docstring.

    Raises:
        ValueError: missing columns, bad values, several test ids, or conflicting answers.
        FileNotFoundError: a CSV that does not exist.
    """
    if not paths:
        raise BadValue("give at least one rating CSV")
    answers: Answers = {}
    tests: set[str] = set()
    files = []
    for path in map(Path, paths):
        raw = path.read_bytes()
        try:
            rows = list(csv.DictReader(raw.decode("utf-8-sig").splitlines()))
        except UnicodeDecodeError as exc:
            raise BadValue(
                f"{path}: not UTF-8 text ({exc.reason} at byte {exc.start}); save the sheet as UTF-8 CSV"
            ) from None
        except csv.Error as exc:
            raise BadValue(f"{path}: not a CSV file ({exc})") from None
        missing = [c for c in _REQUIRED if rows and c not in rows[0]] or (
            [] if rows else ["(no rows)"]
        )
        if missing:
            raise BadValue(f"{path}: not a rating sheet, missing columns {missing}")
        for line, row in enumerate(rows, start=2):
            where = f"{path.name}:{line}"
            tests.add(row["test_id"].strip())
            key = ((row["rater_id"] or "").strip(), (row["item_id"] or "").strip())
            if not all(key):
                raise BadValue(f"{where}: rater_id and item_id must not be blank")
            got = answers.setdefault(key, {})
            for f in ANSWER_COLUMNS:
                v = _parse(f, row[f] or "", where)
                if v is None:
                    continue
                if got.get(f, v) != v:
                    raise BadValue(
                        f"{where}: rater {key[0]} answered {f} of item {key[1]} differently in "
                        "another file; pass only one file per rater"
                    )
                got[f] = v
        files.append(
            {"name": path.name, "sha256": hashlib.sha256(raw).hexdigest(), "rows": len(rows)}
        )
    if len(tests) != 1:
        raise BadValue(f"the CSVs belong to {len(tests)} tests {sorted(tests)}; import one test")
    return tests.pop(), answers, files


def load_key(store: RunStore, test_id: str, key_path: Path | str | None = None) -> dict[str, Any]:
    """The private key of ``test_id``, from ``key_path`` or the run's ``ratings/keys`` folder."""
    path = Path(key_path) if key_path else store.root / "ratings" / "keys" / f"{test_id}.json"
    if not path.is_file():
        raise MissingFile(f"no key for test {test_id} at {path}; pass --key <export dir>/key.json")
    key = json.loads(path.read_text(encoding="utf-8"))
    if key.get("test_id") != test_id:
        raise BadValue(f"{path} is the key of test {key.get('test_id')}, not {test_id}")
    run_id = store.read_manifest().get("run_id")
    if key.get("run_id") != run_id:
        raise BadValue(f"test {test_id} was exported from run {key.get('run_id')}, not {run_id}")
    return key


def rater_qc(key: dict[str, Any], answers: Answers, min_attention: float) -> list[dict[str, Any]]:
    """Attention accuracy per rater (sorted by id) and whether the rater is kept."""
    checks = {i: it["answers"] for i, it in key["items"].items() if it["kind"] == "check"}
    out = []
    for rid in sorted({r for r, _ in answers}):
        total = correct = 0
        for item_id, truth in checks.items():
            got = answers.get((rid, item_id), {})
            for pair in PAIRS:
                total += 1
                correct += got.get("choice_" + pair.replace("-", "_")) == truth[pair]
        acc = correct / total if total else None
        n_answered = sum(len(v) for (r, _), v in answers.items() if r == rid)
        out.append(
            {
                "rater_id": rid,
                "check_accuracy": acc,
                "n_check_answers": total,
                "n_answered": n_answered,
                "kept": acc is None or acc >= min_attention,
            }
        )
    return out


def _later(field: str, value: str | None) -> str | None:
    """``later`` when the later turn of the pair was chosen as stronger, else ``earlier``."""
    if value is None:
        return None
    return "later" if value == field[-1] else "earlier"


@dataclass(frozen=True, kw_only=True)
class HumanCell(VspCell):
    """A human VSP cell: the shared VSP fields (``n_decided`` = samples with a majority, ties
    included, stored as ``n_judged``), the ties and the mean 1-5 intensity change."""

    n_tie: int
    intensity_change_mean: float | None


def human_cell_dict(c: HumanCell) -> dict[str, Any]:
    """A human cell's JSON form: VSP to 2 decimals, the intensity change to 3."""
    vsp, vsp_ci = round_vsp(c)
    return {
        **key_json(c),
        "vsp": vsp,
        "vsp_ci": vsp_ci,
        "n": c.n,
        "n_judged": c.n_decided,
        "n_valid": c.n_valid,
        "n_tie": c.n_tie,
        "intensity_change_mean": None
        if c.intensity_change_mean is None
        else round(c.intensity_change_mean, 3),
    }


def summarize(
    key: dict[str, Any], answers: Answers, kept: Sequence[str], *, n_boot: int = 2000, seed: int = 0
) -> dict[str, Any]:
    """Majorities, human VSP cells and agreement statistics over the ``kept`` raters."""
    samples = {i: it for i, it in key["items"].items() if it["kind"] == "sample"}
    kept = sorted(kept)
    majority, cells = [], defaultdict(list)
    for item_id, it in sorted(samples.items(), key=lambda kv: kv[1]["sample_id"]):
        for pair in PAIRS:
            field = "choice_" + pair.replace("-", "_")
            votes = [_later(field, answers.get((r, item_id), {}).get(field)) for r in kept]
            n_later, n_earlier = votes.count("later"), votes.count("earlier")
            maj = None
            if n_later + n_earlier:
                maj = (
                    "later" if n_later > n_earlier else "earlier" if n_earlier > n_later else "tie"
                )
            want = "later" if it["direction"] == "intensify" else "earlier"
            a, b = (f"intensity_{t}" for t in pair.split("-"))
            deltas = [
                int(x[b]) - int(x[a])
                for r in kept
                if a in (x := answers.get((r, item_id), {})) and b in x
            ]
            row = {
                "sample_id": it["sample_id"],
                "item_id": item_id,
                "pair": pair,
                "dim": it["dim"],
                "direction": it["direction"],
                "lang": it["lang"],
                "group": it["group"],
                "n_raters": n_later + n_earlier,
                "n_later": n_later,
                "n_earlier": n_earlier,
                "majority": maj,
                "valid": None if maj is None else maj == want,
                "intensity_change": sum(deltas) / len(deltas) if deltas else None,
            }
            majority.append(row)
            cells[(it["dim"], it["direction"], it["lang"], pair, it["group"])].append(row)
    out_cells = []
    for k in sorted(cells, key=lambda k: cell_sort_key(*k)):
        rows = cells[k]
        deltas = [r["intensity_change"] for r in rows if r["intensity_change"] is not None]
        cell = vsp_cell(
            HumanCell,
            k,
            (r["valid"] for r in rows if r["valid"] is not None),
            n=len(rows),
            n_boot=n_boot,
            seed=seed,
            n_tie=sum(r["majority"] == "tie" for r in rows),
            intensity_change_mean=sum(deltas) / len(deltas) if deltas else None,
        )
        out_cells.append(human_cell_dict(cell))
    return {
        "cells": out_cells,
        "agreement": agreement(samples, answers, kept),
        "majority": majority,
    }


def agreement(samples: dict[str, Any], answers: Answers, kept: Sequence[str]) -> dict[str, Any]:
    """Alpha, kappa and pairwise agreement for the forced choices and the 1-5 intensities."""
    ids = sorted(samples)
    choice = [
        [
            _later(f, answers.get((r, i), {}).get(f))
            for i in ids
            for f in ("choice_1_2", "choice_2_3")
        ]
        for r in kept
    ]
    inten = [
        [
            None if (v := answers.get((r, i), {}).get(f"intensity_{t}")) is None else int(v)
            for i in ids
            for t in (1, 2, 3)
        ]
        for r in kept
    ]

    def n_units(table: list[list[Any]]) -> int:
        return sum(sum(v is not None for v in u) >= 2 for u in transpose(table))

    def r4(x: float | None) -> float | None:
        return None if x is None else round(x, 4)

    cu, iu = transpose(choice), transpose(inten)
    return {
        "choice": {
            "alpha_nominal": r4(krippendorff_alpha(cu, "nominal")),
            "fleiss_kappa": r4(fleiss_kappa(category_counts(cu, ("earlier", "later")))),
            "pairwise_agreement": r4(pairwise_agreement(choice)),
            "n_units": n_units(choice),
            "n_raters": len(kept),
        },
        "intensity": {
            "alpha_ordinal": r4(krippendorff_alpha(iu, "ordinal")),
            "alpha_interval": r4(krippendorff_alpha(iu, "interval")),
            "pairwise_agreement": r4(pairwise_agreement(inten)),
            "n_units": n_units(inten),
            "n_raters": len(kept),
        },
    }


def import_ratings(
    run_dir: Path | str,
    csvs: Sequence[Path | str],
    *,
    min_attention: float = 0.75,
    key_path: Path | str | None = None,
    n_boot: int = 2000,
    seed: int = 0,
) -> dict[str, Any]:
    """Import rating CSVs into a run: writes ``ratings_summary.json`` and ``ratings/<test>.csv``.

    Raises:
        ValueError: ``min_attention`` outside [0, 1], or bad CSVs (see :func:`read_ratings`).
    """
    if not 0.0 <= min_attention <= 1.0:
        raise BadValue(f"--min-attention is a share in [0, 1], e.g. 0.75; got {min_attention}")
    store = RunStore(run_dir)
    store.read_manifest()  # not a run folder: say so before reading the CSVs
    test_id, answers, files = read_ratings(csvs)
    key = load_key(store, test_id, key_path)
    unknown = sorted({i for _, i in answers} - set(key["items"]))
    if unknown:
        raise BadValue(f"items {unknown[:5]} are not in test {test_id}; wrong CSV or key?")
    # only the pages the test exported may rate: a typo or a forged row is not a new rater
    # (keys written by hand may leave the list out)
    strangers = (
        sorted({r for r, _ in answers} - set(key.get("raters") or ())) if "raters" in key else []
    )
    if strangers:
        raise BadValue(
            f"rater ids {strangers[:5]} are not raters of test {test_id} (its raters: {', '.join(map(str, key['raters']))}); wrong CSV or key?"
        )
    raters = rater_qc(key, answers, min_attention)
    kept = [r["rater_id"] for r in raters if r["kept"]]
    summary = {
        "format": SUMMARY_FORMAT,
        "test_id": test_id,
        "run_id": key["run_id"],
        "files": files,
        "min_attention": min_attention,
        "n_checks": key.get("n_checks", 0),
        "n_boot": n_boot,
        "seed": seed,
        "raters": raters,
        "n_raters": len(raters),
        "n_kept": len(kept),
        **summarize(key, answers, kept, n_boot=n_boot, seed=seed),
    }
    ratings_dir = store.root / "ratings"
    ratings_dir.mkdir(parents=True, exist_ok=True)
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    w.writerow(["rater_id", "item_id", "field", "value"])
    w.writerows(
        [safe_cell(r), i, f, v]
        for (r, i), got in sorted(answers.items())
        for f, v in sorted(got.items())
    )
    _atomic_write(ratings_dir / f"{test_id}.csv", buf.getvalue())
    _atomic_write(store.root / SUMMARY_NAME, json.dumps(summary, indent=2, sort_keys=True) + "\n")
    return summary


def _atomic_write(path: Path, text: str) -> None:
    write_text(path, text)


def human_report_block(run_dir: Path | str) -> dict[str, Any] | None:
    """The ``human`` block of a run's report: the summary without per-sample majorities."""
    path = Path(run_dir) / SUMMARY_NAME
    if not path.is_file():
        return None
    try:
        summary = json.loads(path.read_text(encoding="utf-8"))
    except json.JSONDecodeError as exc:
        raise BadValue(
            f"{path} is not valid JSON ({exc}); re-run `stylebench import-ratings`"
        ) from None
    return {k: v for k, v in summary.items() if k != "majority"}


def read_majority(run_dir: Path | str) -> list[dict[str, Any]] | None:
    """The per-(sample, pair) human majorities of an imported listening test, if any."""
    path = Path(run_dir) / SUMMARY_NAME
    if not path.is_file():
        return None
    rows = json.loads(path.read_text(encoding="utf-8")).get("majority")
    return rows if isinstance(rows, list) else None
