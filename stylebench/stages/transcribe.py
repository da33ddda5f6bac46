"""transcribe: an ASR transcript (with word times) for every ok reply.

Keyed by the reply's sha256 and the ASR backend + model, so a re-run with the same ASR reuses
every transcript and a different ASR writes new records beside the old ones. The key also names
CTranslate2's version and CPU code path (ISA, GEMM backends: :func:`asr_machine`), since those
change transcripts; the manifest records it, and ``stylebench report`` reads the transcripts made
under the recorded one, so a run folder moved to another machine still reports. A non-default way of
decoding (a GPU, batches: ``--asr-device``, ``--asr-batch-size``) is part of the key, since its
transcripts can differ from the default's (:mod:`stylebench.metrics.asr.batched` says where).

A unit is one reply's audio: replies whose bytes are the same (a model that says a turn again
word for word, and sample for sample) share one unit and are transcribed once; each keeps its own
record, the copies naming the reply they share it with in ``raw["same_audio_as"]``. With
``--asr-batch-size N`` a unit is N such audios, transcribed together by a :class:`TranscribeJob`
(in this process or on an ASR actor); a reply whose audio cannot be read is that reply's error
record, not the batch's. With ``--asr-workers N`` (faster-whisper on CPU, one reply at a time)
the serial executor computes N units at once on threads, each decoded alone on its own model
replica with one CTranslate2 thread: the same transcripts as one at a time (docs/scale.md,
"Faster offline ASR"), so the number of workers is not part of the key.
"""

from __future__ import annotations

import contextlib
import tempfile
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, ClassVar

from stylebench.audio import AudioError, load_audio
from stylebench.metrics.asr import ASR_BACKENDS
from stylebench.pipeline.blobs import Blob
from stylebench.pipeline.keys import fingerprint
from stylebench.pipeline.stage import PROVENANCE, Unit
from stylebench.records import TRANSCRIPTS, Key, RecordKind, RespondRecord, TranscriptRecord
from stylebench.store import RunStore


def make_asr(backend: str, model: str, **options: Any) -> Any:
    return ASR_BACKENDS.load(backend)(model, **options)


#: ``--asr-workers 0`` decodes this many replies at once at most: each worker holds a replica of
#: the model, and past a few the cores are better spent on CTranslate2's intra-op threads
AUTO_ASR_WORKERS_MAX = 4


@dataclass(frozen=True)
class AsrSpec:
    """How to build the ASR model anywhere; calling it builds it (on ``device``).

    ``workers`` > 1 (faster-whisper on CPU only) builds a model that decodes that many replies
    at once from threads, sharing ``cores`` between them as intra-op threads."""

    backend: str
    model: str
    device: str = "cpu"
    workers: int = 1
    cores: int = 1

    def __call__(self) -> Any:
        if self.device == "cpu":
            if self.workers > 1:
                threads = max(1, self.cores // self.workers)
                return make_asr(self.backend, self.model, cpu_threads=threads, workers=self.workers)
            return make_asr(self.backend, self.model)
        kw = {"device": self.device}
        if self.backend == "faster-whisper":
            kw["compute_type"] = "float16"
        return ASR_BACKENDS.load(self.backend)(self.model, **kw)


def asr_workers(requested: int, backend: str, device: str, batch_size: int, cores: int) -> int:
    """How many replies the serial executor transcribes at once: ``requested``, or with 0 one
    per core up to :data:`AUTO_ASR_WORKERS_MAX`; always 1 where decoding is not per reply on a
    CPU by faster-whisper (a GPU, batches, openai-whisper)."""
    if backend != "faster-whisper" or device != "cpu" or batch_size > 1:
        return 1
    return requested or max(1, min(cores, AUTO_ASR_WORKERS_MAX))


def asr_variant(device: str = "cpu", batch_size: int = 1) -> str:
    """The part of the ASR key that says how decoding ran; empty for the default (CPU, one by one)."""
    parts = ([f"{device}-float16"] if device != "cpu" else []) + (
        ["batched"] if batch_size > 1 else []
    )
    return "+".join(parts)


def asr_machine(backend: str, device: str = "cpu") -> dict[str, str]:
    """The machine part of the ASR key: for faster-whisper, CTranslate2's version and, on CPU,
    the ISA, CPU features and GEMM backends it decodes with (:mod:`stylebench.metrics.asr.isa`),
    since transcripts differ between ISAs (docs/metrics.md, "Machine independence"); ``{}`` for
    other backends."""
    if backend != "faster-whisper":
        return {}
    from stylebench.metrics.asr.isa import ct2_cpu

    cpu = ct2_cpu()
    return cpu.key() if device == "cpu" else {"ctranslate2": cpu.ctranslate2}


def asr_fp(
    backend: str, model: str, variant: str = "", machine: Mapping[str, str] | None = None
) -> str:
    """Who transcribed, under which decoding definition (the ASR spec version) and on which CPU
    code path (``machine``, :func:`asr_machine`): a new decoding rule or another ISA makes new
    transcripts instead of reusing the old ones."""
    from stylebench.metrics.asr.backends import SPEC

    extra = ([variant] if variant else []) + ([dict(machine)] if machine else [])
    return fingerprint("asr", backend, model, f"v{SPEC.version}", *extra)


def transcript_fp(
    asr: tuple[str, str],
    reply_sha: str,
    variant: str = "",
    machine: Mapping[str, str] | None = None,
) -> str:
    """The fingerprint of the transcript of one reply by one ASR."""
    return fingerprint(asr_fp(*asr, variant, machine), reply_sha)


class TranscribeStage:
    """One unit per ok reply, or per ``batch_size`` of them; the ASR is built on first use, once."""

    records: ClassVar[RecordKind[TranscriptRecord]] = TRANSCRIPTS
    name: ClassVar[str] = TRANSCRIPTS.name
    errors: ClassVar[tuple[type[BaseException], ...]] = (AudioError, ValueError, RuntimeError)
    unit: ClassVar[str] = "reply"

    def __init__(
        self,
        store: RunStore,
        replies: Mapping[Key, RespondRecord],
        lang_of: Mapping[str, str],
        asr: tuple[str, str],
        get_asr: Callable[[], Any],
        *,
        spec: AsrSpec | None = None,
        batch_size: int = 1,
        strict: bool = False,
        machine: Mapping[str, str] | None = None,
    ) -> None:
        self.store, self.replies, self.lang_of = store, replies, lang_of
        self.asr, self.get_asr, self.batch_size, self.strict = asr, get_asr, batch_size, strict
        self.resident = spec or AsrSpec(*asr)
        self.variant = asr_variant(self.resident.device, batch_size)
        # this process's CPU code path, unless the caller names the one the records were made on
        self.machine = (
            dict(machine) if machine is not None else asr_machine(asr[0], self.resident.device)
        )
        if batch_size > 1:
            self.unit = "batch"  # type: ignore[misc]

    @property
    def concurrency(self) -> int:
        """Units the built ASR can take at once from threads (its ``concurrency``; 1 for a
        backend without one, and with batches). Builds the ASR: ask only when there is work."""
        if self.batch_size > 1:
            return 1
        return max(1, int(getattr(self.get_asr(), "concurrency", 1)))

    def holding(self) -> contextlib.AbstractContextManager[None]:
        """Held by the thread that computes this stage's units on threads, around them all: one
        BLAS thread for the whole stage (:mod:`stylebench.metrics.asr.threads` says why a decode
        thread cannot take and give back that limit itself)."""
        from stylebench.metrics.asr.threads import one_blas_thread

        return one_blas_thread()

    def plan(self) -> list[Unit]:
        # replies by audio bytes and language (decoded in it), in reply order
        audios: dict[tuple[str, str], list[tuple[Key, Any]]] = {}
        for k, r in self.replies.items():
            if r.status == "ok":
                audios.setdefault((r.sha256, self.lang_of[r.sample_id]), []).append((k, r))
        groups = list(audios.values())
        units = []
        for i in range(0, len(groups), self.batch_size):
            part = [kr for group in groups[i : i + self.batch_size] for kr in group]
            uid = f"{part[0][0][0]}/{part[0][0][1]}" + (
                f"+{len(part) - 1}" if len(part) > 1 else ""
            )
            units.append(
                Unit(
                    uid,
                    {
                        k: transcript_fp(self.asr, r.sha256, self.variant, self.machine)
                        for k, r in part
                    },
                    payload=part,
                )
            )
        return units

    def job(self, unit: Unit, done: Mapping[Key, TranscriptRecord]) -> TranscribeJob:
        items = tuple(
            (
                k,
                unit.fps[k],
                Blob(f"reply/{Path(r.audio).name}", path=str(self.store.root / r.audio)),
                self.lang_of[r.sample_id],
            )
            for k, r in unit.payload
            if not (done.get(k) is not None and done[k].status == "ok")
        )
        return TranscribeJob(items, self.batch_size, self.strict, self.machine)

    def accept(
        self, unit: Unit, outcomes: Iterable[TranscriptRecord], done: Mapping[Key, TranscriptRecord]
    ) -> Iterable[TranscriptRecord]:
        return outcomes

    def compute(
        self, unit: Unit, done: Mapping[Key, TranscriptRecord]
    ) -> Iterator[TranscriptRecord]:
        return self.job(unit, done).run(self.get_asr())


@dataclass(frozen=True)
class TranscribeJob:
    """Transcripts of some replies, computable wherever the ASR model lives."""

    items: tuple[tuple[Key, str, Blob, str], ...]  # (key, fingerprint, audio, language)
    batch_size: int = 1
    strict: bool = False
    machine: Mapping[str, str] | None = None  # the CPU code path the fingerprints name

    def shipped(self) -> TranscribeJob:
        return replace(
            self, items=tuple((k, fp, b.shipped(), lang) for k, fp, b, lang in self.items)
        )

    def run(self, asr: Any, where: Mapping[str, Any] | None = None) -> Iterator[TranscriptRecord]:
        """Yield one record per item; with one item its errors propagate (the stage's error
        record, as before batching), with several an unreadable reply is its own error record."""
        raw = {PROVENANCE: dict(where)} if where else {}
        if self.machine and getattr(asr, "backend", None) == "faster-whisper":
            here = asr_machine("faster-whisper", getattr(asr, "device", "cpu"))
            if here != dict(self.machine):  # e.g. an ASR actor on a node with another ISA
                diff = ", ".join(
                    f"{k}: {self.machine.get(k)!r} here {here.get(k)!r}"
                    for k in sorted(set(here) | set(self.machine))
                    if here.get(k) != self.machine.get(k)
                )
                raise RuntimeError(
                    f"the ASR runs on another CPU code path than its records' key names ({diff}); transcribe where the run was planned, or on machines of one kind"
                )
        with tempfile.TemporaryDirectory(prefix="stylebench-job-") as tmp:
            loaded, failed = [], {}
            for key, fp, blob, lang in self.items:
                try:
                    wave, sr = load_audio(blob.local(tmp), target_sr=16000)
                    loaded.append((key, fp, wave, sr, lang))
                except AudioError as exc:
                    if self.strict or len(self.items) == 1:
                        raise
                    failed[key] = TranscriptRecord(
                        *key, "error", fp, error=f"{type(exc).__name__}: {exc}", raw=raw
                    )
        from stylebench.metrics.asr.threads import one_blas_thread

        firsts: dict[tuple[str, str], Any] = {}  # the first reply of each audio and language
        for item in loaded:
            firsts.setdefault((item[1], item[4]), item)
        batch = getattr(asr, "transcribe_batch", None)
        with one_blas_thread():  # the same transcript whatever the core count
            if self.batch_size > 1 and batch is not None and len(firsts) > 1:
                trs = batch(
                    [(w, sr, lang) for _, _, w, sr, lang in firsts.values()], self.batch_size
                )
            else:
                trs = [asr.transcribe(w, sr, lang) for _, _, w, sr, lang in firsts.values()]
        made = {ab: (it[0], tr) for (ab, it), tr in zip(firsts.items(), trs, strict=True)}
        done = {}
        for key, fp, _, _, lang in loaded:  # a reply with the bytes of another takes its transcript
            first, tr = made[(fp, lang)]
            same = {"same_audio_as": [*first]} if first != key else {}
            done[key] = _record(key, fp, tr, {**raw, **same})
        for key, _, _, _ in self.items:
            yield done[key] if key in done else failed[key]


def _record(key: Key, fp: str, tr: Any, raw: dict[str, Any]) -> TranscriptRecord:
    return TranscriptRecord(
        *key,
        "ok",
        fp,
        text=tr.text,
        lang=tr.lang,
        words=[[w.text, round(w.start, 3), round(w.end, 3)] for w in tr.words],
        backend=tr.backend,
        model=tr.model,
        flags=list(tr.flags),
        spoken_lang=tr.spoken_lang,
        spoken_lang_p=tr.spoken_lang_p,
        declared_lang_p=tr.declared_lang_p,
        mean_logprob=tr.mean_logprob,
        unsure_word_share=tr.unsure_word_share,
        unsure_stretch_share=tr.unsure_stretch_share,
        raw=raw,
    )


def current_transcripts(
    replies: Mapping[Key, RespondRecord],
    transcripts: Mapping[Key, TranscriptRecord],
    asr: tuple[str, str] | None,
    machine: Mapping[str, str] | None = None,
) -> dict[Key, TranscriptRecord]:
    """The transcripts (ok or error) of the current replies by this ASR; none without ASR."""
    if asr is None:
        return {}
    out = {}
    for k, r in replies.items():
        t = transcripts.get(k)
        fp = transcript_fp(asr, r.sha256, machine=machine) if r.status == "ok" else None
        if t is not None and t.fp == fp:
            out[k] = t
    return out
