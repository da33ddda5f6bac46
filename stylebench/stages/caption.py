"""caption and caption_judge: the captioning probe (docs/captioning.md).

**caption**: every ok reply is described by a speaking-style captioner under the instruction for
its sample's dimension. Records are keyed ``(sample_id, turn)``; the fingerprint covers the
captioner's ``describe()`` (backend, model, decode), the instruction file's sha256 and the reply's
sha256 (for the ``features`` captioner also the feature records it reads), so re-scoring never
re-captions and a new captioner or prompt writes new records beside the old ones.

**caption_judge**: for each pair of consecutive turns whose captions are ok, a caption judge says
whether the instructed dimension ``increased``, ``decreased``, stayed the ``same`` or
``cannot_tell``; the record is keyed ``(sample_id, later turn)`` (2 for pair 1-2, 3 for 2-3).
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from dataclasses import asdict
from typing import Any, ClassVar

from stylebench.errors import BadValue
from stylebench.pipeline.keys import fingerprint
from stylebench.pipeline.stage import Unit, is_ok
from stylebench.records import (
    CAPTION_VERDICTS,
    CAPTIONS,
    PAIRS,
    TURNS,
    CaptionRecord,
    CaptionVerdictRecord,
    FeatureRecord,
    Key,
    RecordKind,
    RespondRecord,
    Sample,
)
from stylebench.stages.outputs import ReportPart, ScoredView

CAPTION_STAGE_VERSION = "1"


def build(
    registry: Any, name: str, model: str | None, url: str | None, args: Mapping[str, str], what: str
) -> Any:
    """Build ``registry[name]`` with ``model``/``url``/``args``; an option it does not take is a
    ``BadValue`` naming the flag (:func:`arguments`), not silently dropped."""
    cls, kw = arguments(registry, name, model, url, args, what)
    try:
        return cls(**kw)
    except TypeError as exc:  # an option a backend's base class does not take
        raise BadValue(f"the {name!r} {what}: {exc}") from None


def arguments(
    registry: Any, name: str, model: str | None, url: str | None, args: Mapping[str, str], what: str
) -> tuple[Any, dict[str, Any]]:
    """The class ``registry[name]`` and the keyword arguments it is built with, checked and no
    model loaded: run before any work (:func:`check_captioner`, :func:`check_caption_judge`) and
    again when it is built.

    Raises:
        BadValue: an option it does not take (:func:`stylebench.registry.check_arguments`), no
            model where it needs one, a URL that is not http(s), a prompt file that is not there.
    """
    from stylebench.options import check_url
    from stylebench.paths import named_file
    from stylebench.registry import check_arguments

    cls = registry.load(name)
    kw = {k: v for k, v in {"model": model, "url": url, **dict(args)}.items() if v is not None}
    prefix = "--caption-judge" if what == "caption judge" else "--caption"
    check_arguments(
        cls,
        kw,
        what=f"the {name!r} {what}",
        flag=f"{prefix}-arg",
        own_flags={k: f"{prefix}-{k}" for k in ("model", "url", "prompt")},
    )
    if getattr(cls, "needs_model", False) and not model:
        raise BadValue(f"the {name!r} {what} needs {prefix}-model (the served model name)")
    if url is not None:
        check_url(url, f"{prefix}-url")
    if "prompt" in kw:
        named_file(kw["prompt"], f"{prefix}-prompt")
    return cls, kw


#: the caption options besides ``captioner``: read only when a captioner runs
CAPTION_OPTIONS = (
    "caption_model",
    "caption_url",
    "caption_prompt",
    "caption_args",
    "caption_judge",
    "caption_judge_model",
    "caption_judge_url",
    "caption_judge_prompt",
    "caption_judge_args",
)


def unread(cfg: Any, samples: Sequence[Sample]) -> list[Any]:
    """The caption options this config would not read (refused when given:
    :func:`stylebench.stages.registry.check_models`)."""
    from stylebench.config import Ignored

    cc = cfg.caption
    if cc.captioner == "none":
        return [
            Ignored(
                CAPTION_OPTIONS,
                "--captioner none (the default: no reply is captioned)",
                "pick a captioner with --captioner",
            )
        ]
    if cc.captioner == "features":
        return [
            Ignored(
                ("caption_prompt",),
                "--captioner features (rule-based: it reads the measurements, no instruction)",
            )
        ]
    return []


def check_captioner(cfg: Any, samples: Sequence[Sample]) -> None:
    """The captioner's options and the instruction of every dimension it captions, before any
    work."""
    from stylebench.metrics.captions.base import CAPTIONERS, load_instruction

    cc = cfg.caption
    arguments(
        CAPTIONERS, cc.captioner, cc.caption_model, cc.caption_url, cc.caption_args, "captioner"
    )
    if cc.caption_prompt is not None:
        for dim in sorted({s.dim for s in samples}):
            load_instruction(dim, cc.caption_prompt)


def caption_judge_args(cc: Any) -> dict[str, str]:
    """``--caption-judge-arg`` with ``--caption-judge-prompt`` as ``prompt``."""
    return {
        **cc.caption_judge_args,
        **({"prompt": cc.caption_judge_prompt} if cc.caption_judge_prompt else {}),
    }


def check_caption_judge(cfg: Any, samples: Sequence[Sample]) -> None:
    """The caption judge's options, before any work."""
    from stylebench.metrics.captions.base import CAPTION_JUDGES

    cc = cfg.caption
    arguments(
        CAPTION_JUDGES,
        cc.caption_judge,
        cc.caption_judge_model,
        cc.caption_judge_url,
        caption_judge_args(cc),
        "caption judge",
    )


def dim_values(
    samples: Sequence[Sample], features: Mapping[Key, FeatureRecord], ctx: Any
) -> dict[Key, dict[str, float]]:
    """Per ok reply, its score on each acoustic dimension (what the features captioner reads)."""
    from stylebench.metrics.captions.features import caption_dims
    from stylebench.metrics.dims.base import Shared, dimension

    out: dict[Key, dict[str, float]] = {}
    for s in samples:
        ok = {k: f for k in TURNS if is_ok(f := features.get((s.id, k)))}
        for d in caption_dims(s.dim):
            values, _ = dimension(d).gated_turn_values(s, ok, ctx)
            for k, v in values.items():
                if not isinstance(v, str):  # a caption describes the turn's own measured value
                    out.setdefault((s.id, k), {})[d] = float(
                        v.value if isinstance(v, Shared) else v
                    )
    return out


class CaptionStage:
    """Chunks of replies; a backend with ``caption_many`` captions a chunk concurrently."""

    records: ClassVar[RecordKind[CaptionRecord]] = CAPTIONS
    name: ClassVar[str] = CAPTIONS.name
    errors: ClassVar[tuple[type[BaseException], ...]] = ()
    unit: ClassVar[str] = "batch"

    def __init__(
        self,
        store: Any,
        samples: Sequence[Sample],
        replies: Mapping[Key, RespondRecord],
        captioner: Any,
        instructions: Mapping[str, Any],
        *,
        features: Mapping[Key, FeatureRecord] | None = None,
        values: Mapping[Key, dict[str, float]] | None = None,
        strict: bool = False,
        chunk: int = 32,
    ) -> None:
        self.store, self.samples, self.replies, self.captioner = store, samples, replies, captioner
        self.instructions, self.features, self.values = instructions, features, values
        self.strict, self.chunk = strict, chunk
        self.desc = captioner.describe()

    def _requests(self) -> dict[Key, tuple[str, Any]]:
        from stylebench.metrics.captions.base import CaptionRequest

        out = {}
        base = fingerprint("caption", CAPTION_STAGE_VERSION, self.desc)
        for s in self.samples:
            if s.dim not in self.instructions:
                continue
            ins = self.instructions[s.dim]
            for k in TURNS:
                r = self.replies.get((s.id, k))
                if not is_ok(r):
                    continue
                extra: list[Any] = []
                if self.features is not None:  # the features captioner reads turn k and turn 1
                    extra = [
                        getattr(self.features.get((s.id, t)), "fp", None) for t in sorted({1, k})
                    ]
                vals = self.values or {}
                req = CaptionRequest(
                    str(self.store.root / r.audio),
                    s.dim,
                    s.lang,
                    ins,
                    k,
                    vals.get((s.id, k), {}),
                    vals.get((s.id, 1), {}),
                )
                out[(s.id, k)] = (fingerprint(base, ins.sha256, r.sha256, extra), req)
        return out

    def plan(self) -> list[Unit]:
        reqs = self._requests()
        keys = list(reqs)
        return [
            Unit(f"chunk{i}", {k: reqs[k][0] for k in keys[i : i + self.chunk]}, payload=reqs)
            for i in range(0, len(keys), self.chunk)
        ]

    def compute(self, unit: Unit, done: Mapping[Key, CaptionRecord]) -> Iterator[CaptionRecord]:
        keys = [k for k in unit.fps if not is_ok(done.get(k))]
        reqs = [unit.payload[k][1] for k in keys]
        many = getattr(self.captioner, "caption_many", None)
        if callable(many):
            texts = list(many(reqs))
        else:
            texts = []
            for req in reqs:
                try:
                    texts.append(self.captioner.caption(req))
                except (
                    RuntimeError,
                    ValueError,
                    OSError,
                ) as exc:  # CaptionError, AudioError, a backend's
                    texts.append(exc)
        backend, model = str(self.desc.get("backend", "")), str(self.desc.get("model", ""))
        for key, req, text in zip(keys, reqs, texts, strict=True):
            fp, prompt = unit.fps[key], req.instruction.name
            if isinstance(text, BaseException):
                if self.strict:
                    raise text
                yield CaptionRecord(
                    *key,
                    "error",
                    fp,
                    backend=backend,
                    model=model,
                    prompt=prompt,
                    error=f"{type(text).__name__}: {text}",
                )
            else:
                yield CaptionRecord(
                    *key,
                    "ok",
                    fp,
                    text=str(text)[:4000],
                    backend=backend,
                    model=model,
                    prompt=prompt,
                )


class CaptionJudgeStage:
    """Chunks of caption pairs; LLM answers are cached (never failures or unparseable ones)."""

    records: ClassVar[RecordKind[CaptionVerdictRecord]] = CAPTION_VERDICTS
    name: ClassVar[str] = CAPTION_VERDICTS.name
    errors: ClassVar[tuple[type[BaseException], ...]] = ()
    unit: ClassVar[str] = "batch"

    def __init__(
        self,
        samples: Sequence[Sample],
        captions: Mapping[Key, CaptionRecord],
        judge: Any,
        *,
        cache: Any = None,
        strict: bool = False,
        chunk: int = 64,
    ) -> None:
        from stylebench.metrics.captions.base import CompareRequest

        self.judge, self.cache, self.strict, self.chunk = judge, cache, strict, chunk
        self.desc = judge.describe()
        self.requests: dict[Key, tuple[str, Any]] = {}
        for s in samples:
            for a, b in PAIRS:
                ca, cb = captions.get((s.id, a)), captions.get((s.id, b))
                if is_ok(ca) and is_ok(cb):
                    req = CompareRequest(s.dim, s.lang, ca.text, cb.text)
                    fp = fingerprint("caption_judge", CAPTION_STAGE_VERSION, self.desc, asdict(req))
                    self.requests[(s.id, b)] = (fp, req)

    def plan(self) -> list[Unit]:
        keys = list(self.requests)
        return [
            Unit(f"chunk{i}", {k: self.requests[k][0] for k in keys[i : i + self.chunk]})
            for i in range(0, len(keys), self.chunk)
        ]

    def compute(
        self, unit: Unit, done: Mapping[Key, CaptionVerdictRecord]
    ) -> Iterator[CaptionVerdictRecord]:
        from stylebench.metrics.captions.base import CaptionVerdict
        from stylebench.metrics.judges.base import JudgeError

        keys = [k for k in unit.fps if not is_ok(done.get(k))]
        results: dict[Key, Any] = {}
        if self.cache is not None:
            for k in keys:
                hit = self.cache.get_answer(self.requests[k][0])
                if hit is not None:
                    results[k] = CaptionVerdict(
                        hit["label"], tuple(hit["levels"]), hit["reason"], hit["raw"]
                    )
        hits = set(results)
        todo = [k for k in keys if k not in results]
        many = getattr(self.judge, "compare_many", None)
        reqs = [self.requests[k][1] for k in todo]
        fresh = (
            list(many(reqs)) if callable(many) and todo else [self.judge.compare(r) for r in reqs]
        )
        for k, v in zip(todo, fresh, strict=True):
            results[k] = v
            if (
                self.cache is not None
                and isinstance(v, CaptionVerdict)
                and v.label != "unparseable"
            ):
                self.cache.put_answer(
                    self.requests[k][0],
                    {"label": v.label, "levels": list(v.levels), "reason": v.reason, "raw": v.raw},
                )
        backend, model = str(self.desc.get("backend", "")), str(self.desc.get("model", ""))
        for k in keys:
            fp, v = unit.fps[k], results[k]
            if isinstance(v, JudgeError):
                if self.strict:
                    raise v
                yield CaptionVerdictRecord(
                    *k, "error", fp, backend=backend, model=model, error=f"JudgeError: {v}"
                )
            else:
                yield CaptionVerdictRecord(
                    *k,
                    "ok",
                    fp,
                    label=v.label,
                    levels=list(v.levels),
                    reason=v.reason[:500],
                    backend=backend,
                    model=model,
                    cached=k in hits,
                )


def self_caption_warning(cfg: Any, model_desc: Mapping[str, Any] | None) -> str | None:
    """A warning when the captioner (or the LLM caption judge) is the run's subject model."""
    cc = cfg.caption
    names = {
        str(v).rstrip("/").lower()
        for v in [cfg.model, *(model_desc or {}).values()]
        if isinstance(v, str) and v
    }
    names |= {n.rsplit("/", 1)[-1] for n in names if "/" in n}
    hits = [
        f"{role} {m!r}"
        for role, m in (("captioner", cc.caption_model), ("caption judge", cc.caption_judge_model))
        if m
        and (m.rstrip("/").lower() in names or m.rstrip("/").lower().rsplit("/", 1)[-1] in names)
    ]
    if cc.captioner == "none" or not hits:
        return None
    return (
        f"the {' and '.join(hits)} is the subject model of this run: a model describing its own "
        "replies may agree with itself; use another captioner for reported numbers"
    )


def caption_describe(info: Mapping[str, Mapping[str, Any]]) -> dict[str, Any]:
    """What the captioner, the caption judge and the instructions were (the captions block)."""
    caption, judge = info.get(CAPTIONS.name) or {}, info.get(CAPTION_VERDICTS.name) or {}
    if not caption and not judge:
        return {}
    return {
        "captioner": caption.get("captioner"),
        "judge": judge.get("judge"),
        "instructions": caption.get("instructions"),
    }


def caption_report_part(scored: ScoredView) -> ReportPart:
    """The captioning probe's report block (:func:`stylebench.scoring.captions.caption_report_block`)
    and its notes, with a warning when a captioner is the run's own subject model."""
    from stylebench.scoring.captions import caption_report_block

    cfg, records = scored.cfg, scored.records
    block, notes = caption_report_block(
        scored.samples,
        cfg,
        records.of(CAPTIONS),
        records.of(CAPTION_VERDICTS),
        caption_describe(scored.measured.info),
        scored.turn_scores,
        scored.thresholds,
        exclude=scored.exclude,
        majority=scored.majority,
    )
    warn = self_caption_warning(cfg, scored.manifest.get("model"))
    return ReportPart(block, (*notes, *([warn] if warn else [])))
