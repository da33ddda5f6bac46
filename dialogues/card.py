"""The human-readable card of a dialogue set (``SET_CARD.md``), from its ``set_card.json``."""

from __future__ import annotations

from typing import Any


def card_markdown(card: dict[str, Any]) -> str:
    """Counts per cell, voices, synthesiser, builder version and checksum, as Markdown."""
    rows = "\n".join(
        f"| {c['dim']}{'/' + c['emotion'] if c.get('emotion') else ''} | {c['direction']} "
        f"| {c['lang']} | {c['n']} | {c.get('items', '-')} | {_uses(c)} |"
        for c in card["cells"]
    )
    notes = card.get("voice_notes") or {}
    voices = "\n".join(f"- {v}: {notes[v]}" if notes.get(v) else f"- {v}" for v in card["voices"])
    spoken = card.get("synthesizers") or {}
    engines = "".join(f"- {lang}: {what}\n" for lang, what in spoken.items())
    return (
        f"# Dialogue set {card['set_version']}\n\n"
        f"{card['n_samples']} three-turn samples, synthesised with {card['synthesizer']}, "
        f"builder v{card['builder_version']}.\n\n"
        + (f"Synthesisers:\n{engines}\n" if engines else "")
        + f"Voices:\n{voices}\n\n"
        f"Checksum (sha256 of manifest.jsonl): `{card['checksum']}`\n\n"
        + (f"Content reuse: {card['reuse_rule']}.\n\n" if card.get("reuse_rule") else "")
        + "| dim | direction | lang | n | items | uses per item |\n|---|---|---|---|---|---|\n"
        f"{rows}\n" + intelligibility_markdown(card)
    )


def _uses(cell: dict[str, Any]) -> str:
    """How many times one item is used in the cell: ``3`` or ``3-4`` (``-`` when not stated)."""
    if "uses_min" not in cell:
        return "-"
    lo, hi = cell["uses_min"], cell["uses_max"]
    return str(lo) if lo == hi else f"{lo}-{hi}"


def _num(x: float | None, fmt: str = ".3f") -> str:
    return "-" if x is None else format(x, fmt)


def intelligibility_markdown(card: dict[str, Any]) -> str:
    """The intelligibility check's table (per voice: ASR error rate, CER, DNSMOS OVRL), or ""
    for a set built without the check."""
    check = card.get("intelligibility")
    if not check:
        return ""
    bounds = ", ".join(f"{lang} {b}" for lang, b in check["bounds"].items())
    rows = "\n".join(
        f"| {v} | {r['lang']} | {r['n_turns']} | {r['measure']} | {_num(r['mean'])} "
        f"| {_num(r['median'])} | {_num(r['max'])} | {_num(r.get('cer_mean'))} "
        f"| {_num(r.get('dnsmos_ovrl_mean'), '.2f')} | {r['n_resynthesised']} "
        f"| {r.get('n_revoiced', 0)} |"
        for v, r in check["per_voice"].items()
    )
    return (
        f"\n## Intelligibility\n\nEvery user turn transcribed by {check['asr']} (language "
        f"fixed); bound on the error rate: {bounds} (a turn over it is synthesised again, then "
        f"spoken by the next voice, then refused). DNSMOS: {check['quality'] or 'not measured (speechmos not installed)'}. "
        "Per turn: intelligibility.jsonl.\n\n"
        "| voice | lang | turns | measure | mean | median | max | CER (zh) | DNSMOS OVRL "
        "| resynthesised | moved here |\n|---|---|---|---|---|---|---|---|---|---|---|\n"
        f"{rows}\n"
    )
