"""The reference comparisons of ``benchmarks/real_replies.py``, per opposite-instruction pair
(turn 1 = the "attenuate" reply, turn 2 = the "intensify" one).

- volume: the score's dB change (``rms_gated``) against the change of FFmpeg's EBU R128
  integrated loudness; they agree when the signs match, counted on pairs moving >= 1 LU;
- speed: the score's change against the text channel's syllables per minute over the same speech
  span (``text_spm``), against the text's syllables per second of file, and the duration change;
- pitch: the score's semitone change against Praat's mean F0 alone (75-500 Hz) and pyworld
  harvest's; a difference above 1 st is a disagreement.
"""

from __future__ import annotations

import math
from typing import Any

from real_replies_refs import st

MIN_LU = 1.0
PITCH_TOL_ST = 1.0
#: the acceptance target for volume
MIN_VOLUME_AGREEMENT_PCT = 95.0


def _name(p: dict[str, Any]) -> str:
    return f"{p['lang']} {p['dimension']:6} {p['model'][:22]}"


def _num(x: Any) -> float | None:
    return x if isinstance(x, float) and math.isfinite(x) else None


def _val(p: dict[str, Any], turn: int, key: str) -> float | None:
    return _num(p["result"]["values"].get(turn, {}).get(key))


def _pct(a: float | None, b: float | None) -> float | None:
    return 100.0 * (b / a - 1.0) if a and b and a > 0 else None


def volume(pairs: list[dict[str, Any]]) -> dict[str, Any]:
    """dB change of the score against the LU change, on all pairs."""
    rows = []
    for p in pairs:
        la, lb = (r.get("lufs") for r in p["refs"])
        dlu = lb - la if la is not None and lb is not None else None
        ddb = _num(p["result"]["change"].get("volume"))
        row = {
            "pair": _name(p),
            "dimension": p["dimension"],
            "d_db": ddb,
            "d_lu": dlu,
            "why": None if ddb is not None else p["result"]["change"].get("volume"),
        }
        row["counted"] = dlu is not None and ddb is not None and abs(dlu) >= MIN_LU
        row["agree"] = row["counted"] and math.copysign(1, ddb) == math.copysign(1, dlu)
        rows.append(row)
    counted = [r for r in rows if r["counted"]]
    n_agree = sum(r["agree"] for r in counted)
    pct = 100.0 * n_agree / len(counted) if counted else math.nan
    diffs = [r["d_db"] - r["d_lu"] for r in rows if r["d_db"] is not None and r["d_lu"] is not None]
    return {
        "rows": rows,
        "n_counted": len(counted),
        "n_agree": n_agree,
        "agree_pct": pct,
        "pass": bool(counted) and pct >= MIN_VOLUME_AGREEMENT_PCT,
        "db_minus_lu": _spread(diffs),
    }


def _spread(xs: list[float]) -> dict[str, float]:
    if not xs:
        return {"median": math.nan, "min": math.nan, "max": math.nan, "n": 0}
    s = sorted(xs)
    return {"median": s[len(s) // 2], "min": s[0], "max": s[-1], "n": len(s)}


def speed(pairs: list[dict[str, Any]]) -> dict[str, Any]:
    """The score's % change against the text channel's rate and duration, on the speed pairs."""
    rows = []
    for p in pairs:
        if p["dimension"] != "speed":
            continue
        dur = [_val(p, k, "duration_s") for k in (1, 2)]
        syl = [_val(p, k, "text_syllables") for k in (1, 2)]
        per_file = [s / d if s and d else None for s, d in zip(syl, dur, strict=True)]
        score = _num(p["result"]["change"].get("speed"))
        text = _pct(_val(p, 1, "text_spm"), _val(p, 2, "text_spm"))
        row = {
            "pair": _name(p),
            "d_score_pct": score,
            "d_text_spm_pct": text,
            "d_text_per_file_s_pct": _pct(*per_file),
            "d_duration_pct": _pct(*dur),
            "spm": [_val(p, k, "spm") for k in (1, 2)],
            "text_spm": [_val(p, k, "text_spm") for k in (1, 2)],
            "source": ",".join(p["result"].get("sample_flags", {}).get("speed", [])) or "asr",
            "why": None if score is not None else p["result"]["change"].get("speed"),
        }
        row["sign_agrees"] = (
            None
            if score is None or text is None
            else math.copysign(1, score) == math.copysign(1, text)
        )
        rows.append(row)
    checked = [r for r in rows if r["sign_agrees"] is not None]
    return {
        "rows": rows,
        "n_checked": len(checked),
        "n_agree": sum(r["sign_agrees"] for r in checked),
    }


def pitch(pairs: list[dict[str, Any]]) -> dict[str, Any]:
    """The score's semitone change against Praat alone and harvest, on all pairs."""
    rows = []
    for p in pairs:
        score = _num(p["result"]["change"].get("pitch"))
        praat = st(*(r.get("praat_alone_f0") for r in p["refs"]))
        harvest = st(*(r.get("harvest_f0") for r in p["refs"]))
        row = {
            "pair": _name(p),
            "dimension": p["dimension"],
            "d_score_st": score,
            "d_praat_st": praat,
            "d_harvest_st": harvest,
            "scores_hz": [_num(v) for v in p["result"]["scores"].get("pitch", {}).values()],
            "why": None if score is not None else p["result"]["change"].get("pitch"),
        }
        row["disagrees"] = [
            n
            for n, v in (("praat", praat), ("harvest", harvest))
            if score is not None and v is not None and abs(score - v) > PITCH_TOL_ST
        ]
        rows.append(row)
    return {
        "rows": rows,
        "n_scored": sum(r["d_score_st"] is not None for r in rows),
        "n_disagree": sum(bool(r["disagrees"]) for r in rows),
    }


def _f(x: float | None, fmt: str = "+6.1f") -> str:
    return (
        f"{'n/a':>6}" if x is None or (isinstance(x, float) and math.isnan(x)) else format(x, fmt)
    )


def _rates(xs: list[float | None]) -> str:
    return "->".join(_f(x, ".0f").strip() for x in xs)


def lines(s: dict[str, Any]) -> list[str]:
    """The printed volume, speed and pitch sections."""
    v, sp, pi = s["volume"], s["speed"], s["pitch"]
    d = v["db_minus_lu"]
    out = [
        f"(c) volume vs FFmpeg integrated loudness: sign agrees on {v['n_agree']}/{v['n_counted']} "
        f"pairs moving >= {MIN_LU:g} LU ({_f(v['agree_pct'], '.0f')}%, target >= "
        f"{MIN_VOLUME_AGREEMENT_PCT:g}%: {'PASS' if v['pass'] else 'FAIL'}); dB - LU over "
        f"{d['n']} pairs: median {_f(d['median'], '+.1f')}, min {_f(d['min'], '+.1f')}, max {_f(d['max'], '+.1f')}",
        f"    {'pair':38} {'dB':>6} {'LU':>6}",
    ]
    for r in v["rows"]:
        if r["dimension"] == "volume" or (r["counted"] and not r["agree"]):
            tag = "" if not r["counted"] or r["agree"] else "  DISAGREES"
            why = f"  ({str(r['why'])[:70]})" if r["why"] else ""
            out.append(f"    {r['pair']:38} {_f(r['d_db'])} {_f(r['d_lu'])}{tag}{why}")
    out += [
        f"(d) speed: score change vs text channel (same span) sign agrees on {sp['n_agree']}/{sp['n_checked']}",
        f"    {'pair':38} {'score%':>7} {'text%':>7} {'txt/s%':>7} {'dur%':>7}  spm a->b     text_spm a->b  source",
    ]
    for r in sp["rows"]:
        tag = "  DISAGREES" if r["sign_agrees"] is False else ""
        why = f"  ({str(r['why'])[:60]})" if r["why"] else ""
        out.append(
            f"    {r['pair']:38} {_f(r['d_score_pct'], '+7.0f')} {_f(r['d_text_spm_pct'], '+7.0f')} "
            f"{_f(r['d_text_per_file_s_pct'], '+7.0f')} {_f(r['d_duration_pct'], '+7.0f')}  "
            f"{_rates(r['spm']):11} {_rates(r['text_spm']):13}  {r['source']}{tag}{why}"
        )
    out += [
        f"(e) pitch: score change vs Praat alone / harvest: {pi['n_disagree']}/{pi['n_scored']} scored "
        f"pairs differ by > {PITCH_TOL_ST:g} st from either",
        f"    {'pair':38} {'score':>6} {'praat':>6} {'harv':>6}  (st)",
    ]
    for r in pi["rows"]:
        if r["dimension"] == "pitch" or r["disagrees"]:
            tag = f"  DIFFERS from {'+'.join(r['disagrees'])}" if r["disagrees"] else ""
            why = f"  ({str(r['why'])[:70]})" if r["why"] else ""
            out.append(
                f"    {r['pair']:38} {_f(r['d_score_st'])} {_f(r['d_praat_st'])} "
                f"{_f(r['d_harvest_st'])}{tag}{why}"
            )
    return out
