"""The relevance gate around the judge stage: which judge, what it reads, and the report block.

``judge_input`` chooses what a reply reads as: ``transcript`` (ASR of the reply audio, the
paper's protocol), ``text`` (the model's own text channel) or ``auto`` (transcripts, except
samples whose transcripts disagree with the text channel; :func:`.judge.sample_inputs`).
"""

from __future__ import annotations

import inspect
import json
from collections.abc import Mapping, Sequence
from typing import Any

from stylebench.config import Ignored, JudgeConfig, RunConfig
from stylebench.errors import BadValue
from stylebench.records import JUDGEMENTS, JudgeRecord, Key, Sample
from stylebench.stages.outputs import LabelledRun, ReportPart, ScoredPart, ScoredView, ScoreInputs

Inputs = dict[str, tuple[str, dict[int, str]]]
#: judges built in this process, by what builds them (see :func:`make_judge`)
_BUILT: dict[str, Any] = {}


def _judge_key(jc: JudgeConfig) -> str:
    fields = (
        jc.judge,
        jc.judge_model,
        jc.judge_url,
        jc.judge_prompt,
        jc.judge_prompt_srd,
        jc.judge_prompt_mrd,
        sorted(dict(jc.judge_args).items()),
    )
    return json.dumps(fields, default=str)


def required_judge(jc: JudgeConfig) -> Any:
    """:func:`make_judge` where a judge must exist (the judge stage runs only when one is set).

    Raises:
        ValueError: ``--judge none``.
    """
    judge = make_judge(jc)
    if judge is None:
        raise BadValue("no relevance judge is set (--judge none)")
    return judge


def make_judge(jc: JudgeConfig) -> Any | None:
    """The judge named by ``jc.judge``; ``None`` for ``"none"``.

    ``judge_model`` and ``judge_url`` are passed as ``model``/``url``, the prompt options as a
    loaded ``PromptSet`` (``prompts``), and ``judge_args`` as keyword arguments. An option the
    backend does not take is a ``ValueError``, not silently dropped.

    A judge is built once per process for the same settings and then handed out again: a
    comparison opens several runs judged the same way, and loading an LLM (or embedding the
    offline judge's anchors) for each would repeat the same work. Judges hold no per-run state:
    a verdict depends only on the judge's settings and the request.
    """
    if jc.judge == "none":
        return None
    key = _judge_key(jc)
    if key not in _BUILT:
        _BUILT[key] = _build_judge(jc)
    return _BUILT[key]


def _build_judge(jc: JudgeConfig) -> Any:
    cls, kw = judge_arguments(jc)
    return cls(**kw)


#: the prompt options, each read only by a judge that takes prompts
PROMPT_OPTIONS = ("judge_prompt", "judge_prompt_srd", "judge_prompt_mrd")


def judge_arguments(jc: JudgeConfig) -> tuple[Any, dict[str, Any]]:
    """The class of the judge ``jc`` names and the keyword arguments it is built with, every
    option checked and no model loaded: run before any work (:func:`check_judge`) and again when
    the judge is built, so an option it cannot take is one line naming the flag, never dropped.

    Raises:
        BadValue: an option the judge does not take, a prompt file that is not there or is
            malformed, a URL that is not http(s), a model name the offline judge does not know.
    """
    from stylebench.config import flag_of
    from stylebench.metrics.judges.base import JUDGES
    from stylebench.metrics.judges.prompting import load_prompts
    from stylebench.options import check_url
    from stylebench.registry import check_arguments

    cls = JUDGES.load(jc.judge)
    kw: dict[str, Any] = {}
    prompts = [n for n in PROMPT_OPTIONS if getattr(jc, n) is not None]
    if "prompts" in inspect.signature(cls).parameters:
        kw["prompts"] = load_prompts(
            jc.judge_prompt, srd=jc.judge_prompt_srd, mrd=jc.judge_prompt_mrd
        )
    elif prompts:
        flags = ", ".join(flag_of(n) for n in prompts)
        raise BadValue(
            f"{flags}: the {jc.judge!r} judge uses no prompt; drop {flags} or pick an LLM judge "
            "with --judge (openai, transformers, vllm)"
        )
    given = {"model": jc.judge_model, "url": jc.judge_url, **dict(jc.judge_args)}
    kw.update({k: v for k, v in given.items() if v is not None})
    check_arguments(
        cls,
        kw,
        what=f"the {jc.judge!r} judge",
        flag="--judge-arg",
        own_flags={"model": "--judge-model", "url": "--judge-url"},
        internal=("prompts",),
    )
    if jc.judge_url is not None:
        check_url(jc.judge_url, "--judge-url")
    known = getattr(cls, "known_models", None)
    if known is not None and jc.judge_model is not None and jc.judge_model not in known:
        raise BadValue(
            f"--judge-model: unknown {jc.judge} judge model {jc.judge_model!r}; use one of "
            + ", ".join(known)
        )
    return cls, kw


def unread(cfg: RunConfig, samples: Sequence[Sample]) -> list[Ignored]:
    """The judge options this config would not read (refused when given:
    :func:`stylebench.stages.registry.check_models`)."""
    jc, cc = cfg.judge, cfg.caption
    own = (*PROMPT_OPTIONS, "judge_model", "judge_url", "judge_args", "mrd_threshold", "filter_mrd")
    out = []
    if jc.judge == "none":
        out.append(
            Ignored(
                (*own, "judge_input"),
                "--judge none (no relevance judge runs)",
                "pick a judge with --judge",
            )
        )
    elif skip_reason(cfg) is not None:
        out.append(
            Ignored(  # the judge itself is not refused: the report says it was skipped, and why
                own,
                "--judge-input transcript with --asr none (there are no transcripts to judge)",
                "pass --judge-input text",
            )
        )
    elif jc.judge_prompt_srd is not None and jc.judge_prompt_mrd is not None:
        out.append(
            Ignored(
                ("judge_prompt",),
                "--judge-prompt-srd with --judge-prompt-mrd (both prompts named as files)",
            )
        )
    llm_caption_judge = cc.captioner != "none" and cc.caption_judge != "lexicon"
    if skip_reason(cfg) is not None and not llm_caption_judge:
        out.append(
            Ignored(
                ("judge_cache",),
                "a run without a relevance judge or an LLM caption judge (no verdict to cache)",
            )
        )
    return out


def skip_reason(cfg: RunConfig) -> str | None:
    if cfg.judge.judge == "none":
        return "the judge is off (--judge none)"
    if cfg.measure.asr == "none" and cfg.judge.judge_input == "transcript":
        return (
            "no transcripts (--asr none); the judge reads ASR transcripts (or --judge-input text)"
        )
    return None


def reads_transcripts(cfg: RunConfig) -> bool:
    return cfg.judge.judge_input != "text" and cfg.measure.asr != "none"


def max_error(cfg: RunConfig) -> float | None:
    """The fidelity limit of ``judge_input="auto"``; ``None`` = transcripts as they are."""
    return cfg.measure.transcript_max_error if cfg.judge.judge_input == "auto" else None


def approximation_note(desc: Mapping[str, Any], backend: str) -> str:
    """How the verdicts relate to the paper's judge. Always said: even the paper's judge model
    reads our own prompts, not the paper's."""
    from stylebench.scoring.relevance import PAPER_JUDGE

    model = str(desc.get("model") or "")
    if backend == "offline":
        return (
            f"relevance verdicts (SRD/MRD) come from the offline embedding judge ({model}), an "
            f"approximation of the paper's judge ({PAPER_JUDGE}); docs/judge.md gives its "
            "measured agreement"
        )
    if PAPER_JUDGE.lower() in model.lower():
        return (
            f"relevance verdicts (SRD/MRD) come from judge {backend} {model}, the paper's judge "
            "model, with stylebench's own prompts (not the paper's), so verdicts may differ"
        )
    return f"relevance verdicts (SRD/MRD) come from judge {backend} {model}, an approximation of the paper's judge ({PAPER_JUDGE})"


def gate_report(
    cfg: RunConfig,
    samples: Sequence[Sample],
    desc: Mapping[str, Any] | None,
    records: Mapping[Key, JudgeRecord],
    inputs: Inputs,
) -> tuple[dict[str, Any], list[str], list[str]]:
    """``(report extra keys, sample ids to leave out of style scores, notes)`` for a run."""
    from stylebench.scoring import relevance as rl
    from stylebench.stages.judge import MRD_TURN, SRD_TURN

    jc = cfg.judge
    why = skip_reason(cfg)
    if why or desc is None:
        why = why or "no judge"
        extra = rl.skipped_block(
            {"backend": jc.judge, "model": jc.judge_model}, why, jc.mrd_threshold
        )
        return extra, [], [f"relevance gate not applied: {why}; eligibility unknown"]
    ids = [s.id for s in samples]
    srd = rl.labels_from_records(records, ids, SRD_TURN)
    mrd = rl.labels_from_records(records, ids, MRD_TURN)
    note = approximation_note(desc, jc.judge)
    who = {
        "backend": jc.judge,
        "model": desc.get("model"),
        "input": jc.judge_input,
        "describe": desc,
        "approximation": is_approximation(desc, jc.judge),
    }
    extra = rl.report_block(
        who,
        srd,
        mrd,
        rl.cells_of(samples),
        threshold=jc.mrd_threshold,
        filter_mrd=jc.filter_mrd,
        n_boot=cfg.score.n_boot,
        seed=cfg.decode.seed,
    )
    notes = [note]
    sources = [src for src, _ in inputs.values()]
    extra["judge"]["sources"] = {src: sources.count(src) for src in sorted(set(sources))}
    weak_asr = cfg.measure.asr_model in ("base", "tiny.en") and any(s.lang == "zh" for s in samples)
    if jc.judge_input == "transcript" and weak_asr:
        notes.append(
            f"zh verdicts rest on Whisper {cfg.measure.asr_model} transcripts, which garble synthetic "
            "Mandarin (docs/judge-backends.md, 'Measured'); use --asr-model large-v3 or the "
            "default --judge-input auto"
        )
    if jc.judge_input == "auto" and reads_transcripts(cfg):
        notes.append(
            f"relevance judged on ASR transcripts for {sources.count('transcript')} samples and "
            f"on the models' text channel for {sources.count('text_fallback')} whose transcripts "
            f"disagreed with it (WER/CER > {cfg.measure.transcript_max_error:g}, or a transcript "
            "missing; --judge-input auto)"
        )
    if not reads_transcripts(cfg):
        src = "--judge-input text" if jc.judge_input == "text" else "no ASR (--asr none)"
        notes.append(
            f"relevance judged on the models' text channel ({src}), not on ASR transcripts of what they said"
        )
    if extra["eligible"] is False:
        notes.append(
            f"not eligible: MRD {extra['mrd']}% <= {jc.mrd_threshold:g}%; style cells are shown marked, for inspection only"
        )
    exclude = rl.mrd_exclusions(mrd) if jc.filter_mrd else []
    return extra, exclude, notes


def is_approximation(desc: Mapping[str, Any], backend: str) -> bool:
    """Whether the judge model differs from the paper's (the offline judge always does)."""
    from stylebench.scoring.relevance import PAPER_JUDGE

    return backend == "offline" or PAPER_JUDGE.lower() not in str(desc.get("model") or "").lower()


def gate_part(inputs: ScoreInputs) -> ScoredPart:
    """The judge stage's part of a scored run: the relevance block (``gate``), the samples the
    MRD filter leaves out of style scores (``exclude``) and what the report says of the gate."""
    judge = inputs.measured.info.get(JUDGEMENTS.name) or {}
    relevance, exclude, notes = gate_report(
        inputs.cfg,
        inputs.samples,
        judge.get("describe"),
        inputs.measured.records.of(JUDGEMENTS),
        judge.get("inputs") or {},
    )
    return ScoredPart(exclude=frozenset(exclude), gate=relevance, notes=tuple(notes))


def gate_report_part(scored: ScoredView) -> ReportPart:
    """The judge stage's report blocks (srd, mrd, their CIs, eligible, judge, ...) and notes."""
    part = scored.part(JUDGEMENTS.name)
    return ReportPart(dict(part.gate or {}), part.notes)


def relevance_rows(
    runs: Sequence[LabelledRun], shared: frozenset[str], boot: Mapping[str, Any]
) -> list[dict[str, Any]]:
    """The comparison's relevance table (the paper's Table 2): SRD and MRD per model with
    eligibility, as each run's report computed them over its own selected samples."""
    rows = []
    for run in runs:
        rv = run.scored.part(JUDGEMENTS.name).gate or {}
        mrd = (rv.get("relevance") or {}).get("mrd") or {}
        rows.append(
            {
                "model": run.label,
                "srd": rv.get("srd"),
                "srd_ci": rv.get("srd_ci"),
                "mrd": rv.get("mrd"),
                "mrd_ci": rv.get("mrd_ci"),
                "n_judged": mrd.get("n_judged"),
                "eligible": rv.get("eligible"),
                "threshold": (rv.get("relevance") or {}).get("threshold"),
                "skipped": (rv.get("judge") or {}).get("skipped"),
            }
        )
    return rows


def relevance_markdown(rows: Sequence[Mapping[str, Any]]) -> list[str]:
    from stylebench.report.md_text import eligible_md, fmt_ci, md_escape, md_table

    lines = ["", "## SRD / MRD and eligibility (Table 2)", ""]
    return lines + md_table(
        ("model", "SRD % [CI]", "MRD % [CI]", "n judged", "eligible"),
        [
            (
                md_escape(r["model"]),
                fmt_ci(r["srd"], r["srd_ci"]),
                fmt_ci(r["mrd"], r["mrd_ci"]),
                str(r["n_judged"] if r["n_judged"] is not None else "–"),
                eligible_md(r["eligible"]),
            )
            for r in rows
        ],
    )


def relevance_html(rows: Sequence[Mapping[str, Any]]) -> list[str]:
    from stylebench.report.html_table import ELIGIBLE_TEXT, html_num, table

    return [
        "<h2>SRD / MRD and eligibility (Table 2)</h2>"
        + table(
            "relevance",
            ("model", "SRD % [CI]", "MRD % [CI]", "n judged", "eligible"),
            [
                [
                    (r["model"], r["model"]),
                    (html_num(r["srd"], r["srd_ci"]), r["srd"]),
                    (html_num(r["mrd"], r["mrd_ci"]), r["mrd"]),
                    (str(r["n_judged"]), r["n_judged"]),
                    (ELIGIBLE_TEXT[r["eligible"]], ELIGIBLE_TEXT[r["eligible"]]),
                ]
                for r in rows
            ],
        )
    ]
