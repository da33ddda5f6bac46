"""Summary and printed report of ``benchmarks/real_replies.py``.

Per reply (one-turn samples): unscored replies by reason per dimension, flag rates, and the
replies that today's rules score although they look untrustworthy (too short, few syllables, a
transcript that does not match the text channel or the language, little voicing). Per pair: the
reference comparisons (``real_replies_compare``) and moved-as-asked per model and dimension with
the default thresholds, next to VStyle's published Gemini scores. And the non-speech probes.
"""

from __future__ import annotations

import math
import re
from collections import Counter, defaultdict
from typing import Any

import real_replies_compare as compare

DIMS = ("pitch", "volume", "speed")
#: the acceptance target for the octave flag
MAX_OCTAVE_SUSPECT_PCT = 5.0
#: what makes a scored reply suspect (untrustworthy) in this benchmark's eyes
SUSPECT = {"min_span_s": 1.0, "min_syllables": 4, "max_asr_text_er": 0.5, "min_voiced_ratio": 0.15}
_CJK = re.compile(r"[\u3040-\u30ff\u3400-\u9fff]")
_LATIN_WORD = re.compile(r"[A-Za-z]{2,}")


def reason_group(reason: str) -> str:
    """A reason's first words with file names, numbers and parentheses left out."""
    s = re.sub(r"\(.*?\)|\S+\.(mp3|wav)\S*", "", reason)
    s = re.sub(r"(?<![\w.])[-+]?\d+(\.\d+)?\b", "#", s)
    return " ".join(s.split()[:7])


def _flag_names(flags: list[str]) -> set[str]:
    return {f.split(":")[0] for f in flags}


def _scored(row: dict[str, Any], d: str) -> float | None:
    v = row["result"]["scores"][d].get(1)
    return v if isinstance(v, float) else None


def suspect_reasons(row: dict[str, Any]) -> list[tuple[str, tuple[str, ...]]]:
    """Why a reply's measurement looks untrustworthy, from its values and texts, each with the
    dimensions it concerns: a short or unvoiced reply concerns every score (or pitch), a
    transcript that disagrees with the text or is in the other script concerns the syllable
    count, so speed only (F0 and level are measured on the audio, not on any text)."""
    vals = row["result"]["values"].get(1, {})
    out: list[tuple[str, tuple[str, ...]]] = []
    span = vals.get("span_s")
    if row["result"]["errors"]:
        return out
    if span is None or span < SUSPECT["min_span_s"]:
        out.append((f"speech span {span if span is None else round(span, 2)} s", DIMS))
    if vals.get("syllables", math.inf) < SUSPECT["min_syllables"]:
        out.append((f"{vals['syllables']:.0f} ASR syllables", DIMS))
    er, asr = vals.get("asr_text_er"), row.get("asr_text") or ""
    if er is not None and er > SUSPECT["max_asr_text_er"]:
        out.append((f"ASR vs text error {er:.2f}", ("speed",)))
    if not row["text"]:
        out.append(("empty text channel", ("speed",)))
    # digits are neutral: Whisper writes counted numbers as digits in both languages; three
    # characters or more: one stray character in an English sentence is an ASR slip
    if row["lang"] == "en" and len(_CJK.findall(asr)) >= 3:
        out.append(("CJK in an English transcript", ("speed",)))
    if row["lang"] == "zh" and _LATIN_WORD.search(asr) and not _CJK.search(asr):
        out.append(("Latin-only Mandarin transcript", ("speed",)))
    if vals.get("f0_voiced_ratio", 1.0) < SUSPECT["min_voiced_ratio"]:
        out.append((f"voiced {vals['f0_voiced_ratio']:.2f}", ("pitch",)))
    return out


def _moved(pairs: list[dict[str, Any]]) -> dict[str, Any]:
    from stylebench.scoring.cells import Thresholds, is_valid

    thr = Thresholds()
    cells: dict[str, dict[str, Any]] = defaultdict(dict)
    for p in pairs:
        c = cells[p["model"]].setdefault(
            p["dimension"], {"n": 0, "n_scored": 0, "n_moved": 0, "gemini": [], "both_ge3": 0}
        )
        c["n"] += 1
        a, b = (p["result"]["scores"].get(p["dimension"], {}).get(k) for k in (1, 2))
        if isinstance(a, float) and isinstance(b, float) and a > 0 and b > 0:
            c["n_scored"] += 1
            c["n_moved"] += is_valid(p["dimension"], "intensify", a, b, thr)
        g = [p.get("gemini_score_attenuate"), p.get("gemini_score_intensify")]
        c["gemini"] += [x for x in g if isinstance(x, int | float)]
        c["both_ge3"] += bool(p.get("both_judged_ge3"))
    for dims in cells.values():
        for c in dims.values():
            c["gemini_mean"] = sum(c["gemini"]) / len(c["gemini"]) if c["gemini"] else math.nan
    return {"thresholds": {d: thr.for_dim(d) for d in DIMS}, "cells": dict(cells)}


def summarise(
    rows: list[dict[str, Any]], pairs: list[dict[str, Any]], probes: list[dict[str, Any]]
) -> dict[str, Any]:
    """Everything the printed report shows, as one JSON-ready dict."""
    unscored: dict[str, dict[str, Any]] = {d: {} for d in DIMS}
    flags, pair_flags = Counter(), Counter()
    for r in rows:
        for d in DIMS:
            v = r["result"]["scores"][d].get(1)
            if not isinstance(v, float):
                g = unscored[d].setdefault(reason_group(str(v)), {"n": 0, "files": []})
                g["n"] += 1
                g["files"].append(r["file"])
        flags.update(_flag_names(r["result"]["flags"].get(1, [])))
    n_turns = 0
    for p in pairs:
        for fl in p["result"]["flags"].values():
            n_turns += 1
            pair_flags.update(_flag_names(fl))
    octave = 100.0 * flags["f0_octave_suspect"] / max(1, len(rows))
    octave_check = _octave_check(rows)
    suspects = []
    for r in rows:
        reasons = suspect_reasons(r)
        scored = [d for d in DIMS if _scored(r, d) is not None]
        hit = [d for d in scored if any(d in dims for _, dims in reasons)]
        if hit:
            why = [f"{w} ({'/'.join(dims) if dims != DIMS else 'all'})" for w, dims in reasons]
            suspects.append({"file": r["file"], "why": why, "scored": hit, **_facts(r)})
    probe_rows, vol = [_probe(p) for p in probes], compare.volume(pairs)
    targets = {
        "volume_agreement": vol["pass"],
        "octave_suspect": octave < MAX_OCTAVE_SUSPECT_PCT,
        "suspects_scored": len(suspects),
        "probes_scored": sum(not p["unscored_all"] for p in probe_rows),
    }
    any_unscored = [r["file"] for r in rows if any(_scored(r, d) is None for d in DIMS)]
    gaps = [
        (r["file"], round(g, 2))
        for r in rows
        if (g := r["result"]["values"].get(1, {}).get("f0_pyworld_gap_st")) is not None
    ]
    return {
        "targets": targets,
        "n_replies": len(rows),
        "n_any_unscored": len(any_unscored),
        "rule_unscored": [
            (d, r["file"], why)
            for r in rows
            for d in DIMS
            if not isinstance(v := r["result"]["scores"][d].get(1), float)
            and any(w in (why := _why(v, r, d)) for w in RULE_WORDS)
        ],
        "pyworld_gap": {"n": len(gaps), "over": [x for x in gaps if abs(x[1]) > 1.0]},
        "n_pairs": len(pairs),
        "n_scored": {d: sum(_scored(r, d) is not None for r in rows) for d in DIMS},
        "unscored": unscored,
        "flags": dict(flags.most_common()),
        "pair_flags": dict(pair_flags.most_common()),
        "n_pair_turns": n_turns,
        "octave_suspect_pct": octave,
        "octave_pass": octave < MAX_OCTAVE_SUSPECT_PCT,
        "octave_check": octave_check,
        "suspects": suspects,
        "volume": vol,
        "speed": compare.speed(pairs),
        "pitch": compare.pitch(pairs),
        "moved": _moved(pairs),
        "probes": probe_rows,
    }


def _octave_check(rows: list[dict[str, Any]]) -> dict[str, int]:
    """On the replies flagged ``f0_octave_suspect``: is the score (and pyworld's raw mean) within
    1 st of Praat's mean alone? A flag whose score agrees with Praat marks a repaired raw track."""
    from real_replies_refs import st

    out = {"n": 0, "score_within_1st": 0, "raw_within_1st": 0, "no_praat": 0}
    for r in rows:
        if "f0_octave_suspect" not in r["result"]["flags"].get(1, []):
            continue
        out["n"] += 1
        praat, v = r["refs"].get("praat_alone_f0"), r["result"]["values"].get(1, {})
        score = r["result"]["scores"]["pitch"].get(1)
        if praat is None or not isinstance(score, float):
            out["no_praat"] += 1
            continue
        out["score_within_1st"] += abs(st(praat, score)) <= 1.0
        out["raw_within_1st"] += abs(st(praat, v["f0_mean"])) <= 1.0
    return out


def _facts(r: dict[str, Any]) -> dict[str, Any]:
    v = r["result"]["values"].get(1, {})
    keep = (
        "duration_s",
        "span_s",
        "syllables",
        "spm",
        "text_spm",
        "asr_text_er",
        "f0_voiced_ratio",
        "f0_agreement",
        "f0_mean_agreed",
        "f0_mean_weighted",
        "rms_gated_dbfs",
        "rms_active_dbfs",
    )
    return {
        "values": {k: round(v[k], 3) for k in keep if k in v},
        "asr_text": r.get("asr_text"),
        "text": r["text"],
        "flags": r["result"]["flags"].get(1, []),
    }


def _probe(p: dict[str, Any]) -> dict[str, Any]:
    res = p["result"]
    out = {
        "probe": p["probe"],
        "asr_text": p.get("asr_text"),
        "flags": res["flags"].get(1, []),
        "scores": {d: res["scores"][d].get(1) for d in DIMS},
    }
    out["unscored_all"] = all(not isinstance(v, float) for v in out["scores"].values())
    if "source" in p:
        out["source"] = p["source"]
    return out


def _f(x: Any, fmt: str = ".2f") -> str:
    return "n/a" if x is None or (isinstance(x, float) and math.isnan(x)) else format(x, fmt)


def render(result: dict[str, Any]) -> str:
    """The printed report."""
    s = result["summary"]
    n = s["n_replies"]
    out = [
        f"real replies: {n} replies, {s['n_pairs']} pairs from {result['folder']} "
        f"(ASR {result['asr'] or 'off'}) in {result['seconds']:.0f} s",
        "(a) per reply (one-turn samples): scored "
        + ", ".join(f"{d} {s['n_scored'][d]}/{n}" for d in DIMS)
        + "; unscored by reason:",
    ]
    for d in DIMS:
        for why, g in sorted(s["unscored"][d].items(), key=lambda kv: -kv[1]["n"]):
            eg = ", ".join(f.split("/")[-1].removesuffix(".mp3") for f in g["files"][:2])
            out.append(f"    {d:6} {g['n']:3}  {why[:80]}  (e.g. {eg})")
    out.append(
        f"    replies unscored on at least one of {', '.join(DIMS)}: {s['n_any_unscored']}/{n} "
        f"({100 * s['n_any_unscored'] / max(1, n):.1f}%)"
    )
    out += _rule_lines(s)
    out.append(f"(b) flags over the {n} replies (one-turn) | over {s['n_pair_turns']} pair turns:")
    for name in sorted(set(s["flags"]) | set(s["pair_flags"])):
        a, b = s["flags"].get(name, 0), s["pair_flags"].get(name, 0)
        out.append(
            f"    {name:28} {a:3} ({100 * a / max(1, n):4.1f}%) | {b:3} "
            f"({100 * b / max(1, s['n_pair_turns']):4.1f}%)"
        )
    out.append(
        f"    f0_octave_suspect on {s['octave_suspect_pct']:.1f}% of replies (target < "
        f"{MAX_OCTAVE_SUSPECT_PCT:g}%: {'PASS' if s['octave_pass'] else 'FAIL'}); on those, the "
        f"score is within 1 st of Praat alone on {s['octave_check']['score_within_1st']}/"
        f"{s['octave_check']['n']}, pyworld's raw mean on {s['octave_check']['raw_within_1st']}"
    )
    out += compare.lines(s)
    out += _moved_lines(s["moved"])
    out += _suspect_lines(s["suspects"])
    out.append("(h) non-speech probes (one-turn, en); each should be unscored on every dimension:")
    for p in s["probes"]:
        cells = "; ".join(
            f"{d} {_f(v, '.1f') if isinstance(v, float) else 'unscored: ' + reason_group(str(v))[:50]}"
            for d, v in p["scores"].items()
        )
        tag = "ok (unscored)" if p["unscored_all"] else "SCORED"
        out.append(f"    {p['probe']:20} {tag:13} {cells}; ASR {p['asr_text']!r}")
        if p.get("source"):
            out.append(f"    {'':20} cut from {p['source']}")
    t = s["targets"]
    out.append(
        f"targets: volume agrees >= {compare.MIN_VOLUME_AGREEMENT_PCT:g}% "
        f"{'PASS' if t['volume_agreement'] else 'FAIL'}; f0_octave_suspect < "
        f"{MAX_OCTAVE_SUSPECT_PCT:g}% {'PASS' if t['octave_suspect'] else 'FAIL'}; suspect replies "
        f"scored {t['suspects_scored']} (target 0); non-speech probes scored "
        f"{t['probes_scored']}/{len(s['probes'])} (target 0)"
    )
    return "\n".join(out)


def _moved_lines(m: dict[str, Any]) -> list[str]:
    thr = ", ".join(f"{d} {v:g}" for d, v in m["thresholds"].items())
    out = [
        f"(f) moved as asked (intensify reply above the attenuate one by the threshold: {thr}) "
        "moved/scored/n, Gemini mean (both replies >= 3):",
        f"    {'model':38}" + "".join(f"{d:>22}" for d in DIMS),
    ]
    tot = {d: [0, 0, 0] for d in DIMS}
    for model, dims in sorted(m["cells"].items()):
        cells = []
        for d in DIMS:
            c = dims.get(d)
            if c is None:
                cells.append(f"{'-':>22}")
                continue
            for i, k in enumerate(("n_moved", "n_scored", "n")):
                tot[d][i] += c[k]
            txt = f"{c['n_moved']}/{c['n_scored']}/{c['n']} G{_f(c['gemini_mean'], '.1f')} ({c['both_ge3']})"
            cells.append(f"{txt:>22}")
        out.append(f"    {model[:38]:38}" + "".join(cells))
    out.append(f"    {'all':38}" + "".join(f"{'/'.join(map(str, tot[d])):>22}" for d in DIMS))
    return out


def _suspect_lines(sus: list[dict[str, Any]]) -> list[str]:
    out = [
        f"(g) scored on a dimension a suspicion concerns ({len(sus)} replies; span < "
        f"{SUSPECT['min_span_s']:g} s, "
        f"< {SUSPECT['min_syllables']} ASR syllables, ASR-vs-text error > {SUSPECT['max_asr_text_er']:g}, "
        f"empty text, transcript in the other script, voiced < {SUSPECT['min_voiced_ratio']:g}; "
        "transcript and text reasons concern speed only):"
    ]
    for x in sus:
        v = x["values"]
        out.append(f"    {x['file']}: {'; '.join(x['why'])} -> scored {','.join(x['scored'])}")
        out.append(
            f"        dur {_f(v.get('duration_s'))} span {_f(v.get('span_s'))} syl {_f(v.get('syllables'), '.0f')} "
            f"spm {_f(v.get('spm'), '.0f')} text_spm {_f(v.get('text_spm'), '.0f')} "
            f"voiced {_f(v.get('f0_voiced_ratio'))} agree {_f(v.get('f0_agreement'))} "
            f"f0 {_f(v.get('f0_mean_weighted'), '.0f')} Hz | ASR {(x['asr_text'] or '')[:50]!r} | "
            f"text {x['text'][:40]!r}"
        )
    return out


#: the reasons of the whispered / other-language / guessed-words rules (metrics/validity.py)
RULE_WORDS = ("voiced speech", "whispered", "another language", "asr_unsure", "unconfirmed")


def _why(reason: Any, row: dict[str, Any], dim: str) -> str:
    """The unscored reason, with the transcript-certainty flag behind a doubtful transcript
    (``asr_unsure``, ``asr_redecoded_unconfirmed``) named, since its reason text does not."""
    why = str(reason)
    if dim == "speed" and "doubtful transcript" in why:
        flags = row["result"]["flags"].get(1, [])
        named = [f for f in ("asr_unsure", "asr_redecoded_unconfirmed") if f in flags]
        why += "".join(f" ({f})" for f in named)
    return why


def _rule_lines(s: dict[str, Any]) -> list[str]:
    """Every reply left unscored by the voicing, language and word-certainty rules, by file;
    then the replies whose pyworld mean and three-tracker score differ by over 1 st."""
    out = ["    unscored by the voicing, language and certainty rules (every file):"]
    for d, f, why in s["rule_unscored"]:
        rule = next(w for w in RULE_WORDS if w in why)
        out.append(f"      {d:6} {rule:18} {f.split('/')[-1].removesuffix('.mp3')}")
    pg = s["pyworld_gap"]
    out.append(
        f"    pyworld f0_mean vs the three-tracker score: {len(pg['over'])}/{pg['n']} replies "
        "more than 1 st apart"
        + (
            ": "
            + ", ".join(f"{f.split('/')[-1].removesuffix('.mp3')} {g:+.2f}" for f, g in pg["over"])
            if pg["over"]
            else ""
        )
    )
    return out
