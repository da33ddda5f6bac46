"""``stylebench measure FILE...``: measure audio files made anywhere, as a run measures replies."""

from __future__ import annotations

import sys
from collections.abc import Mapping
from typing import Any

import click

from stylebench.cli.common import Args, argument, config_options, option, overrides
from stylebench.cli.rows import (
    chosen_format,
    counts_line,
    csv_text,
    emit,
    json_text,
    num,
    out_option,
    row_format_option,
    text_table,
)
from stylebench.records import LANGS

HELP = (
    "measure audio files: pitch, RMS volume, speaking rate, speech quality, speech span, "
    "transcript, flags (--loudness: integrated loudness, LUFS)"
)
#: the transcript as the table shows it
TRANSCRIPT_CHARS = 40


def params() -> list[Any]:
    from stylebench.commands.files import MEASURE_SECTIONS

    return [
        argument(
            "files",
            nargs=-1,
            required=True,
            help="audio files (wav, flac, ogg, mp3: what libsndfile reads; any sample rate)",
        ),
        option(
            "--lang",
            type=click.Choice(LANGS),
            default="en",
            help="language spoken in the files: the ASR's and the syllable count's (default en)",
        ),
        row_format_option(),
        out_option(),
        option(
            "--jobs",
            type=int,
            default=1,
            help="files measured at once, one process each (default 1)",
        ),
        option("--config", help="TOML or JSON file of settings (CLI flags win)"),
        *setting_options(MEASURE_SECTIONS),
    ]


def setting_options(sections: tuple[str, ...]) -> list[Any]:
    """The run settings that apply to files (``measure``, ``pairs``): those of ``sections``
    that files can use, and the length guard ``--max-reply-s``."""
    from stylebench.commands.files import IGNORED, RUN_SETTINGS

    own = [o for o in config_options("score", sections) if o.name not in IGNORED]
    return own + [o for o in config_options("run") if o.name in RUN_SETTINGS]


def given_settings(args: Args) -> dict[str, Any]:
    """The settings of :func:`setting_options` given on the command line, by field name."""
    from stylebench.commands.files import RUN_SETTINGS

    run = {k: v for k, v in overrides(args, "run").items() if k in RUN_SETTINGS}
    return {**overrides(args, "score"), **run}


def table_columns(loudness: bool = False) -> list[tuple[str, Any]]:
    """The table's columns; ``loudness`` adds the integrated loudness (``--loudness``)."""
    from stylebench.commands.files import file_dims
    from stylebench.metrics.dims.base import dimension

    cols: list[tuple[str, Any]] = [
        ("file", lambda r: r["file"]),
        ("lang", lambda r: r["lang"]),
        ("dur s", lambda r: num(r["duration_s"], 2)),
        ("speech s", lambda r: num(r["speech_span_s"], 2)),
    ]
    for d in file_dims():
        if d == "volume":
            cols.append(("RMS volume dBFS", lambda r: num(r["volume_dbfs"], 1)))
            if loudness:
                cols.append(("loudness LUFS", lambda r: num(r["loudness_lufs"], 1)))
            continue
        unit = {"pitch": "Hz", "speed": "syl/min"}.get(d, dimension(d).unit)
        cols.append((f"{d} {unit}", lambda r, d=d: num(r[d], 1)))
    cols += [
        ("OVRL", lambda r: num(r["dnsmos_ovrl"], 2)),
        ("transcript", lambda r: _cut(r["transcript"])),
        ("flags", lambda r: ", ".join(f.split(":")[0] for f in r["flags"]) or "-"),
        ("unscored", unscored_cell),
    ]
    return cols


def _cut(text: str) -> str:
    text = " ".join(text.split())
    return text if len(text) <= TRANSCRIPT_CHARS else text[: TRANSCRIPT_CHARS - 3] + "..."


def unscored_cell(row: Mapping[str, Any]) -> str:
    """The row's unscored dimensions, those with one reason together (``pitch, volume: ...``)."""
    from stylebench.commands.files import file_dims, short_reason

    if row["status"] != "ok":
        return "not measured: " + short_reason("features: " + row["error"]).removeprefix(
            "features: "
        )
    by_reason: dict[str, list[str]] = {}
    for d in file_dims():
        if row[f"{d}_unscored"]:
            by_reason.setdefault(short_reason(row[f"{d}_unscored"]), []).append(d)
    return "; ".join(f"{', '.join(ds)}: {why}" for why, ds in by_reason.items()) or "-"


def summary(rows: list[dict[str, Any]]) -> str:
    """Files measured, not measured, and unscored per dimension by reason."""
    from stylebench.commands.files import unscored_counts

    bad = sum(r["status"] != "ok" for r in rows)
    lines = [f"{len(rows)} files: {len(rows) - bad} measured, {bad} not measured"]
    lines.append(quality_line(rows))
    for d, counts in unscored_counts(rows).items():
        n = sum(counts.values())
        lines.append(
            f"{d}: {len(rows) - n} scored, {n} unscored"
            + (f" ({counts_line(counts)})" if counts else "")
        )
    return "\n".join(lines) + "\n"


def quality_line(rows: list[dict[str, Any]]) -> str:
    """Mean DNSMOS SIG/BAK/OVRL over the files that have one, or why none has."""
    q = [r for r in rows if r.get("dnsmos_ovrl") is not None]
    if not q:
        from stylebench.metrics.quality import MISSING, available

        why = "--no-quality, or no file of 0.5 s or more" if available() else MISSING
        return f"speech quality (DNSMOS): not measured: {why}"
    mean = {k: sum(r[f"dnsmos_{k}"] for r in q) / len(q) for k in ("sig", "bak", "ovrl")}
    return (
        f"speech quality (DNSMOS P.835, 1-5, mean of {len(q)}/{len(rows)} files): "
        f"SIG {mean['sig']:.2f}, BAK {mean['bak']:.2f}, OVRL {mean['ovrl']:.2f}"
    )


def main(args: Args) -> int:
    from stylebench.commands.files import measure_rows, row_columns

    fmt = chosen_format(args.format, args.out)
    rows = measure_rows(
        list(args.files),
        given_settings(args),
        config_file=args.config,
        lang=args.lang,
        jobs=args.jobs,
        progress=not args.no_progress,
    )
    if fmt == "csv":
        text = csv_text(rows, row_columns())
    elif fmt == "json":
        text = json_text(rows)
    else:
        loud = bool(given_settings(args).get("loudness")) or any(
            r["loudness_lufs"] is not None for r in rows
        )
        text = text_table(table_columns(loud), rows) + "\n" + summary(rows)
    emit(text, args.out, "measurements")
    if fmt != "table" or args.out:
        sys.stderr.write(summary(rows))
    return 0
