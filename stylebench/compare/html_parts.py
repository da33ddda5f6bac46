"""Pieces of the comparison's pages: a cell's samples with audio (one page each:
:mod:`stylebench.compare.sample_pages`), style and script (its sortable tables:
:mod:`stylebench.report.html_table`).

All text goes through :func:`html.escape`; ids are made here from counters, never from text.
"""

from __future__ import annotations

from collections.abc import Callable
from html import escape
from typing import TYPE_CHECKING, Any, Protocol, TypeVar

from stylebench.records import TRANSCRIPTS

if TYPE_CHECKING:
    from stylebench.commands.scored import ScoredRun


class SampleRun(Protocol):
    """What a cell's samples are read from: a run's scores (its replies and transcripts).
    A comparison's ``RunData`` is one; so is a run's own page's view of its run."""

    @property
    def scored(self) -> ScoredRun: ...


R = TypeVar("R", bound=SampleRun)

#: the pages' Content-Security-Policy: nothing from the network; images inline, audio inline or
#: from the local files beside the page
CSP = (
    "default-src 'none'; img-src data:; media-src data: file:; "
    "style-src 'unsafe-inline'; script-src 'unsafe-inline'"
)

STYLE = (
    "body{font-family:sans-serif;margin:1.5em;max-width:110em}table{border-collapse:collapse;"
    "margin:.5em 0}td,th{border:1px solid #ccc;padding:.2em .5em;text-align:left;font-size:90%}"
    "th{cursor:pointer;background:#f3f3f3}.plots{display:flex;gap:1em;align-items:flex-start}"
    "figure{margin:0;flex:1 1 0;min-width:0}img{width:100%}.valid{color:#070}.invalid{color:#a00}"
)
#: sorts a table by the clicked column's data-v values (numbers numerically, missing last)
SCRIPT = """
document.querySelectorAll('table.sortable th').forEach(function (th, _) {
  th.addEventListener('click', function () {
    var table = th.closest('table'), body = table.tBodies[0];
    var col = Array.prototype.indexOf.call(th.parentNode.children, th);
    var asc = th.getAttribute('data-dir') !== 'asc';
    table.querySelectorAll('th').forEach(function (h) { h.removeAttribute('data-dir'); });
    th.setAttribute('data-dir', asc ? 'asc' : 'desc');
    var rows = Array.prototype.slice.call(body.rows);
    function key(r) { var v = r.cells[col].getAttribute('data-v'); return v; }
    rows.sort(function (a, b) {
      var x = key(a), y = key(b);
      if (x === '' || x === null) return 1;
      if (y === '' || y === null) return -1;
      var nx = Number(x), ny = Number(y);
      var c = (!isNaN(nx) && !isNaN(ny)) ? nx - ny : (x < y ? -1 : x > y ? 1 : 0);
      return asc ? c : -c;
    });
    rows.forEach(function (r) { body.appendChild(r); });
  });
});
"""


def sample_section(
    model: str,
    cell_name: str,
    block: dict[str, Any],
    run: R,
    rows: dict[str, Any],
    audio_src: Callable[[R, str], str | None],
    anchor: str | None = None,
) -> str:
    """The samples of one model in one cell (``rows``: sample id -> its
    :class:`~stylebench.compare.samples.PairOutcome`): valid or not, the signed change, and each
    turn's audio, text channel and transcript. With ``anchor``: a section of a longer page (a
    run's report.html) with that id; without: the heading of a page of its own."""
    turns = [int(x) for x in block["pair"].split("-")]
    title = f"{escape(model)} · {escape(cell_name)}"
    head = f'<section id="{escape(anchor)}"><h3>{title}</h3>' if anchor else f"<h1>{title}</h1>"
    out = [
        f"{head}<table><thead><tr>"
        "<th>sample</th><th>outcome</th><th>signed change</th>"
        + "".join(f"<th>turn {t}</th>" for t in turns)
        + "</tr></thead><tbody>"
    ]
    for sid in sorted(rows):
        o = rows[sid]
        verdict = (
            ("valid", "valid")
            if o.ok and o.valid
            else ("invalid", "not valid")
            if o.ok
            else ("invalid", "failed")
        )
        tds = [
            f"<td>{escape(sid)}</td>",
            f'<td class="{verdict[0]}">{verdict[1]}</td>',
            f"<td>{'–' if o.signed is None else f'{o.signed:.2f}'}</td>",
        ]
        for t in turns:
            rep = run.scored.replies.get((sid, t))
            tr = run.scored.records.of(TRANSCRIPTS).get((sid, t))
            src = audio_src(run, getattr(rep, "audio", "") or "") if rep is not None else None
            player = (
                f'<audio controls preload="none" src="{escape(src, quote=True)}"></audio>'
                if src
                else "no audio"
            )
            text = getattr(rep, "text", "") if rep is not None else ""
            heard = (
                getattr(tr, "text", "")
                if tr is not None and getattr(tr, "status", "") == "ok"
                else ""
            )
            tds.append(
                f"<td>{player}<div>text: {escape(text[:500])}</div>"
                + (f"<div>heard: {escape(heard[:500])}</div>" if heard else "")
                + "</td>"
            )
        out.append("<tr>" + "".join(tds) + "</tr>")
    out.append("</tbody></table>" + ("</section>" if anchor else ""))
    return "".join(out)
