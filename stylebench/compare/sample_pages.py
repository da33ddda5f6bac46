"""A comparison's sample lists: one page per (cell, model), opened from its value on compare.html.

A cell's samples (each turn's audio player, text channel and transcript) used to be sections of
compare.html itself. A paper-size comparison (ten models, 43K replies each) would put some 300K
sample rows and 600K audio players into one page, which no browser keeps usable. So each list is
its own small page, ``samples/s-<cell>-<model>.html`` beside compare.html, and a cell's value on
compare.html links to it: the browser loads a list only when it is asked for. Each page is made
as compare.html is (every text escaped, the same Content-Security-Policy, no script); audio is
linked by relative path into the run folders, or embedded as base64 with ``embed_audio``.
"""

from __future__ import annotations

import base64
import functools
import os
import urllib.parse
from collections.abc import Sequence
from html import escape
from pathlib import Path
from typing import Any

from stylebench.atomic import write_text
from stylebench.compare.html_parts import STYLE, sample_section
from stylebench.compare.load import RunData

#: the folder (beside compare.html) that holds the pages
SAMPLES_DIR = "samples"
CSP = "default-src 'none'; media-src data: file:; style-src 'unsafe-inline'"


def page_name(cell: int, model: int) -> str:
    """The page of the ``model``-th model's samples in the ``cell``-th cell, relative to the
    comparison's folder."""
    return f"{SAMPLES_DIR}/s-{cell}-{model}.html"


def cell_name(block: dict[str, Any]) -> str:
    return " ".join(
        x
        for x in (block["dim"], block["direction"], block["lang"], block["pair"], block["group"])
        if x
    )


@functools.lru_cache(maxsize=64)
def _run_from_pages(root: Path, page_dir: Path) -> str:
    """The run folder ``root`` relative to ``page_dir``, once per run (``os.path.relpath`` was
    a tenth of a paper-size comparison, called for each of 43K replies a run)."""
    return os.path.relpath(root, page_dir)


def _audio_src(run: RunData, rel: str, page_dir: Path, embed: bool) -> str | None:
    """The player's source of a reply's audio, from pages in ``page_dir`` (resolved)."""
    path = run.root / rel
    if not rel or not path.is_file():
        return None
    if embed:
        return "data:audio/wav;base64," + base64.b64encode(path.read_bytes()).decode()
    parts = rel.split("/")
    if os.sep == "/" and all(p not in ("", ".", "..") for p in parts):  # a plain path inside
        up = _run_from_pages(run.root, page_dir)
        link = rel if up == "." else f"{up}/{rel}"
    else:  # absolute, dotted, doubled slashes: normalised by relpath
        link = os.path.relpath(path, page_dir)
    return urllib.parse.quote(link.replace(os.sep, "/"))


def sample_pages(
    result: dict[str, Any], runs: Sequence[RunData], out: Path, *, embed_audio: bool = False
) -> dict[str, str]:
    """Every (cell, model) page of ``result``: ``{page_name: html}``."""
    from stylebench.compare.build import shared_samples

    common = shared_samples(runs)
    by_label = {r.label: r for r in common.runs}
    page_dir = (out / SAMPLES_DIR).resolve()  # once: 43K replies a run link from it
    pages = {}
    for i, b in enumerate(result["cells"]):
        key = tuple(b[k] for k in ("dim", "direction", "lang", "pair", "group"))
        for j, m in enumerate(result["models"]):
            if b["models"].get(m) is None:
                continue
            body = sample_section(
                m,
                cell_name(b),
                b,
                by_label[m],
                common.outcomes[m].get(key, {}),
                lambda run, rel: _audio_src(run, rel, page_dir, embed_audio),
            )
            pages[page_name(i, j)] = (
                f'<!doctype html><html lang="en"><head><meta charset="utf-8">'
                f'<meta http-equiv="Content-Security-Policy" content="{CSP}">'
                f"<title>{escape(m)} · {escape(cell_name(b))}</title><style>{STYLE}</style>"
                f'</head><body><p><a href="../compare.html">back to the comparison</a></p>'
                f"{body}</body></html>\n"
            )
    return pages


def write_pages(folder: Path, pages: dict[str, str]) -> None:
    """Write ``pages`` into ``folder`` (each atomically) and remove the pages of an earlier
    comparison into the same folder that this one does not have."""
    for name, html in pages.items():
        write_text(folder / name, html)
    keep = {Path(n).name for n in pages}
    for old in (folder / SAMPLES_DIR).glob("s-*.html"):
        if old.name not in keep:
            old.unlink()
