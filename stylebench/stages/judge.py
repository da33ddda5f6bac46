"""judge: relevance verdicts (SRD, MRD) for every sample whose replies have transcripts.

Per sample, two requests go to the judge (``stylebench.metrics.judge``):

- **SRD** (single-turn relevance), stored under key ``(sample_id, 1)``: the turn-1 user text and
  the transcript of the turn-1 reply. Needs the turn-1 transcript.
- **MRD** (multi-turn consistency), stored under key ``(sample_id, 0)`` (turn 0 = the whole
  sample): the three user texts and the three reply transcripts. Needs all three transcripts.

User texts come from the dialogue script (what the user turn says); replies are judged by their
ASR transcripts from the run's current ASR (``judge_input="transcript"``, the paper's protocol),
by the model's own text channel (``judge_input="text"``: the reply text of the respond record,
no ASR needed), or (``judge_input="auto"``, the default) by the transcripts except for samples
whose transcripts are not a faithful reading of the text channel (:func:`sample_inputs`). A record's
fingerprint covers the judge's ``describe()`` (backend, model, prompt hashes, decode) and the
request (texts and transcripts), so a new judge or a new transcript re-judges that key and
nothing else. Backend failures become error records (retried on resume); an ``unparseable``
reply is an ok record with that label.
"""

from __future__ import annotations

import inspect
from collections.abc import Sequence
from dataclasses import asdict
from typing import Any

from stylebench.records import JudgeRecord, Sample
from stylebench.stages import fingerprint
from stylebench.store import RunStore

JUDGE_STAGE_VERSION = "1"
SRD_TURN = 1
MRD_TURN = 0
Key = tuple[str, int]


def make_judge(cfg: Any) -> Any | None:
    """The judge named by ``cfg.judge`` built from the run config; ``None`` for ``"none"``.

    ``judge_model`` and ``judge_url`` are passed as ``model``/``url``, the prompt options as a
    loaded ``PromptSet`` (``prompts``), and ``judge_args`` (``--judge-arg KEY=VALUE``) as keyword
    arguments. An option the backend does not take is a ``ValueError``, not silently dropped.
    """
    if cfg.judge == "none":
        return None
    from stylebench.metrics.judge import JUDGES, load_prompts

    cls = JUDGES.load(cfg.judge)
    params = inspect.signature(cls).parameters
    open_kw = any(p.kind is inspect.Parameter.VAR_KEYWORD for p in params.values())
    kw: dict[str, Any] = {}
    given = {"model": cfg.judge_model, "url": cfg.judge_url, **dict(cfg.judge_args)}
    prompt_opts = (cfg.judge_prompt, cfg.judge_prompt_srd, cfg.judge_prompt_mrd)
    if "prompts" in params:
        kw["prompts"] = load_prompts(
            cfg.judge_prompt, srd=cfg.judge_prompt_srd, mrd=cfg.judge_prompt_mrd
        )
    elif any(p is not None for p in prompt_opts):
        raise ValueError(f"the {cfg.judge!r} judge uses no prompt; drop --judge-prompt*")
    flags = {"model": "--judge-model", "url": "--judge-url"}
    for name, value in given.items():
        if value is None:
            continue
        if name not in params and not open_kw:
            flag = flags.get(name, f"--judge-arg {name}=...")
            raise ValueError(f"the {cfg.judge!r} judge takes no {flag}")
        kw[name] = value
    return cls(**kw)


def sample_inputs(
    store: RunStore,
    samples: Sequence[Sample],
    asr_key: tuple[str, str] | None,
    max_error: float | None = None,
) -> dict[str, tuple[str, dict[int, str]]]:
    """Per sample, what the judge reads: ``(source, {turn: reply text})``.

    ``asr_key`` None: the text channel (``source="text"``). ``max_error`` None: the transcripts of
    that ASR (``"transcript"``). Otherwise (``judge_input="auto"``) the transcripts, unless a turn
    has none or its WER/CER against the model's text channel exceeds ``max_error``
    (:mod:`stylebench.metrics.fidelity`); then, when every ok reply has a text channel, the whole
    sample is judged on it (``"text_fallback"``), so that one source is used for all its turns.
    """
    from stylebench.metrics.fidelity import is_faithful, transcript_error_rate
    from stylebench.stages.transcribe import asr_fp

    replies = store.load("respond")
    transcripts = store.load("transcribe") if asr_key else {}
    afp = asr_fp(*asr_key) if asr_key else None
    out: dict[str, tuple[str, dict[int, str]]] = {}
    for s in samples:
        ok = {k: r for k in (1, 2, 3) if (r := replies.get((s.id, k))) and r.status == "ok"}
        chan = {k: r.text for k, r in ok.items()}
        if afp is None:
            out[s.id] = ("text", chan)
            continue
        heard: dict[int, str] = {}
        for k, r in ok.items():
            t = transcripts.get((s.id, k))
            if t is not None and t.status == "ok" and t.fp == fingerprint(afp, r.sha256):
                heard[k] = t.text
        if max_error is not None and ok and all(v.strip() for v in chan.values()):
            doubtful = len(heard) < len(ok) or not all(
                is_faithful(transcript_error_rate(chan[k], heard[k], s.lang), max_error)
                for k in heard
            )
            if doubtful:
                out[s.id] = ("text_fallback", chan)
                continue
        out[s.id] = ("transcript", heard)
    return out


def plan_judge(
    store: RunStore,
    samples: Sequence[Sample],
    judge_desc: dict[str, Any],
    asr_key: tuple[str, str] | None,
    max_error: float | None = None,
) -> dict[Key, tuple[str, Any]]:
    """Every judge key that can be asked now, with its fingerprint and request.

    ``asr_key`` and ``max_error`` choose what is judged, as in :func:`sample_inputs`.
    """
    from stylebench.metrics.judge import JudgeRequest

    plan: dict[Key, tuple[str, Any]] = {}
    inputs = sample_inputs(store, samples, asr_key, max_error)
    for s in samples:
        source, text = inputs[s.id]
        kind = "transcript" if source == "transcript" else "text"
        jfp = fingerprint("judge", JUDGE_STAGE_VERSION, judge_desc, kind)
        asks = {}
        if 1 in text:
            asks[SRD_TURN] = JudgeRequest("srd", s.lang, ((s.turns[0].text, text[1]),))
        if len(text) == 3:
            turns = tuple((s.turns[k - 1].text, text[k]) for k in (1, 2, 3))
            asks[MRD_TURN] = JudgeRequest("mrd", s.lang, turns)
        for turn, req in asks.items():
            plan[(s.id, turn)] = (fingerprint(jfp, asdict(req)), req)
    return plan


def load_verdicts(
    store: RunStore,
    samples: Sequence[Sample],
    judge_desc: dict[str, Any],
    asr_key: tuple[str, str] | None,
    max_error: float | None = None,
) -> dict[Key, JudgeRecord]:
    """The current judge records (this judge, these transcripts), latest per key."""
    plan = plan_judge(store, samples, judge_desc, asr_key, max_error)
    return store.load("judge", {k: fp for k, (fp, _) in plan.items()})


def run_judge(
    store: RunStore,
    samples: Sequence[Sample],
    judge: Any,
    asr_key: tuple[str, str] | None,
    *,
    max_error: float | None = None,
    cache: Any = None,
    strict: bool = False,
    progress: bool = True,
    chunk: int = 64,
) -> dict[str, int]:
    """Judge every key not yet ``ok`` for this judge; returns counts of what was done.

    Requests go in chunks of ``chunk`` (an LLM backend runs a chunk concurrently or batched);
    each chunk's records are appended before the next is asked, so a kill loses one chunk.

    Raises:
        JudgeError: every request of the first chunk failed (endpoint down, model not loadable,
            bad key): the error records are kept and the stage stops instead of asking the rest.
    """
    from tqdm import tqdm

    from stylebench.metrics.judge import JudgeError
    from stylebench.metrics.judge_cache import judge_all

    desc = judge.describe()
    plan = plan_judge(store, samples, desc, asr_key, max_error)
    have = store.load("judge", {k: fp for k, (fp, _) in plan.items()})
    todo = [k for k in plan if not (k in have and have[k].status == "ok")]
    counts = {"asked": 0, "cached": 0, "ok": 0, "error": 0, "unparseable": 0}
    counts["skipped"] = len(plan) - len(todo)
    backend, model = str(desc.get("backend", judge.name)), str(desc.get("model", ""))
    bar = tqdm(total=len(todo), desc="judge", unit="verdict", disable=not progress)
    for start in range(0, len(todo), chunk):
        keys = todo[start : start + chunk]
        results, hits = judge_all(judge, [plan[k][1] for k in keys], cache)
        counts["cached"] += len(hits)
        counts["asked"] += len(keys) - len(hits)
        for i, (key, res) in enumerate(zip(keys, results, strict=True)):
            fp, req = plan[key]
            if isinstance(res, JudgeError):
                if strict:
                    raise res
                rec = JudgeRecord(*key, "error", fp, kind=req.kind, backend=backend, model=model,
                                  error=f"JudgeError: {res}")  # fmt: skip
            else:
                rec = JudgeRecord(
                    *key, "ok", fp, kind=req.kind, label=res.label, score=res.score,
                    reason=res.reason, raw=res.raw[:2000], backend=backend, model=model,
                    cached=i in hits,
                )  # fmt: skip
                counts["unparseable"] += res.label == "unparseable"
            store.append("judge", rec)
            counts[rec.status] += 1
        bar.update(len(keys))
        failed = [r for r in results if isinstance(r, JudgeError)]
        if start == 0 and failed and len(failed) == len(results):  # systematic, not a glitch
            bar.close()
            raise JudgeError(f"every request of the first batch failed; stopping: {failed[0]}")
    bar.close()
    return counts


# -- pipeline glue: the stage, the manifest entry and the report block ----------------------
def _skip_reason(cfg: Any) -> str | None:
    if cfg.judge == "none":
        return "the judge is off (--judge none)"
    if cfg.asr == "none" and cfg.judge_input == "transcript":
        return (
            "no transcripts (--asr none); the judge reads ASR transcripts (or --judge-input text)"
        )
    return None


def _judge_asr(cfg: Any) -> tuple[str, str] | None:
    """The ASR whose transcripts are judged; ``None`` = the text channel."""
    if cfg.judge_input == "text" or cfg.asr == "none":
        return None
    return (cfg.asr, cfg.asr_model)


def _max_error(cfg: Any) -> float | None:
    """The fidelity limit of ``judge_input="auto"``; ``None`` = transcripts as they are."""
    return cfg.transcript_max_error if cfg.judge_input == "auto" else None


def judge_manifest(cfg: Any) -> dict[str, Any]:
    """The judge's ``describe()`` (with prompt hashes) for the run manifest, or why it is off."""
    why = _skip_reason(cfg)
    if why:
        return {"backend": cfg.judge, "skipped": why}
    return make_judge(cfg).describe()


def judge_stage(
    store: RunStore, samples: Sequence[Sample], cfg: Any, progress: bool
) -> dict[str, int] | None:
    """Run the judge stage for a run config; ``None`` when it is skipped (no judge or no ASR)."""
    if _skip_reason(cfg):
        return None
    from stylebench.metrics.judge_cache import JudgeCache, default_cache_path

    judge = make_judge(cfg)
    cache = JudgeCache(default_cache_path()) if cfg.judge_cache else None
    try:
        return run_judge(
            store, samples, judge, _judge_asr(cfg), max_error=_max_error(cfg), cache=cache,
            strict=cfg.strict, progress=progress,
        )  # fmt: skip
    finally:
        if cache is not None:
            cache.close()


def approximation_note(desc: dict[str, Any], backend: str) -> str | None:
    """A note naming the judge as an approximation unless it is the paper's judge model."""
    from stylebench.relevance import PAPER_JUDGE

    model = str(desc.get("model") or "")
    if backend != "offline" and PAPER_JUDGE.lower() in model.lower():
        return None
    if backend == "offline":
        return (
            f"relevance verdicts (SRD/MRD) come from the offline embedding judge ({model}), an "
            f"approximation of the paper's judge ({PAPER_JUDGE}); docs/judge.md gives its "
            "measured agreement"
        )
    return (
        f"relevance verdicts (SRD/MRD) come from judge {backend} {model}, an approximation of "
        f"the paper's judge ({PAPER_JUDGE})"
    )


def judge_report(
    store: RunStore, samples: Sequence[Sample], cfg: Any
) -> tuple[dict[str, Any], list[str], list[str]]:
    """``(report extra keys, sample ids to leave out of style scores, notes)`` for a run."""
    from stylebench import relevance as rl

    why = _skip_reason(cfg)
    if why:
        extra = rl.skipped_block(
            {"backend": cfg.judge, "model": cfg.judge_model}, why, cfg.mrd_threshold
        )
        return extra, [], [f"relevance gate not applied: {why}; eligibility unknown"]
    judge = make_judge(cfg)
    desc = judge.describe()
    records = load_verdicts(store, samples, desc, _judge_asr(cfg), _max_error(cfg))
    ids = [s.id for s in samples]
    srd = rl.labels_from_records(records, ids, SRD_TURN)
    mrd = rl.labels_from_records(records, ids, MRD_TURN)
    who = {
        "backend": cfg.judge,
        "model": desc.get("model"),
        "input": cfg.judge_input,
        "describe": desc,
    }
    note = approximation_note(desc, cfg.judge)
    who["approximation"] = note is not None
    extra = rl.report_block(
        who, srd, mrd, rl.cells_of(samples), threshold=cfg.mrd_threshold,
        filter_mrd=cfg.filter_mrd, n_boot=cfg.n_boot, seed=cfg.seed,
    )  # fmt: skip
    notes = [note] if note else []
    sources = [src for src, _ in sample_inputs(
        store, samples, _judge_asr(cfg), _max_error(cfg)).values()]  # fmt: skip
    n_fallback = sources.count("text_fallback")
    extra["judge"]["sources"] = {src: sources.count(src) for src in sorted(set(sources))}
    weak_asr = cfg.asr_model in ("base", "tiny.en") and any(s.lang == "zh" for s in samples)
    if cfg.judge_input == "transcript" and weak_asr:
        notes.append(
            f"zh verdicts rest on Whisper {cfg.asr_model} transcripts, which garble synthetic "
            "Mandarin (docs/judge-backends.md, 'Measured'); use --asr-model large-v3 or the "
            "default --judge-input auto"
        )
    if cfg.judge_input == "auto" and _judge_asr(cfg) is not None:
        notes.append(
            f"relevance judged on ASR transcripts for {sources.count('transcript')} samples and "
            f"on the models' text channel for {n_fallback} whose transcripts disagreed with it "
            f"(WER/CER > {cfg.transcript_max_error:g}, or a transcript missing; --judge-input auto)"
        )
    if _judge_asr(cfg) is None:
        why = "--judge-input text" if cfg.judge_input == "text" else "no ASR (--asr none)"
        notes.append(
            f"relevance judged on the models' text channel ({why}), not on ASR transcripts of "
            "what they said"
        )
    if extra["eligible"] is False:
        notes.append(
            f"not eligible: MRD {extra['mrd']}% <= {cfg.mrd_threshold:g}%; style cells are shown "
            "marked, for inspection only"
        )
    exclude = rl.mrd_exclusions(mrd) if cfg.filter_mrd else []
    return extra, exclude, notes
