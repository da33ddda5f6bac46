"""The listening-test page and the rating CSV format shared by the page, the sheet and the import.

The page is one HTML file with no external resources: the items travel in a
``<script type="application/json">`` block whose ``<``, ``>`` and ``&`` are written as ``\\u003c``
etc., so no text can close the block; the script builds the page with ``textContent`` and
attributes only (never ``innerHTML``), so a transcript holding markup is shown as text. Answers are
kept in ``localStorage`` under ``stylebench-ratings:<test_id>:<rater_id>`` and downloaded as a CSV
through a Blob link. CSV text cells that a spreadsheet would read as a formula (leading ``=``,
``+``, ``-``, ``@``, tab or carriage return) are prefixed with ``'``, by Python and by the page.
"""

from __future__ import annotations

import base64
import csv
import html
import io
import json
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

#: columns of a rating sheet and of the CSV the page downloads (one row per item)
COLUMNS = (
    "test_id",
    "rater_id",
    "position",
    "item_id",
    "question",
    "scale",
    "audio_1",
    "audio_2",
    "audio_3",
    "text_1",
    "text_2",
    "text_3",
    "choice_1_2",
    "choice_2_3",
    "intensity_1",
    "intensity_2",
    "intensity_3",
)
ANSWER_COLUMNS = ("choice_1_2", "choice_2_3", "intensity_1", "intensity_2", "intensity_3")
_FORMULA_START = ("=", "+", "-", "@", "\t", "\r")


def safe_cell(value: Any) -> str:
    """A CSV cell that spreadsheets show as text (formula-looking text gets a leading ``'``)."""
    s = "" if value is None else str(value)
    return "'" + s if s.startswith(_FORMULA_START) else s


def csv_text(rows: Iterable[Mapping[str, Any]]) -> str:
    """Rows (dicts over :data:`COLUMNS`) as CSV text with a header, cells made safe."""
    buf = io.StringIO()
    w = csv.DictWriter(buf, fieldnames=COLUMNS, lineterminator="\r\n", extrasaction="ignore")
    w.writeheader()
    for row in rows:
        w.writerow({c: safe_cell(row.get(c, "")) for c in COLUMNS})
    return buf.getvalue()


def script_json(data: Any) -> str:
    """JSON that is safe inside a ``<script>`` element (no ``<``, ``>``, ``&`` or line separators)."""
    text = json.dumps(data, ensure_ascii=False, sort_keys=True)
    for ch, esc in (
        ("<", "\\u003c"),
        (">", "\\u003e"),
        ("&", "\\u0026"),
        ("\u2028", "\\u2028"),
        ("\u2029", "\\u2029"),
    ):
        text = text.replace(ch, esc)
    return text


def render_page(
    test_id: str, rater_id: str, items: Sequence[Any], audio_dir: Path, *, embed_audio: bool
) -> str:
    """The self-contained page of one rater, items in the order given.

    Audio is referenced as ``audio/<name>`` next to the page, or embedded as a base64
    ``data:audio/wav`` URI when ``embed_audio`` is set.
    """

    def src(name: str) -> str:
        if not embed_audio:
            return "audio/" + name
        return "data:audio/wav;base64," + base64.b64encode((audio_dir / name).read_bytes()).decode()

    data = {
        "test_id": test_id,
        "rater_id": rater_id,
        "columns": list(COLUMNS),
        "items": [
            {
                "id": it.item_id,
                "question": it.question,
                "scale": it.scale,
                "turns": [
                    {"src": src(t.audio), "file": "audio/" + t.audio, "text": t.text}
                    for t in it.turns
                ],
            }
            for it in items
        ],
    }
    title = html.escape(f"Listening test {test_id}, rater {rater_id}")
    return (
        _TEMPLATE.replace("@TITLE@", title)
        .replace("@DATA@", script_json(data))
        .replace("@SCRIPT@", _SCRIPT)
    )


_TEMPLATE = """<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta http-equiv="Content-Security-Policy" content="default-src 'none'; media-src 'self' data: file:; style-src 'unsafe-inline'; script-src 'unsafe-inline'">
<title>@TITLE@</title>
<style>
body { font-family: sans-serif; max-width: 52rem; margin: 1rem auto; padding: 0 1rem; }
section.item { border: 1px solid #999; border-radius: 6px; padding: 0.5rem 1rem; margin: 1rem 0; }
section.item.done { border-color: #2a7; }
.turn { margin: 0.5rem 0; } .text { color: #333; font-style: italic; }
fieldset { border: none; padding: 0.2rem 0; } legend { font-weight: bold; }
label { margin-right: 0.8rem; } #bar { position: sticky; top: 0; background: #fff; padding: 0.5rem 0; }
</style>
</head>
<body>
<h1>@TITLE@</h1>
<p>Each item plays three turns of one conversation. Listen to all three turns first.
Then, for turns 1 and 2 and for turns 2 and 3, choose the turn that shows the asked quality more
strongly. Pick one even when the two sound alike. Finally rate every turn from 1 to 5.</p>
<p>Your answers are saved in this browser as you go, so you can close the page and come back.
When you have finished, press <b>Download my answers</b> and send the CSV file to the study team.</p>
<div id="bar"><span id="progress"></span> <button id="download" type="button">Download my answers</button>
<span id="status"></span></div>
<main id="items"></main>
<script id="test-data" type="application/json">@DATA@</script>
<script>@SCRIPT@</script>
</body>
</html>
"""

_SCRIPT = r"""
"use strict";
(function () {
  const data = JSON.parse(document.getElementById("test-data").textContent);
  const storeKey = "stylebench-ratings:" + data.test_id + ":" + data.rater_id;
  const FIELDS = ["choice_1_2", "choice_2_3", "intensity_1", "intensity_2", "intensity_3"];
  let answers = {};
  try { answers = JSON.parse(window.localStorage.getItem(storeKey) || "{}") || {}; }
  catch (e) { answers = {}; }
  function status(msg) { document.getElementById("status").textContent = msg; }
  function save() {
    try { window.localStorage.setItem(storeKey, JSON.stringify(answers)); }
    catch (e) { status("This browser cannot keep your progress: download your answers before closing."); }
  }
  function el(tag, attrs, text) {
    const node = document.createElement(tag);
    for (const k of Object.keys(attrs || {})) { node.setAttribute(k, attrs[k]); }
    if (text !== undefined) { node.textContent = text; }
    return node;
  }
  function complete(id) {
    const a = answers[id] || {};
    return FIELDS.every(function (f) { return a[f] !== undefined && a[f] !== ""; });
  }
  function update() {
    let done = 0;
    for (const item of data.items) {
      const ok = complete(item.id);
      if (ok) { done += 1; }
      document.getElementById("item-" + item.id).classList.toggle("done", ok);
    }
    document.getElementById("progress").textContent =
      done + " of " + data.items.length + " items complete";
  }
  function group(item, field, legend, options) {
    const fs = el("fieldset", {"data-field": field});
    fs.appendChild(el("legend", {}, legend));
    const current = (answers[item.id] || {})[field];
    for (const opt of options) {
      const label = el("label");
      const input = el("input", {type: "radio", name: item.id + "-" + field, value: opt[0]});
      input.checked = current === opt[0];
      input.addEventListener("change", function () {
        answers[item.id] = answers[item.id] || {};
        answers[item.id][field] = opt[0];
        save();
        update();
      });
      label.appendChild(input);
      label.appendChild(document.createTextNode(" " + opt[1]));
      fs.appendChild(label);
    }
    return fs;
  }
  const main = document.getElementById("items");
  const scale = [["1", "1"], ["2", "2"], ["3", "3"], ["4", "4"], ["5", "5"]];
  data.items.forEach(function (item, i) {
    const sec = el("section", {"class": "item", id: "item-" + item.id, "data-item": item.id});
    sec.appendChild(el("h2", {}, "Item " + (i + 1) + " of " + data.items.length));
    sec.appendChild(el("p", {"class": "question"}, item.question));
    item.turns.forEach(function (turn, k) {
      const div = el("div", {"class": "turn"});
      div.appendChild(el("h3", {}, "Turn " + (k + 1)));
      div.appendChild(el("audio", {controls: "", preload: "none", src: turn.src}));
      div.appendChild(el("p", {"class": "text"}, turn.text));
      div.appendChild(group(item, "intensity_" + (k + 1), item.scale, scale));
      sec.appendChild(div);
    });
    sec.appendChild(group(item, "choice_1_2", "Turns 1 and 2: " + item.question,
                          [["1", "Turn 1"], ["2", "Turn 2"]]));
    sec.appendChild(group(item, "choice_2_3", "Turns 2 and 3: " + item.question,
                          [["2", "Turn 2"], ["3", "Turn 3"]]));
    main.appendChild(sec);
  });
  function cell(value) {
    let s = value === undefined || value === null ? "" : String(value);
    if (/^[=+\-@\t\r]/.test(s)) { s = "'" + s; }
    if (/[",\r\n]/.test(s)) { s = '"' + s.replace(/"/g, '""') + '"'; }
    return s;
  }
  function csv() {
    const lines = [data.columns.map(cell).join(",")];
    data.items.forEach(function (item, i) {
      const a = answers[item.id] || {};
      const row = {test_id: data.test_id, rater_id: data.rater_id, position: i + 1,
                   item_id: item.id, question: item.question, scale: item.scale};
      item.turns.forEach(function (t, k) { row["audio_" + (k + 1)] = t.file; row["text_" + (k + 1)] = t.text; });
      for (const f of FIELDS) { row[f] = a[f]; }
      lines.push(data.columns.map(function (c) { return cell(row[c]); }).join(","));
    });
    return lines.join("\r\n") + "\r\n";
  }
  document.getElementById("download").addEventListener("click", function () {
    const blob = new Blob([csv()], {type: "text/csv;charset=utf-8"});
    const url = URL.createObjectURL(blob);
    const a = el("a", {href: url, download: "ratings_" + data.test_id + "_" + data.rater_id + ".csv"});
    document.body.appendChild(a);
    a.click();
    a.remove();
    setTimeout(function () { URL.revokeObjectURL(url); }, 10000);
    let missing = 0;
    for (const item of data.items) { if (!complete(item.id)) { missing += 1; } }
    status(missing ? missing + " items are not complete yet; you can continue and download again." : "Downloaded.");
  });
  update();
})();
"""
