"""The human-readable card of a dialogue set (``SET_CARD.md``), from its ``set_card.json``."""

from __future__ import annotations

from typing import Any


def card_markdown(card: dict[str, Any]) -> str:
    """Counts per cell, voices, synthesiser, builder version and checksum, as Markdown."""
    rows = "\n".join(
        f"| {c['dim']}{'/' + c['emotion'] if c.get('emotion') else ''} | {c['direction']} "
        f"| {c['lang']} | {c['n']} |"
        for c in card["cells"]
    )
    notes = card.get("voice_notes") or {}
    voices = "\n".join(f"- {v}: {notes[v]}" if notes.get(v) else f"- {v}" for v in card["voices"])
    return (
        f"# Dialogue set {card['set_version']}\n\n"
        f"{card['n_samples']} three-turn samples, synthesised with {card['synthesizer']}, "
        f"builder v{card['builder_version']}.\n\nVoices:\n{voices}\n\n"
        f"Checksum (sha256 of manifest.jsonl): `{card['checksum']}`\n\n"
        f"| dim | direction | lang | n |\n|---|---|---|---|\n{rows}\n"
    )
