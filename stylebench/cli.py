"""The ``stylebench`` command line. Logging is configured here and nowhere else."""

from __future__ import annotations

import argparse
import json
import logging
import sys
from pathlib import Path
from typing import Any

from stylebench import __version__
from stylebench.ratings_cli import add_ratings_parsers, cmd_export_ratings, cmd_import_ratings

log = logging.getLogger("stylebench")


def _measure_flags(p: argparse.ArgumentParser) -> None:
    g = p.add_argument_group("measurement and scoring (default: from the run, else built-in)")
    g.add_argument("--asr", help="ASR backend: faster-whisper (default), openai-whisper, none")
    g.add_argument(
        "--asr-model", help="ASR model: base (offline default), tiny.en, large-v3, or a path"
    )
    g.add_argument("--vad", choices=["silero", "energy"], help="speech-span detector")
    g.add_argument(
        "--pitch-stat",
        choices=["guarded_mean", "mean", "median"],
        help="which F0 statistic is the pitch score (default guarded_mean)",
    )
    g.add_argument(
        "--speed-source",
        choices=["auto", "asr", "text", "nuclei"],
        help="speed estimate: auto (ASR, or the text channel when ASR is unreliable), asr, text, nuclei",
    )
    g.add_argument(
        "--transcript-max-error", type=float, metavar="RATE",
        help="largest WER (en) / CER (zh) of a transcript against the model's text channel at "
        "which the transcript is trusted for speed and judging (default 0.3)",
    )  # fmt: skip
    g.add_argument("--pitch-st", type=float, help="pitch threshold in semitones (default 1)")
    g.add_argument("--volume-db", type=float, help="volume threshold in dB (default 1)")
    g.add_argument("--speed-pct", type=float, help="speed threshold in percent (default 5)")
    g.add_argument("--n-boot", type=int, help="bootstrap resamples for CIs (default 2000)")
    g.add_argument("--strict", action="store_true", default=None, help="stop at the first error")
    e = p.add_argument_group("emotion scores (docs/metrics.md, Emotion)")
    e.add_argument("--prosody-delta", type=float, help="prosodic index threshold (default 1.0 JND)")
    e.add_argument(
        "--emotion-probe",
        choices=["emotion2vec", "none"],
        help="automatic emotion probe (default none: no weights offline; needs [emotion])",
    )
    e.add_argument("--probe-model", help="probe hub id or folder (iic/emotion2vec_plus_large)")
    e.add_argument("--probe-delta", type=float, help="probe probability threshold (default 0.05)")
    j = p.add_argument_group("relevance judge and gate (see docs/judge-backends.md)")
    j.add_argument("--judge", help="offline (default), openai, transformers, vllm or none")
    j.add_argument("--judge-model", help="judge model: hub id, local path or served model name")
    j.add_argument("--judge-url", help="OpenAI-compatible base URL, e.g. http://127.0.0.1:8000/v1")
    j.add_argument(
        "--judge-input", choices=["auto", "transcript", "text"],
        help="what the judge reads: ASR transcripts of the replies, the models' text channel, or "
        "auto (default: transcripts, except samples whose transcripts disagree with the text "
        "channel by more than --transcript-max-error)",
    )  # fmt: skip
    j.add_argument("--judge-prompt", metavar="DIR", help="folder with your srd.txt and mrd.txt")
    j.add_argument("--judge-prompt-srd", metavar="PATH", help="your SRD prompt file")
    j.add_argument("--judge-prompt-mrd", metavar="PATH", help="your MRD prompt file")
    j.add_argument(
        "--judge-arg",
        action="append",
        metavar="KEY=VALUE",
        help="judge backend option, e.g. concurrency=4, timeout_s=30, temperature=0 (repeatable)",
    )
    j.add_argument(
        "--judge-cache", action=argparse.BooleanOptionalAction, default=None,
        help="reuse cached verdicts (default on; ~/.cache/stylebench/judge_cache.sqlite)",
    )  # fmt: skip
    j.add_argument("--mrd-threshold", type=float, help="eligible when MRD > this %% (default 40)")
    j.add_argument(
        "--filter-mrd", action=argparse.BooleanOptionalAction, default=None,
        help="also leave samples whose MRD verdict is not relevant out of style scores",
    )  # fmt: skip


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="stylebench", description=__doc__)
    p.add_argument("--version", action="version", version=f"stylebench {__version__}")
    p.add_argument("-v", "--verbose", action="store_true", help="debug logging")
    p.add_argument("--no-progress", action="store_true", help="hide progress bars")
    sub = p.add_subparsers(dest="command", required=True)

    r = sub.add_parser("run", help="run a model on a dialogue set and score it (resumable)")
    r.add_argument("--model", help="model name (see `stylebench models`); default reference")
    r.add_argument(
        "--model-arg",
        action="append",
        metavar="KEY=VALUE",
        help="argument for the model wrapper, e.g. path=/weights (repeatable)",
    )
    r.add_argument(
        "--dim", help="speed, volume, pitch, emotion, or all (the acoustic dims; default pitch)"
    )
    r.add_argument("--lang", help="en, zh or all (default all)")
    r.add_argument("--limit", type=int, help="at most N samples per (dim, direction, lang) cell")
    r.add_argument("--dialogues", help="dialogue set folder (default: the built-in set)")
    r.add_argument("--out", help="parent folder of run folders (default runs)")
    r.add_argument("--run-id", help="run folder name (default: model-dim-lang-setchecksum)")
    r.add_argument("--config", help="TOML or JSON file of run settings (CLI flags win)")
    r.add_argument("--seed", type=int, help="seed for decoding and bootstrap")
    r.add_argument("--temperature", type=float)
    r.add_argument(
        "--worker-python",
        metavar="PYTHON",
        help="run the model in that environment's interpreter as a worker (see docs/models.md#worker)",
    )
    r.add_argument(
        "--turn-timeout-s",
        type=float,
        help="with --worker-python: seconds per turn before the worker is killed and restarted "
        "(default 600)",
    )
    r.add_argument("--format", choices=["md", "json", "csv"], default="md", help="printed report")
    _measure_flags(r)

    s = sub.add_parser("score", help="re-transcribe/measure/score a run without calling the model")
    s.add_argument("run_dir")
    s.add_argument("--format", choices=["md", "json", "csv"], default="md")
    _measure_flags(s)

    rp = sub.add_parser("report", help="print a run's report from its stored records")
    rp.add_argument("run_dir")
    rp.add_argument("--format", choices=["md", "json", "csv"], default="md")

    m = sub.add_parser("models", help="list model wrappers and whether they can run here")
    m.add_argument("--worker-python", metavar="PYTHON", help="check inside that environment")

    b = sub.add_parser("build-dialogues", help="synthesise a new dialogue set")
    b.add_argument("--out", required=True, help="new folder for the set")
    b.add_argument("--per-cell", type=int, default=6, help="samples per (dim, direction, lang)")
    b.add_argument("--dims", default="speed,volume,pitch", help="comma list; may include emotion")
    b.add_argument("--emotions", help="emotion subset, e.g. happy,sad (default: all six)")
    b.add_argument("--synth", default="espeak-ng", help="synthesiser: espeak-ng or cosyvoice2")
    b.add_argument(
        "--synth-arg",
        action="append",
        metavar="KEY=VALUE",
        help="synthesiser argument: model=, voices= (voices file), instruct=, fp16=, and "
        "python=/env/bin/python to run it in its own environment (repeatable)",
    )
    b.add_argument("--langs", default="en,zh")
    b.add_argument("--voices-per-lang", type=int, default=4)
    b.add_argument("--seed", type=int, default=0)
    b.add_argument("--jobs", type=int, default=4, help="parallel synthesis threads")
    add_ratings_parsers(sub)
    return p


_CONFIG_FLAGS = (
    "model",
    "dim",
    "lang",
    "limit",
    "dialogues",
    "out",
    "run_id",
    "seed",
    "temperature",
    "asr",
    "asr_model",
    "vad",
    "pitch_stat",
    "speed_source",
    "transcript_max_error",
    "pitch_st",
    "volume_db",
    "speed_pct",
    "n_boot",
    "strict",
    "judge",
    "judge_model",
    "judge_url",
    "judge_prompt",
    "judge_prompt_srd",
    "judge_prompt_mrd",
    "judge_cache",
    "judge_input",
    "mrd_threshold",
    "filter_mrd",
    "worker_python",
    "turn_timeout_s",
    "prosody_delta",
    "emotion_probe",
    "probe_model",
    "probe_delta",
)


def _overrides(args: argparse.Namespace) -> dict[str, Any]:
    from stylebench.config import parse_model_args

    out = {k: getattr(args, k) for k in _CONFIG_FLAGS if getattr(args, k, None) is not None}
    if getattr(args, "model_arg", None):
        out["model_args"] = parse_model_args(args.model_arg)
    if getattr(args, "judge_arg", None):
        out["judge_args"] = parse_model_args(args.judge_arg)
    return out


def _print_report(report: dict[str, Any], fmt: str) -> None:
    from stylebench import report as rp

    text = {"md": rp.to_markdown, "json": rp.to_json, "csv": rp.to_csv}[fmt](report)
    sys.stdout.write(text if text.endswith("\n") else text + "\n")


def cmd_run(args: argparse.Namespace) -> int:
    from stylebench.config import resolve_config
    from stylebench.pipeline import run

    cfg = resolve_config(_overrides(args), args.config)
    result = run(cfg, progress=not args.no_progress)
    _print_report(result.report, args.format)
    log.info("run folder: %s", result.store.root)
    print(f"[stylebench] run folder: {result.store.root}", file=sys.stderr)
    return 0


def cmd_score(args: argparse.Namespace) -> int:
    from stylebench.pipeline import rescore

    result = rescore(args.run_dir, _overrides(args), progress=not args.no_progress)
    _print_report(result.report, args.format)
    return 0


def cmd_report(args: argparse.Namespace) -> int:
    from stylebench.pipeline import report_only

    _print_report(report_only(args.run_dir).report, args.format)
    return 0


def cmd_models(args: argparse.Namespace) -> int:
    from stylebench.model_wrappers.registry import MODELS, model_status

    if args.worker_python:
        from stylebench.model_wrappers.worker import worker_statuses

        statuses = worker_statuses(args.worker_python)
    else:
        statuses = {name: model_status(name) for name in MODELS}
    for name, (status, detail) in statuses.items():
        print(f"{name:<20} {status:<18} {detail}")
    return 0


def cmd_build(args: argparse.Namespace) -> int:
    from stylebench.dialogues.builder import BuildSpec, build_set

    spec = BuildSpec(
        dims=tuple(args.dims.split(",")),
        langs=tuple(args.langs.split(",")),
        per_cell=args.per_cell,
        voices_per_lang=args.voices_per_lang,
        seed=args.seed,
        synth=args.synth,
        **({"emotions": tuple(args.emotions.split(","))} if args.emotions else {}),
    )
    synth, voices = _make_synth(args.synth, args.synth_arg, spec.langs)
    card = build_set(Path(args.out), spec, synth, voices, jobs=args.jobs)
    print(json.dumps({k: card[k] for k in ("set_version", "n_samples", "checksum")}, indent=2))
    return 0


def _make_synth(name: str, items: list[str] | None, langs: tuple[str, ...]) -> tuple[Any, Any]:
    """The synthesiser (in process, or in a worker env with ``python=``) and its voices."""
    from stylebench.config import parse_model_args
    from stylebench.synth.registry import SYNTHESIZERS

    kwargs = parse_model_args(items)
    python = kwargs.pop("python", None)
    SYNTHESIZERS[name]  # unknown names fail here with suggestions
    if name == "espeak-ng" and kwargs.get("voices"):
        raise ValueError("espeak-ng has built-in voices; --synth-arg voices= is for cosyvoice2")
    if "voices" in kwargs:  # speaker prompts (cosyvoice2): voices file -> Voice per language
        from stylebench.synth.cosyvoice import load_voices_file, voices_by_lang

        kwargs["voices"] = str(Path(kwargs["voices"]).resolve())
        voices = voices_by_lang(load_voices_file(kwargs["voices"]))
    elif name == "espeak-ng":
        from stylebench.synth.espeak import voices_for

        voices = {lang: voices_for(lang) for lang in langs}
    else:
        raise ValueError(f"--synth {name} needs --synth-arg voices=FILE (speaker prompts)")
    missing = [lang for lang in langs if not voices.get(lang)]
    if missing:
        raise ValueError(f"no voices for {missing} in the voices file")
    if python:
        from stylebench.synth.worker import WorkerSynth

        return WorkerSynth(python, name, kwargs), voices
    return SYNTHESIZERS.load(name)(**kwargs), voices


COMMANDS = {
    "run": cmd_run,
    "score": cmd_score,
    "report": cmd_report,
    "models": cmd_models,
    "build-dialogues": cmd_build,
    "export-ratings": cmd_export_ratings,
    "import-ratings": cmd_import_ratings,
}


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    logging.basicConfig(
        level=logging.DEBUG if args.verbose else logging.WARNING,
        format="%(levelname)s %(name)s: %(message)s",
    )
    from stylebench.metrics.judge import JudgeError
    from stylebench.model_wrappers.worker import WorkerStartError
    from stylebench.registry import MissingExtraError
    from stylebench.synth.ffmpeg import ToolMissingError

    try:
        return COMMANDS[args.command](args)
    except KeyboardInterrupt:
        print(
            "stylebench: interrupted; finished records are kept, re-run the same command to resume",
            file=sys.stderr,
        )
        return 130
    except (MissingExtraError, ToolMissingError, ImportError) as exc:
        print(f"stylebench: {exc}", file=sys.stderr)
        return 2
    except (
        FileNotFoundError, FileExistsError, ValueError, KeyError, WorkerStartError, JudgeError
    ) as exc:  # fmt: skip
        if args.verbose:
            raise
        msg = exc.args[0] if isinstance(exc, KeyError) and exc.args else exc
        print(f"stylebench: error: {msg}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
